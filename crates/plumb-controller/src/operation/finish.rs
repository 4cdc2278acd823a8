//! The end of an operation: the request cleared, the result recorded with a fresh observation,
//! history appended, and the events of its end and of the status changes it brought.

use std::sync::Arc;
use std::time::Duration;

use plumb_app::compare::{CompareOptions, Comparison, Refresh};
use plumb_app::status::now;
use plumb_app::{Written, chain};
use plumb_model::application::{Application, OperationPhase};
use plumb_sync::SyncOutcome;
use serde_json::{Value, json};

use super::attempt::sync_result;
use super::history::{history_entry, history_with};
use crate::shared::{Shared, app_key};

/// How the operation ended.
pub(super) struct End {
    pub(super) outcome: SyncOutcome,
    pub(super) message: String,
    pub(super) retries: u64,
    pub(super) cmp: Option<Comparison>,
    /// What the sync wrote: the comparison recorded with the result reads it.
    pub(super) written: Written,
    /// When the operation was asked for (see [`drive`]).
    pub(super) asked: std::time::Instant,
}

/// How long the end of an operation is retried while the API server does not answer.
const PERSIST_FOR: Duration = Duration::from_secs(120);

/// Runs an API write of an operation's end, retrying while the failure is transient (the API
/// server or etcd restarting, 5xx, 429, no connection). Giving up at once would leave the
/// operation `Running`, which the next reconcile fails as interrupted: the outcome of a sync that
/// did apply its objects would be lost.
async fn persist<F, Fut>(name: &str, what: &str, mut write: F) -> plumb_app::Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = plumb_app::Result<()>>,
{
    let deadline = std::time::Instant::now() + PERSIST_FOR;
    let mut delay = Duration::from_millis(500);
    loop {
        match write().await {
            Ok(()) => return Ok(()),
            Err(e) if is_transient(&e) && std::time::Instant::now() + delay < deadline => {
                tracing::warn!(app = %name, "{what} (retrying in {delay:?}): {}", chain(&e));
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(10));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether a failed API write may succeed when tried again unchanged.
fn is_transient(e: &plumb_app::Error) -> bool {
    match e {
        plumb_app::Error::Api { source, .. } => match source.as_ref() {
            kube::Error::Api(status) => status.code >= 500 || status.code == 429,
            // No answer at all: connection refused or reset, TLS, timeouts.
            kube::Error::HyperError(_) | kube::Error::Service(_) => true,
            _ => false,
        },
        _ => false,
    }
}

/// Records the end: the request is cleared first (a crash in between leaves a Running state,
/// failed as interrupted, never a request that runs again), then the result is written with a
/// fresh comparison, so whoever waits for the operation sees the status it produced.
pub(super) async fn finish(
    shared: &Arc<Shared>,
    app: &Application,
    project: &plumb_model::application::AppProject,
    cluster: &plumb_app::Cluster,
    started_at: &str,
    end: End,
) {
    let key = app_key(app);
    let name = key.as_str();
    let cleared = persist(name, "clearing the operation", || {
        shared.clear_operation(app)
    })
    .await;
    if let Err(e) = cleared {
        tracing::warn!(app = %name, "clearing the operation: {}", chain(&e));
    }
    let engines = shared.engines();
    let finished_at = now();
    let state = final_state(app, &end, started_at, &finished_at);
    // The status recorded with the result stands until the next poll: it must not come from a
    // listing that predates a push (a rollback would read Synced against an old HEAD).
    let opts = CompareOptions {
        refs_asked_at: Some(end.asked),
        ..CompareOptions::for_project(project, Refresh::Latest)
    };
    let look = plumb_app::Target {
        project,
        cluster,
        engines: &engines,
        renderer: &shared.renderer,
    };
    // What the sync applied is read from its answers (the live cache may not have seen the
    // writes yet), what it pruned or ran as hooks from the API server, the rest from the cache.
    let observation = plumb_app::observe(app, look, &opts, Some(&end.written)).await;
    let codes = observation.codes();
    let mut fields = observation.status(app);
    // The transitions this write records are announced against the status as last written
    // (reconciles' writes are paced while the operation runs, so this may be the first to
    // record them).
    let before = shared.read_app(&key).await.ok().flatten();
    fields.operation_state = Some(state);
    fields.history = deployment(app, &end, started_at, &finished_at);
    let written = persist(name, "recording the operation result", || {
        shared.write_status(app, fields.clone())
    })
    .await;
    if let Err(e) = &written {
        tracing::warn!(app = %name, "recording the operation result: {}", chain(e));
    }
    announce_end(shared, app, &end).await;
    // As Argo CD: the operation's end first, then the status changes it brought.
    if written.is_ok() {
        let before = before.as_ref().unwrap_or(app);
        shared
            .events
            .status_changes(before, &codes.0, &codes.1)
            .await;
    }
}

/// The operation's final `operationState`.
fn final_state(app: &Application, end: &End, started_at: &str, finished_at: &str) -> Value {
    let op = app.operation.clone().unwrap_or_default();
    let mut state = json!({
        "operation": op,
        "phase": end.outcome.phase.as_str(),
        "message": end.message,
        "startedAt": started_at,
        "finishedAt": finished_at,
        "retryCount": (end.retries > 0).then_some(end.retries),
    });
    if let Some(c) = &end.cmp {
        state["syncResult"] = sync_result(app, c, &end.outcome);
    }
    state
}

/// The history with this operation appended: Argo records a deployment only for a successful,
/// full, real sync (`None`: history unchanged).
fn deployment(
    app: &Application,
    end: &End,
    started_at: &str,
    finished_at: &str,
) -> Option<Vec<plumb_model::application::RevisionHistory>> {
    let sync = app
        .operation
        .as_ref()
        .and_then(|o| o.sync.clone())
        .unwrap_or_default();
    let dry_run = sync.dry_run.unwrap_or(false);
    let selective = sync.resources.as_ref().is_some_and(|r| !r.is_empty());
    if end.outcome.phase != OperationPhase::Succeeded || dry_run || selective {
        return None;
    }
    let c = end.cmp.as_ref()?;
    let entry = history_entry(app, c, started_at, finished_at);
    Some(history_with(app, entry))
}

/// The event of the operation's end.
async fn announce_end(shared: &Shared, app: &Application, end: &End) {
    let revision = end
        .cmp
        .as_ref()
        .map(|c| c.revision.clone())
        .unwrap_or_default();
    if end.outcome.phase == OperationPhase::Succeeded {
        shared
            .events
            .normal(
                app,
                "OperationCompleted",
                format!("Sync operation to {revision} succeeded"),
            )
            .await;
    } else {
        let message = &end.message;
        shared
            .events
            .warning(
                app,
                "OperationCompleted",
                format!("Sync operation to {revision} failed: {message}"),
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16) -> plumb_app::Error {
        plumb_app::Error::Api {
            what: "writing status".into(),
            source: Box::new(kube::Error::Api(Box::new(kube::core::Status {
                code,
                ..Default::default()
            }))),
        }
    }

    #[test]
    fn only_unanswered_and_server_side_failures_are_retried() {
        assert!(is_transient(&api_error(503)));
        assert!(is_transient(&api_error(500)));
        assert!(is_transient(&api_error(429)));
        assert!(
            !is_transient(&api_error(422)),
            "an invalid write fails the same again"
        );
        assert!(!is_transient(&api_error(404)));
        assert!(!is_transient(&plumb_app::Error::Task("x".into())));
    }

    #[tokio::test]
    async fn persist_retries_a_transient_failure_until_it_lands() {
        let tries = std::sync::atomic::AtomicU32::new(0);
        let r = persist("app", "writing", || {
            let n = tries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move { if n < 3 { Err(api_error(503)) } else { Ok(()) } }
        })
        .await;
        assert!(r.is_ok());
        assert_eq!(tries.load(std::sync::atomic::Ordering::Relaxed), 4);
        let tries = std::sync::atomic::AtomicU32::new(0);
        let r = persist("app", "writing", || {
            tries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async { Err(api_error(422)) }
        })
        .await;
        assert!(r.is_err());
        assert_eq!(
            tries.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "not retried"
        );
    }
}
