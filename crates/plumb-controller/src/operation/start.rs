//! Starting an operation: the `Running` state recorded (with the status a reconcile found, in
//! one write), the operation spawned onto a task of its own; or refused before it starts (a
//! sync window), or failed when a restart interrupted it.

use std::sync::Arc;
use std::time::Instant;

use plumb_app::Result;
use plumb_app::status::{self, StatusPatch};
use plumb_model::application::{AppProject, Application};
use serde_json::{Value, json};

use super::drive::drive;
use super::state::{INTERRUPTED, started};
use crate::shared::{Shared, app_key};

/// Interrupted by a restart: never run twice, fail it visibly.
pub(crate) async fn fail_interrupted(
    shared: &Shared,
    app: &Application,
    running_state: Option<&plumb_model::application::OperationState>,
) -> Result<()> {
    if app.operation.is_some() {
        shared.clear_operation(app).await?;
    }
    let mut state = serde_json::to_value(running_state).unwrap_or(Value::Null);
    state["phase"] = json!("Failed");
    state["message"] = json!(INTERRUPTED);
    state["finishedAt"] = json!(status::now());
    shared
        .write_status(app, StatusPatch::operation_state(state))
        .await
}

/// Refused before it starts, as Argo CD's API server refuses the request: nothing waits
/// silently for a window to open.
pub(crate) async fn refuse_in_window(
    shared: &Shared,
    app: &Application,
    reason: &str,
) -> Result<()> {
    let now = status::now();
    shared
        .write_status(app, StatusPatch::operation_state(Value::Null))
        .await?;
    let refused = StatusPatch::operation_state(json!({
        "operation": app.operation, "phase": "Failed",
        "message": format!("Sync operation blocked by sync window: {reason}"),
        "startedAt": now, "finishedAt": now,
    }));
    shared.clear_operation(app).await?;
    shared.write_status(app, refused).await?;
    shared
        .events
        .warning(
            app,
            "OperationCompleted",
            format!("Sync operation blocked by sync window: {reason}"),
        )
        .await;
    Ok(())
}

/// Records the operation `Running` (with `observation`, the status a reconcile found, in the
/// same write) and starts it in a task of its own. `claimed`: the request itself named this
/// replica the operation's owner (an automated sync requested by this reconcile).
pub(crate) async fn start_sync(
    shared: &Arc<Shared>,
    app: &Application,
    project: &AppProject,
    observation: StatusPatch,
    claimed: bool,
) -> Result<()> {
    let key = app_key(app);
    let started_at = status::now();
    // A plain merge patch would blend the new operation into the previous one's record: one
    // patch clears what the new record does not hold.
    let previous = app
        .status
        .as_ref()
        .and_then(|s| s.operation_state.as_ref())
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    let fields = StatusPatch {
        operation_state: Some(status::replacing(&previous, &started(app, &started_at))),
        ..observation
    };
    if !crate::sharding::ownership::record_start(shared, app, fields, claimed).await? {
        // Another replica wrote first (a hand-over between replicas): look again shortly.
        shared
            .queue
            .push_after(&key, std::time::Duration::from_secs(1));
        return Ok(());
    }
    let rev = app
        .operation
        .as_ref()
        .and_then(|o| o.sync.as_ref())
        .and_then(|s| s.revision.clone())
        .or(app
            .sources()
            .first()
            .and_then(|s| s.target_revision.clone()))
        .unwrap_or_else(|| "HEAD".into());
    announce_start(shared, app, &rev).await;
    let control = shared.operations.start(&key);
    let asked = Instant::now();
    let (shared, app, project) = (shared.clone(), app.clone(), project.clone());
    tokio::spawn(async move {
        // Waits for an operation processor; a terminate request does not wait for one (the
        // operation then ends at once as terminated, having applied nothing).
        let mut terminated = control.clone();
        let _slot = tokio::select! {
            slot = shared.operations.slots.clone().acquire_owned() => slot.ok(),
            _ = terminated.wait_for(|c| c.terminate) => None,
        };
        shared.operations.applying(&app_key(&app));
        let (namespace, name, project_name) = (
            app.namespace().to_string(),
            app.name().to_string(),
            app.spec.project.clone(),
        );
        plumb_app::k8s_requests::for_app(
            &namespace,
            &name,
            &project_name,
            drive(shared, app, project, started_at, control, asked),
        )
        .await;
    });
    Ok(())
}

/// The request's event, as Argo CD's API server posts it when a user asks for a sync (the
/// CLI in core mode and `plumb server` leave it to the controller). An automated sync has
/// posted its own (`Initiated automated sync to '<rev>'`), and Argo CD's controller posts
/// nothing more when the operation starts.
async fn announce_start(shared: &Shared, app: &Application, rev: &str) {
    let op = app.operation.as_ref();
    if op
        .and_then(|o| o.initiated_by.as_ref())
        .and_then(|i| i.automated)
        .unwrap_or(false)
    {
        return;
    }
    let partial = op
        .and_then(|o| o.sync.as_ref())
        .and_then(|s| s.resources.as_ref())
        .is_some_and(|r| !r.is_empty());
    let partial = if partial { "partial " } else { "" };
    shared
        .events
        .normal(
            app,
            "OperationStarted",
            format!("initiated {partial}sync to {rev}"),
        )
        .await;
}
