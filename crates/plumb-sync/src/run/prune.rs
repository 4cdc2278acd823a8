//! Pruning: the brake on mass deletion, whether an extra object may be deleted (`Prune=false`,
//! `prune`, `Prune=confirm`) and with which propagation policy.

use super::*;

impl Run<'_, '_> {
    /// Whether a prune is skipped, and why (`None`: it may proceed).
    pub(super) fn prune_verdict(&self, t: &PlannedTask) -> Option<(ResultCode, String)> {
        let own = t
            .live
            .as_ref()
            .map(SyncOptions::of_object)
            .unwrap_or_default();
        if own
            .get("Prune")
            .is_some_and(|v| v.eq_ignore_ascii_case("false"))
        {
            Some((ResultCode::PruneSkipped, "ignored (no prune)".into()))
        } else if !self.req.prune {
            Some((
                ResultCode::PruneSkipped,
                "ignored (requires pruning)".into(),
            ))
        } else {
            None
        }
    }

    /// The brake on mass deletion, before any write: when the prunes this operation would
    /// carry out exceed it, every one is recorded as skipped and the operation fails with the
    /// count and how to proceed.
    pub(super) fn brake(&mut self, tasks: &[PlannedTask]) -> Option<SyncOutcome> {
        let brake = self.req.prune_brake.clone()?;
        if self.req.dry_run {
            return None;
        }
        let prunes: Vec<PlannedTask> = tasks
            .iter()
            .filter(|t| t.is_prune() && self.prune_verdict(t).is_none())
            .cloned()
            .collect();
        let stopped = brake.brake.check(prunes.len(), brake.live_objects).err()?;
        for t in &prunes {
            let i = self.record(
                t,
                Some(ResultCode::PruneSkipped),
                "not pruned: the mass-deletion brake stopped the operation".into(),
            );
            self.results[i].finished_at = Some(now());
            self.results[i].hook_phase = Some(OperationPhase::Succeeded);
        }
        let message = stopped.message(&self.req.app_name);
        tracing::warn!(app = %self.req.app_name, "{message}");
        let mut out = self.outcome(OperationPhase::Failed, &message);
        out.braked = true;
        Some(out)
    }

    /// Prunes one object; returns false when the deletion failed.
    pub(super) async fn prune(&mut self, e: &mut Exec) -> bool {
        let task = e.task.clone();
        if let Some((status, message)) = self.prune_verdict(&task) {
            let i = self.record(&task, Some(status), message);
            self.results[i].finished_at = Some(now());
            // Argo CD: a skipped prune is a finished task.
            self.results[i].hook_phase = Some(OperationPhase::Succeeded);
            e.result = Some(i);
            e.state = State::Succeeded;
            self.report();
            return true;
        }
        let confirm = task
            .options
            .get("Prune")
            .is_some_and(|v| v.eq_ignore_ascii_case("confirm"));
        if confirm && !self.ctx.control.borrow().prune_confirmed {
            self.set_message(format!(
                "waiting for pruning confirmation of {}",
                group_kind_name(&task.key)
            ));
            let mut control = self.ctx.control.clone();
            let _ = control.wait_for(|c| c.prune_confirmed || c.terminate).await;
            if self.terminating() {
                return true;
            }
        }
        let policy = propagation(&task.options);
        let (status, message, ok) = match self.ctx.applier.delete(&task.key, policy).await {
            Ok(Deleted::Gone | Deleted::Pending(_) | Deleted::NotFound) => {
                (ResultCode::Pruned, "pruned".to_string(), true)
            }
            Err(err) => (ResultCode::SyncFailed, error_text(&err), false),
        };
        let i = self.record(&task, Some(status), message);
        self.results[i].finished_at = Some(now());
        self.results[i].hook_phase = Some(if ok {
            OperationPhase::Succeeded
        } else {
            OperationPhase::Failed
        });
        e.result = Some(i);
        e.state = if ok { State::Succeeded } else { State::Failed };
        self.report();
        ok
    }
}

pub(super) fn propagation(options: &SyncOptions) -> PropagationPolicy {
    match options
        .get("PrunePropagationPolicy")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("background") => PropagationPolicy::Background,
        Some("orphan") => PropagationPolicy::Orphan,
        _ => PropagationPolicy::Foreground,
    }
}
