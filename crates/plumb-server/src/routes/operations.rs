//! `POST .../sync`, `POST .../rollback`, `DELETE .../operation`: the operation is written on the
//! Application exactly as `plumb app sync/rollback/terminate-op` write it (the operation comes
//! from `plumb_app::request`), and the controller runs it.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use kube::api::{Patch, PatchParams};
use plumb_app::request;
use plumb_model::application::{Application, Operation};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::{RollbackRequestBody, SyncRequestBody};
use crate::state::{AppState, to_value};

/// Attempts at writing when the controller keeps writing the Application in between.
const ATTEMPTS: usize = 10;

fn body<T: DeserializeOwned + Default>(bytes: &Bytes, what: &str) -> Result<T> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes)
        .map_err(|e| Error::InvalidArgument(format!("reading the {what}: {e}")))
}

/// The user the operation is initiated by: the caller's subject. Without authentication there
/// is none (Argo with `--disable-auth`): `initiatedBy.username` is left out, as Argo omits an
/// empty one.
fn username(caller: &crate::auth::Caller) -> &str {
    &caller.subject
}

/// Writes `.operation` (built by `make` from the current Application) guarded by its
/// resourceVersion; re-reads and decides again after a conflict.
async fn request_operation(
    s: &AppState,
    name: &str,
    what: &str,
    make: impl Fn(&Application) -> Result<Operation>,
) -> Result<Json<Value>> {
    for _ in 0..ATTEMPTS {
        let (obj, app) = s.app(name).await?;
        let op = make(&app)?;
        let rv = obj.metadata.resource_version.clone().unwrap_or_default();
        let patch = json!({"metadata": {"resourceVersion": rv}, "operation": to_value(&op)?});
        let (api, _, n) = s.apps_for(name)?;
        match api
            .patch(n, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(updated) => {
                s.app_cache.written(&updated).await;
                return Ok(Json(to_value(&updated)?));
            }
            Err(kube::Error::Api(st)) if st.code == 409 => {
                tracing::debug!("Application {name} changed while requesting the {what}; retrying");
            }
            Err(e) => {
                return Err(Error::kube(
                    format!("requesting the {what} of Application {name}"),
                    e,
                ));
            }
        }
    }
    Err(Error::FailedPrecondition(format!(
        "could not request the {what} of application '{name}': it keeps changing"
    )))
}

/// `POST /api/v1/applications/{name}/sync` with an `ApplicationSyncRequest`.
///
/// With `manifests` (what `argocd app sync --local` / `plumb app sync --local` rendered on the
/// user's machine), Argo's rules: the caller also needs `override` on the Application, and an
/// automated Application takes them only for a dry run. They are read and checked against the
/// project before anything is written ([`crate::local_manifests`]); the controller applies the
/// project's rules again in the sync, as to rendered objects. Their text is never logged nor
/// repeated in an error (they may hold Secrets).
pub(crate) async fn sync(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    bytes: Bytes,
) -> Result<Json<Value>> {
    let mut body: SyncRequestBody = body(&bytes, "sync request")?;
    let name = s.app_key(&name, body.app_namespace.as_deref())?;
    s.authorize_app(&caller, &name, "sync").await?;
    // Argo's gRPC decoding makes an empty list absent.
    let manifests = body.manifests.take().filter(|m| !m.is_empty());
    if let Some(m) = &manifests {
        crate::local_manifests::authorize(&s, &caller, &name).await?;
        let (_, app) = s.app(&name).await?;
        let project = super::resources::project_of(&s, &app).await?;
        let sources: Vec<_> = app.sources().into_iter().cloned().collect();
        let integrity = plumb_app::signatures::required_integrity(&project.project);
        if plumb_app::signatures::has_criteria(integrity.as_ref(), &sources) {
            return Err(Error::FailedPrecondition(
                plumb_app::signatures::LOCAL_MANIFESTS_REFUSED.into(),
            ));
        }
        crate::local_manifests::check(&s, &app, &project.project, m).await?;
    }
    let req = body.request();
    request_operation(&s, &name, "sync", |app| {
        if manifests.is_some() {
            refuse_local(app, req.dry_run)?;
        }
        request::refuse_sync(&req, app)?;
        let mut op = request::sync_operation(&req, app, username(&caller));
        if let Some(sync) = op.sync.as_mut() {
            sync.manifests = manifests.clone();
        }
        Ok(op)
    })
    .await
}

/// Argo's refusal of local manifests on an automated Application unless for a dry run
/// (`server/application/application.go`, `Sync`).
fn refuse_local(app: &Application, dry_run: bool) -> Result<()> {
    let automated = app
        .spec
        .sync_policy
        .as_ref()
        .is_some_and(|p| p.is_automated());
    if automated && !dry_run {
        return Err(Error::FailedPrecondition(
            "cannot use local sync when Automatic Sync Policy is enabled unless for dry run".into(),
        ));
    }
    Ok(())
}

/// `POST /api/v1/applications/{name}/rollback` with an `ApplicationRollbackRequest`.
pub(crate) async fn rollback(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    bytes: Bytes,
) -> Result<Json<Value>> {
    let body: RollbackRequestBody = body(&bytes, "rollback request")?;
    let name = s.app_key(&name, body.app_namespace.as_deref())?;
    s.authorize_app(&caller, &name, "sync").await?;
    let id = body.id.filter(|id| *id != -1);
    request_operation(&s, &name, "rollback", |app| {
        let entry = request::find_revision_history(app, id)?;
        request::refuse_rollback(app, &entry)?;
        Ok(request::rollback_operation(
            body.prune,
            body.dry_run,
            app,
            &entry,
            username(&caller),
        ))
    })
    .await
}

/// `DELETE /api/v1/applications/{name}/operation`: asks the controller to stop the running
/// operation (`status.operationState.phase: Terminating` through the status subresource, as
/// Argo's `TerminateOperation` and `plumb app terminate-op`).
pub(crate) async fn terminate(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = crate::gateway::Query::parse(raw.as_deref());
    let name = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &name, "sync").await?;
    for _ in 0..ATTEMPTS {
        let (obj, app) = s.app(&name).await?;
        let running = app
            .status
            .as_ref()
            .and_then(|st| st.operation_state.as_ref());
        if app.operation.is_none() || running.is_none() {
            return Err(Error::FailedPrecondition(
                "Unable to terminate operation. No operation is in progress".into(),
            ));
        }
        let rv = obj.metadata.resource_version.clone().unwrap_or_default();
        let patch = json!({
            "metadata": {"resourceVersion": rv},
            "status": {"operationState": {"phase": "Terminating"}},
        });
        let (api, _, n) = s.apps_for(&name)?;
        match api
            .patch_status(n, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(updated) => {
                s.app_cache.written(&updated).await;
                return Ok(Json(json!({})));
            }
            Err(kube::Error::Api(st)) if st.code == 409 => {
                // The controller writes progress while an operation runs; let it land.
                tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            }
            Err(e) => {
                return Err(Error::kube(
                    format!("terminating the operation of Application {name}"),
                    e,
                ));
            }
        }
    }
    Err(Error::FailedPrecondition(format!(
        "could not terminate the operation of application '{name}': it keeps changing"
    )))
}
