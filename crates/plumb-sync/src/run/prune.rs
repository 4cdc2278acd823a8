//! Pruning: whether an extra object may be deleted (`Prune=false`, `prune`, `Prune=confirm`) and
//! with which propagation policy.

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

    /// Prunes one object; returns false when the deletion failed.
    pub(super) async fn prune(&mut self, e: &mut Exec) -> bool {
        let task = e.task.clone();
        if let Some((status, message)) = self.prune_verdict(&task) {
            let i = self.record(&task, Some(status), message);
            self.results[i].finished_at = Some(now());
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
