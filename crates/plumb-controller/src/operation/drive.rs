//! Running an operation to its end: attempts, retries with backoff, termination, then the
//! result recorded.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plumb_app::compare::Comparison;
use plumb_app::status::StatusPatch;
use plumb_app::{Cluster, Written, chain};
use plumb_model::application::{AppProject, Application, OperationPhase, RetryStrategy};
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
    project: AppProject,
    started_at: String,
    control: watch::Receiver<Control>,
    asked: Instant,
) {
    let name = app_key(&app);
    let op_started = Instant::now();
    let Some(cluster) = shared.clusters.of(&app) else {
        shared.operations.end(&name);
        return;
    };
    let run = Run {
        shared: &shared,
        app: &app,
        project: &project,
        cluster: &cluster,
        began: Began {
            at: &started_at,
            asked,
        },
        control: &control,
        written: Mutex::new(Written::default()),
    };
    let (outcome, cmp, retries) = attempts(&run).await;
    let end = end_of(outcome, cmp, retries, run.written, asked);
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
    shared.operations.end(&name);
    shared.queue.push(&name);
}

/// One running operation, as every attempt of it sees it.
struct Run<'a> {
    shared: &'a Arc<Shared>,
    app: &'a Application,
    project: &'a AppProject,
    cluster: &'a Cluster,
    began: Began<'a>,
    control: &'a watch::Receiver<Control>,
    /// What every attempt wrote, for the comparison that records the result.
    written: Mutex<Written>,
}

/// Attempts until one succeeds, the retries allowed run out, or a terminate request stops it;
/// returns the last outcome, its comparison and the number of retries made.
async fn attempts(run: &Run<'_>) -> (SyncOutcome, Option<Comparison>, u64) {
    let op = run.app.operation.clone().unwrap_or_default();
    let retry: Option<RetryStrategy> = op.retry.clone().or_else(|| {
        run.app
            .spec
            .sync_policy
            .as_ref()
            .and_then(|p| p.retry.clone())
    });
    let mut retries: u64 = 0;
    loop {
        let (outcome, cmp) = attempt(
            run.shared,
            run.app,
            run.project,
            run.cluster,
            run.began,
            run.control,
            &run.written,
        )
        .await;
        let Some(strategy) = retry_of(retry.as_ref(), retries, &outcome, run.control) else {
            return (outcome, cmp, retries);
        };
        retries += 1;
        let wait =
            plumb_sync::retry::backoff(strategy, u32::try_from(retries - 1).unwrap_or(u32::MAX));
        record_retry(run, &outcome, cmp.as_ref(), retries, wait).await;
        if pause(run.control, wait).await {
            let outcome = SyncOutcome {
                phase: OperationPhase::Failed,
                message: "Operation terminated".into(),
                results: outcome.results,
                terminated: true,
                braked: false,
            };
            return (outcome, cmp, retries);
        }
    }
}

/// The retry strategy when a failed attempt may be retried (the limit not reached, not
/// terminated, not held by the prune brake).
fn retry_of<'r>(
    retry: Option<&'r RetryStrategy>,
    retries: u64,
    outcome: &SyncOutcome,
    control: &watch::Receiver<Control>,
) -> Option<&'r RetryStrategy> {
    let failed = matches!(
        outcome.phase,
        OperationPhase::Failed | OperationPhase::Error
    );
    let allowed = retry.is_some_and(|r| match plumb_sync::retry::limit(r) {
        None => true,
        Some(limit) => retries < limit,
    }) && retry.is_some_and(|r| r.limit.unwrap_or(0) != 0);
    if !failed || outcome.terminated || outcome.braked || !allowed || control.borrow().terminate {
        return None;
    }
    retry
}

/// Writes the retry about to be made: its message (when it starts) and the last attempt's result.
async fn record_retry(
    run: &Run<'_>,
    outcome: &SyncOutcome,
    cmp: Option<&Comparison>,
    retries: u64,
    wait: Duration,
) {
    let at = jiff::Zoned::now()
        .checked_add(jiff::SignedDuration::try_from(wait).unwrap_or_default())
        .unwrap_or_else(|_| jiff::Zoned::now());
    let message = plumb_sync::retry::retrying_message(&outcome.message, retries, &at);
    let mut state = json!({"message": message, "retryCount": retries});
    if let Some(c) = cmp {
        state["syncResult"] = sync_result(run.app, c, outcome);
    }
    let fields = StatusPatch::operation_state(state);
    if let Err(e) = run.shared.write_status(run.app, fields).await {
        tracing::warn!(app = %app_key(run.app), "recording a retry: {}", chain(&e));
    }
}

/// Waits `wait` before the next attempt; `true` when a terminate request came meanwhile.
async fn pause(control: &watch::Receiver<Control>, wait: Duration) -> bool {
    let mut c = control.clone();
    tokio::select! {
        _ = tokio::time::sleep(wait) => {}
        _ = c.wait_for(|c| c.terminate) => {}
    }
    control.borrow().terminate
}

/// The end to record: the message (with the retries made), and every object the attempts
/// touched marked in what was written.
fn end_of(
    outcome: SyncOutcome,
    cmp: Option<Comparison>,
    retries: u64,
    written: Mutex<Written>,
    asked: Instant,
) -> End {
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
    End {
        outcome,
        message,
        retries,
        cmp,
        written,
        asked,
    }
}
