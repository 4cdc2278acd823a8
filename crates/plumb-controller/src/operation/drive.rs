//! Running an operation to its end: attempts, retries with backoff, termination, then the
//! result recorded.

use std::sync::Arc;

use plumb_app::status::StatusPatch;
use plumb_app::{Written, chain};
use plumb_model::application::{Application, OperationPhase, RetryStrategy};
use plumb_sync::{Control, SyncOutcome};
use serde_json::json;
use tokio::sync::watch;

use super::attempt::{Began, attempt, sync_result};
use super::finish::{End, finish};
use crate::metrics::Timing;
use crate::shared::{Shared, app_key};

/// Runs the requested operation to its end (with retries) and records the result; the caller
/// has written the `Running` state. `asked`: when the operation was started here; refs come from
/// a Git listing begun since.
pub(super) async fn drive(
    shared: Arc<Shared>,
    app: Application,
    project: plumb_model::application::AppProject,
    started_at: String,
    control: watch::Receiver<Control>,
    asked: std::time::Instant,
) {
    let name = app_key(&app);
    let op_started = std::time::Instant::now();
    let Some(cluster) = shared.cluster_for(&app) else {
        shared.end_operation(&name);
        return;
    };
    let op = app.operation.clone().unwrap_or_default();
    let retry: Option<RetryStrategy> = op
        .retry
        .clone()
        .or_else(|| app.spec.sync_policy.as_ref().and_then(|p| p.retry.clone()));
    let mut retries: u64 = 0;
    // What every attempt wrote, for the comparison that records the result.
    let written = std::sync::Mutex::new(Written::default());
    let (outcome, cmp) = loop {
        let (outcome, cmp) = attempt(
            &shared,
            &app,
            &project,
            &cluster,
            Began {
                at: &started_at,
                asked,
            },
            &control,
            &written,
        )
        .await;
        let failed = matches!(
            outcome.phase,
            OperationPhase::Failed | OperationPhase::Error
        );
        let allowed = retry
            .as_ref()
            .is_some_and(|r| match plumb_sync::retry::limit(r) {
                None => true,
                Some(limit) => retries < limit,
            })
            && retry.as_ref().is_some_and(|r| r.limit.unwrap_or(0) != 0);
        if !failed || outcome.terminated || outcome.braked || !allowed || control.borrow().terminate
        {
            break (outcome, cmp);
        }
        let Some(strategy) = retry.as_ref() else {
            break (outcome, cmp);
        };
        retries += 1;
        let wait =
            plumb_sync::retry::backoff(strategy, u32::try_from(retries - 1).unwrap_or(u32::MAX));
        let at = jiff::Zoned::now()
            .checked_add(jiff::SignedDuration::try_from(wait).unwrap_or_default())
            .unwrap_or_else(|_| jiff::Zoned::now());
        let message = plumb_sync::retry::retrying_message(&outcome.message, retries, &at);
        let mut state = json!({"message": message, "retryCount": retries});
        if let Some(c) = &cmp {
            state["syncResult"] = sync_result(&app, c, &outcome);
        }
        let fields = StatusPatch::operation_state(state);
        if let Err(e) = shared.write_status(&app, fields).await {
            tracing::warn!(app = %name, "recording a retry: {}", chain(&e));
        }
        let mut c = control.clone();
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = c.wait_for(|c| c.terminate) => {}
        }
        if control.borrow().terminate {
            let outcome = SyncOutcome {
                phase: OperationPhase::Failed,
                message: "Operation terminated".into(),
                results: outcome.results,
                terminated: true,
                braked: false,
            };
            break (outcome, cmp);
        }
    };
    let message =
        if retries > 0 && outcome.phase != OperationPhase::Succeeded && !outcome.terminated {
            plumb_sync::retry::retried_message(&outcome.message, retries)
        } else {
            outcome.message.clone()
        };
    let mut written = written.into_inner().unwrap_or_else(|e| e.into_inner());
    for r in &outcome.results {
        written.touched(plumb_model::ResourceKey::new(
            r.group.clone(),
            r.kind.clone(),
            r.namespace.clone(),
            r.name.clone(),
        ));
    }
    let end = End {
        outcome,
        message,
        retries,
        cmp,
        written,
        asked,
    };
    let phase = end.outcome.phase.as_str().to_string();
    finish(&shared, &app, &project, &cluster, &started_at, end).await;
    shared.metrics.observe(Timing::Sync, op_started.elapsed());
    shared.metrics.sync_finished(
        app.namespace(),
        app.name(),
        &app.spec.project,
        &phase,
        app.spec.destination.server.as_deref().unwrap_or_default(),
    );
    shared.end_operation(&name);
    shared.requeue(&name);
}
