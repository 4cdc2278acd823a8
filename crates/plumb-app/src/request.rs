//! What a user's sync or rollback request turns into: the `.operation` Argo's API server writes
//! (`server/application/application.go`: `Sync`, `Rollback`) and the requests it refuses first.
//! `plumb app sync/rollback` (core mode) and `plumb server` both write operations through these
//! functions, so a sync requested either way is the same object.

use plumb_model::application::{
    Application, Operation, OperationInitiator, RESOURCES_FINALIZER, RetryStrategy,
    RevisionHistory, SyncOperation, SyncOperationResource, SyncStrategy, SyncStrategyForce,
};

/// Argo's `another operation is already in progress`.
pub const OPERATION_IN_PROGRESS: &str = "another operation is already in progress";

/// A request refused before anything is written; the message is Argo's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// A sync request (Argo's `ApplicationSyncRequest`, the fields Plumb acts on).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncRequest {
    /// Revision to sync to (absent: the source's target revision).
    pub revision: Option<String>,
    /// Delete tracked objects Git no longer declares.
    pub prune: bool,
    /// Server-side dry run only.
    pub dry_run: bool,
    /// Apply or hook strategy (absent: the controller's default, hooks).
    pub strategy: Option<SyncStrategy>,
    /// Only these resources (selective sync).
    pub resources: Option<Vec<SyncOperationResource>>,
    /// Sync options of this sync (absent: the Application's own).
    pub sync_options: Option<Vec<String>>,
    /// Retry strategy of this sync (absent: the Application's own).
    pub retry: Option<RetryStrategy>,
}

/// Refuses a sync Argo's API server refuses: another operation running, a revision other than
/// the automated target, a revision on a multi-source Application.
pub fn refuse_sync(req: &SyncRequest, app: &Application) -> Result<(), Refused> {
    if app.operation.is_some() {
        return Err(Refused(OPERATION_IN_PROGRESS.into()));
    }
    let automated = app
        .spec
        .sync_policy
        .as_ref()
        .is_some_and(|p| p.is_automated());
    let target = app
        .sources()
        .first()
        .and_then(|s| s.target_revision.clone())
        .unwrap_or_default();
    if let Some(rev) = &req.revision
        && automated
        && !req.dry_run
        && rev != &target
    {
        return Err(Refused(format!(
            "Cannot sync to {rev}: auto-sync currently set to {target}"
        )));
    }
    if req.revision.is_some() && app.spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
        return Err(Refused(
            "--revision cannot be used with a multi-source application".into(),
        ));
    }
    Ok(())
}

/// The operation a sync request writes on `app`, initiated by `username`.
pub fn sync_operation(req: &SyncRequest, app: &Application, username: &str) -> Operation {
    let policy = app.spec.sync_policy.as_ref();
    // The API server takes the Application's own sync options and retry unless the request
    // names some (`server/application/application.go: Sync`).
    let sync_options = match &req.sync_options {
        Some(o) if !o.is_empty() => Some(o.clone()),
        _ => policy
            .and_then(|p| p.sync_options.clone())
            .filter(|o| !o.is_empty()),
    };
    let retry = req
        .retry
        .clone()
        .or_else(|| policy.and_then(|p| p.retry.clone()));
    Operation {
        sync: Some(SyncOperation {
            revision: req.revision.clone(),
            prune: Some(req.prune),
            dry_run: Some(req.dry_run),
            sync_strategy: req.strategy.clone(),
            resources: req.resources.clone(),
            sync_options,
            ..Default::default()
        }),
        initiated_by: Some(OperationInitiator {
            username: (!username.is_empty()).then(|| username.to_string()),
            automated: None,
        }),
        info: None,
        retry,
    }
}

/// The history entry to roll back to (Argo's `findRevisionHistory`): `id`, else (Argo's -1)
/// the previous deployment.
pub fn find_revision_history(
    app: &Application,
    id: Option<i64>,
) -> Result<RevisionHistory, Refused> {
    let history = app
        .status
        .as_ref()
        .and_then(|s| s.history.as_deref())
        .unwrap_or_default();
    match id {
        None if history.len() >= 2 => Ok(history[history.len() - 2].clone()),
        None => Err(Refused(format!(
            "Application '{}' should have at least two successful deployments",
            app.name()
        ))),
        Some(id) => history.iter().find(|h| h.id == id).cloned().ok_or_else(|| {
            Refused(format!(
                "Application '{}' does not have deployment id '{id}' in history",
                app.name()
            ))
        }),
    }
}

/// Refuses a rollback Argo's API server refuses.
pub fn refuse_rollback(app: &Application, entry: &RevisionHistory) -> Result<(), Refused> {
    if app
        .metadata
        .other
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        return Err(Refused("application is deleting".into()));
    }
    if app
        .spec
        .sync_policy
        .as_ref()
        .is_some_and(|p| p.is_automated())
    {
        return Err(Refused(
            "rollback cannot be initiated when auto-sync is enabled".into(),
        ));
    }
    let no_source = entry.source.as_ref().is_none_or(|s| s.repo_url.is_empty())
        && entry.sources.as_ref().is_none_or(Vec::is_empty);
    if no_source {
        return Err(Refused(
            "cannot rollback to revision deployed with Argo CD v0.11 or lower. sync to revision instead.".into(),
        ));
    }
    if app.operation.is_some() {
        return Err(Refused(OPERATION_IN_PROGRESS.into()));
    }
    Ok(())
}

/// The operation Argo's `Rollback` writes for this history entry: a sync to its commit and
/// source with the apply strategy (no hooks) and the Application's sync options.
pub fn rollback_operation(
    prune: bool,
    dry_run: bool,
    app: &Application,
    entry: &RevisionHistory,
    username: &str,
) -> Operation {
    let multi = entry.sources.as_ref().is_some_and(|s| !s.is_empty());
    Operation {
        sync: Some(SyncOperation {
            revision: if multi { None } else { entry.revision.clone() },
            revisions: if multi { entry.revisions.clone() } else { None },
            source: if multi { None } else { entry.source.clone() },
            sources: if multi { entry.sources.clone() } else { None },
            prune: Some(prune),
            dry_run: Some(dry_run),
            sync_strategy: Some(SyncStrategy {
                apply: Some(SyncStrategyForce::default()),
                hook: None,
            }),
            sync_options: app
                .spec
                .sync_policy
                .as_ref()
                .and_then(|p| p.sync_options.clone())
                .filter(|o| !o.is_empty()),
            ..Default::default()
        }),
        initiated_by: Some(OperationInitiator {
            username: (!username.is_empty()).then(|| username.to_string()),
            automated: None,
        }),
        info: None,
        retry: None,
    }
}

/// The finalizers an Application gets before it is deleted (Argo's `Delete`): with cascade, the
/// resources finalizer (`/background` for background propagation) unless one is there already,
/// so the controller deletes its resources first; without, none, so the resources stay.
pub fn delete_finalizers(current: &[String], cascade: bool, background: bool) -> Vec<String> {
    let mut out: Vec<String> = current
        .iter()
        .filter(|f| !f.starts_with(RESOURCES_FINALIZER))
        .cloned()
        .collect();
    if cascade {
        // An existing resources finalizer (any variant) already asks for cascading deletion.
        match current.iter().find(|f| f.starts_with(RESOURCES_FINALIZER)) {
            Some(existing) => out.push(existing.clone()),
            None if background => out.push(format!("{RESOURCES_FINALIZER}/background")),
            None => out.push(RESOURCES_FINALIZER.to_string()),
        }
    }
    out
}
