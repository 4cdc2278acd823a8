//! Hooks: the previous object deleted before a hook is created (`BeforeHookCreation`), the hook
//! finalizer that keeps a finished hook until its result is recorded, delete policies once it
//! finished, and the SyncFail hooks run after a failure.

use super::*;

impl Run<'_, '_> {
    /// A finished hook: its result is recorded, so the finalizer goes, and the hook is deleted
    /// when its policy says so.
    pub(super) async fn finish_hook(&mut self, e: &Exec) {
        let Some(desired) = &e.task.desired else {
            return;
        };
        if let Err(msg) = remove_hook_finalizer(self.ctx.applier, &e.task.key).await {
            tracing::warn!(key = %e.task.key, "removing the hook finalizer: {msg}");
        }
        let policies = delete_policies(desired);
        let delete = (e.state == State::Succeeded
            && policies.contains(&DeletePolicy::HookSucceeded))
            || (e.state == State::Failed && policies.contains(&DeletePolicy::HookFailed));
        if delete
            && let Err(err) = self
                .ctx
                .applier
                .delete(&e.task.key, PropagationPolicy::Background)
                .await
        {
            tracing::warn!(key = %e.task.key, "deleting a finished hook: {}", error_text(&err));
        }
    }

    /// Deletes the object a hook left behind last time (`BeforeHookCreation`, the default)
    /// and waits until it is gone.
    pub(super) async fn remove_previous_hook(&mut self, e: &Exec) -> Result<(), String> {
        let Some(desired) = &e.task.desired else {
            return Ok(());
        };
        if !delete_policies(desired).contains(&DeletePolicy::BeforeHookCreation) {
            return Ok(());
        }
        let live = self
            .ctx
            .applier
            .get(&e.task.key)
            .await
            .map_err(|err| error_text(&err))?;
        if live.is_none() {
            return Ok(());
        }
        self.set_message(format!(
            "waiting for deletion of hook {}",
            group_kind_name(&e.task.key)
        ));
        remove_hook_finalizer(self.ctx.applier, &e.task.key).await?;
        // A terminate request does not wait for the old hook to go.
        let mut control = self.ctx.control.clone();
        tokio::select! {
            r = delete_and_wait(self.ctx.applier, &e.task.key, PropagationPolicy::Foreground) => r,
            _ = control.wait_for(|c| c.terminate) => Err("terminated while the previous hook was being deleted".to_string()),
        }
    }

    /// Runs the SyncFail hooks after a failure, then fails the operation with `message`.
    pub(super) async fn run_fail_hooks(
        &mut self,
        hooks: Vec<PlannedTask>,
        message: &'static str,
    ) -> SyncOutcome {
        if !hooks.is_empty() && !self.terminating() {
            let (mut execs, steps) = schedule(hooks);
            for in_step in &steps {
                if self.run_step(&mut execs, in_step, false).await.is_some() || self.terminating() {
                    break;
                }
            }
        }
        self.outcome(OperationPhase::Failed, message)
    }
}
