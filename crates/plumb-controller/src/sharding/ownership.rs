//! Who runs an Application's operation when several replicas share the work: the replica that
//! started it, recorded durably on the Application before it starts.
//!
//! Starting is two writes, the second guarded by the resourceVersion the first returned: the
//! claim (the annotation `plumb.dev/operation-owner` naming this replica, guarded by the version
//! the decision was made from; an automated sync's request carries it in the same write), then
//! the `Running` state. Two replicas that both believe they own the Application (the moments
//! around a hand-over) cannot both get through: whoever writes second gets a conflict and
//! starts nothing. The annotation stays after the end; it is read only while
//! the recorded state is still running, to tell a live owner (leave it alone: it finishes and
//! records its own result) from a dead one (the operation is failed as interrupted, never run
//! again, the rule a restarted single controller already follows).

use kube::api::{Patch, PatchParams};
use plumb_model::application::Application;
use serde_json::{Value, json};

use crate::shared::Shared;
use plumb_app::status::StatusPatch;
use plumb_app::{Error, Result};

/// The annotation naming the replica (its Lease holder identity) that started the operation
/// recorded in `status.operationState`.
pub const OPERATION_OWNER: &str = "plumb.dev/operation-owner";

/// The replica recorded as running the Application's operation.
pub(crate) fn owner_of(app: &Application) -> Option<&str> {
    app.metadata.annotation(OPERATION_OWNER)
}

/// Whether another replica, still holding its Lease, started the operation recorded running:
/// that replica finishes it, this one leaves the Application alone meanwhile.
pub(crate) fn running_elsewhere(shared: &Shared, app: &Application) -> bool {
    let Some(sharding) = shared.sharding.as_ref() else {
        return false;
    };
    let running = app
        .status
        .as_ref()
        .and_then(|s| s.operation_state.as_ref())
        .is_some_and(|s| !s.phase.is_completed());
    running && owner_of(app).is_some_and(|o| o != sharding.identity && sharding.is_alive(o))
}

fn resource_version(app: &Application) -> Option<String> {
    app.metadata
        .other
        .get("resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// Claims the requested operation for this replica. `Ok(None)`: sharding is off (nothing to
/// claim, the writes need no guard). `Ok(Some(None))`: another writer changed the Application
/// since it was read; start nothing now. `Ok(Some(Some(rv)))`: claimed at `rv`.
pub(crate) async fn claim(shared: &Shared, app: &Application) -> Result<Option<Option<String>>> {
    let Some(sharding) = shared.sharding.as_ref() else {
        return Ok(None);
    };
    let Some(rv) = resource_version(app) else {
        return Ok(Some(None));
    };
    let patch = json!({"metadata": {
        "resourceVersion": rv,
        "annotations": {OPERATION_OWNER: sharding.identity},
    }});
    match shared
        .apps_api_in(app.namespace())
        .patch(app.name(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(o) => {
            let key = crate::shared::app_key(app);
            shared
                .watched
                .wrote(&key, o.metadata.resource_version.as_deref());
            Ok(Some(o.metadata.resource_version))
        }
        Err(e) if conflict(&e) => Ok(Some(None)),
        Err(source) => Err(Error::Api {
            what: format!(
                "claiming the operation of Application {}/{}",
                app.namespace(),
                app.name()
            ),
            source: Box::new(source),
        }),
    }
}

/// Writes status fields only if the Application is still at `rv`; returns the new
/// resourceVersion, `None` on a conflict.
pub(crate) async fn write_status_at(
    shared: &Shared,
    app: &Application,
    fields: StatusPatch,
    rv: &str,
) -> Result<Option<String>> {
    let patch = json!({"metadata": {"resourceVersion": rv}, "status": fields});
    match shared
        .apps_api_in(app.namespace())
        .patch_status(app.name(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(o) => {
            let key = crate::shared::app_key(app);
            shared
                .watched
                .wrote(&key, o.metadata.resource_version.as_deref());
            Ok(o.metadata.resource_version)
        }
        Err(e) if conflict(&e) => Ok(None),
        Err(source) => Err(Error::Api {
            what: format!(
                "writing the status of Application {}/{}",
                app.namespace(),
                app.name()
            ),
            source: Box::new(source),
        }),
    }
}

/// Records the start of the operation as the reconcile would (one status write), guarded when
/// sharding is on. Returns whether the operation is this replica's to run. `claimed`: `app` is
/// as the guarded write that requested the operation and claimed it for this replica left it.
pub(crate) async fn record_start(
    shared: &Shared,
    app: &Application,
    running: StatusPatch,
    claimed: bool,
) -> Result<bool> {
    let claim = if claimed && shared.sharding.is_some() {
        Some(resource_version(app))
    } else {
        claim(shared, app).await?
    };
    let rv = match claim {
        None => {
            shared.write_status(app, running).await?;
            return Ok(true);
        }
        Some(None) => return Ok(false),
        Some(Some(rv)) => rv,
    };
    Ok(write_status_at(shared, app, running, &rv).await?.is_some())
}
