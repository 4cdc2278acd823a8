//! One reconcile of one Application, as a sequence of named steps: read it, check its namespace
//! may use its project, cascade a deletion, find its destination and project, carry out a
//! requested operation, observe (compare, the project's verdicts, automation), write what changed,
//! then announce (events) and record (metrics).

use std::sync::Arc;
use std::time::Instant;

use kube::api::{Api, DynamicObject};
use plumb_model::annotations::REFRESH;
use plumb_model::application::{AppProject, Application, RESOURCES_FINALIZER, condition};
use serde_json::json;

use crate::automation::Decision;
use crate::metrics::{AppInfo, Timing};
use crate::operation;
use crate::shared::{Shared, app_key};
use crate::watched::Lookup;
use plumb_app::Cluster;
use plumb_app::compare::{CompareOptions, Comparison, Refresh};
use plumb_app::status::{self, StatusPatch};
use plumb_app::{Error, Result, chain};

/// Reconciles the Application whose key is `key` (`namespace/name`); returns whether it still
/// exists.
pub(crate) async fn reconcile(shared: &Arc<Shared>, key: &str) -> Result<bool> {
    let started = Instant::now();
    tracing::debug!(app = key, "reconcile");
    let Some((namespace, name)) = key.split_once('/') else {
        return Ok(false);
    };
    if !shared.namespace_enabled(namespace) {
        // Never queued by the watcher; a stale key is dropped without reading the Application.
        return Ok(false);
    }
    // Whether this process runs the Application's operation, taken before the read: an operation
    // that ends between the read and the check would otherwise look Running and not ours, and be
    // failed as interrupted.
    let ours = shared.operations.is_running(key);
    let Some(app) = shared.read_app(key).await? else {
        shared.metrics.remove_app(namespace, name);
        return Ok(false);
    };
    if !namespace_may_use_project(shared, &app).await? {
        return Ok(true);
    }
    plumb_app::k8s_requests::set_project(&app.spec.project);
    if is_deleting(&app) {
        cascade_delete(shared, &app).await?;
        return Ok(true);
    }
    let Some(target) = target(shared, &app).await? else {
        return Ok(true);
    };
    let operated = match operate(shared, &app, &target.project, ours).await? {
        Operated::Nothing => false,
        Operated::Interrupted => true,
        Operated::Started => {
            shared.metrics.observe(Timing::Reconcile, started.elapsed());
            return Ok(true);
        }
        Operated::Refused => return Ok(true),
    };
    if ours
        && !refresh_requested(&app)
        && let Some(wait) = shared.operations.status_wait(key)
    {
        // The operation writes its progress and, at its end, the status; look again then.
        shared.queue.push_after(key, wait);
        return Ok(true);
    }
    // Re-read after an operation so the comparison starts from the recorded state.
    let app = if operated {
        match shared.read_app(key).await? {
            Some(app) => app,
            None => return Ok(false),
        }
    } else {
        app
    };
    let mut observed = observe(shared, &app, &target).await;
    if write_observation(shared, &app, &target.project, &mut observed, operated, ours).await? {
        shared
            .events
            .status_changes(&app, &observed.sync_code, &observed.health_code)
            .await;
    }
    shared.metrics.cluster_caches(&target.cluster);
    record(shared, &app, observed, started);
    Ok(true)
}

/// An Application outside the control namespace may use only a project whose
/// `sourceNamespaces` lists its namespace: otherwise nothing is done for it (no comparison, no
/// sync, no cascade deletion), and its status says why, as Argo CD's controller says it.
async fn namespace_may_use_project(shared: &Arc<Shared>, app: &Application) -> Result<bool> {
    let (namespace, name) = (app.namespace(), app.name());
    if namespace == shared.config.control_namespace {
        return Ok(true);
    }
    match project_of(shared, app).await? {
        Ok(project)
            if plumb_policy::project::app_namespace_permitted(
                &project,
                namespace,
                &shared.config.control_namespace,
            ) =>
        {
            Ok(true)
        }
        Ok(project) => {
            let msg = format!(
                "{} (sourceNamespaces)",
                plumb_policy::project::project_not_permitted_message(
                    name,
                    namespace,
                    project.metadata.name.as_deref().unwrap_or_default(),
                )
            );
            tracing::warn!(app = %app_key(app), "{msg}");
            refuse(shared, app, condition::UNKNOWN_ERROR, &msg).await?;
            Ok(false)
        }
        Err(msg) => {
            refuse(shared, app, condition::INVALID_SPEC_ERROR, &msg).await?;
            Ok(false)
        }
    }
}

fn is_deleting(app: &Application) -> bool {
    app.metadata
        .other
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

/// Where an admitted Application goes and under which rules.
struct Target {
    cluster: Arc<Cluster>,
    project: AppProject,
    /// What its project asks that Plumb does not enforce (warning conditions).
    warnings: Vec<(String, String)>,
}

/// What the AppProject, as the API server holds it (with the fields Plumb's types drop), asks
/// that Plumb does not enforce; logged. Nothing when the watch has not seen it.
fn project_audit(shared: &Shared, project: &str) -> Vec<plumb_app::unenforced::Finding> {
    let Lookup::Found(raw) = shared
        .watched
        .project(&shared.config.control_namespace, project)
    else {
        return Vec::new();
    };
    let found = serde_json::to_value(&*raw)
        .map(|v| plumb_app::unenforced::in_project(&v))
        .unwrap_or_default();
    if !found.is_empty() {
        tracing::debug!(
            project,
            "AppProject asks for settings Plumb does not enforce"
        );
        plumb_app::unenforced::log(&found);
    }
    found
}

/// The destination cluster and the project, once the project permits the Application itself;
/// `None` (with the reason written to status) otherwise.
async fn target(shared: &Arc<Shared>, app: &Application) -> Result<Option<Target>> {
    let Some(cluster) = shared.clusters.of(app) else {
        let dest = app
            .spec
            .destination
            .server
            .clone()
            .or(app.spec.destination.name.clone())
            .unwrap_or_default();
        let msg = match (
            shared.clusters.in_cluster_refusal(app),
            shared.clusters.failure_of(app),
        ) {
            (Some(refused), _) => refused,
            (None, Some(why)) => {
                format!("application destination cluster {dest:?} cannot be used: {why}")
            }
            (None, None) => format!(
                "application destination cluster {dest:?} is not configured: use https://kubernetes.default.svc (or name in-cluster), or add an Argo CD cluster Secret"
            ),
        };
        // The cluster may still be connecting (a Secret just added, a controller starting): the
        // condition says why nothing happens, a requested operation waits for it.
        let now = status::now();
        shared
            .write_status(
                app,
                status::from_failure(app, condition::INVALID_SPEC_ERROR, &msg, &now),
            )
            .await?;
        return Ok(None);
    };
    let project = match project_of(shared, app).await? {
        Ok(p) => p,
        Err(msg) => {
            invalid_spec(shared, app, &msg).await?;
            return Ok(None);
        }
    };
    let name = project.metadata.name.clone().unwrap_or_default();
    let scope = shared.project_scope(&name);
    let violations = plumb_app::guard::application_violations(
        &project,
        app,
        &shared.config.control_namespace,
        &cluster,
        &scope,
    );
    let unenforced = project_audit(shared, &name);
    if !violations.is_empty() {
        invalid_spec(shared, app, &violations.join("; ")).await?;
        return Ok(None);
    }
    let warnings = plumb_app::unenforced::conditions(&unenforced);
    Ok(Some(Target {
        cluster,
        project,
        warnings,
    }))
}

/// What [`operate`] did about `.operation` and `status.operationState`.
enum Operated {
    /// No operation to start or fail.
    Nothing,
    /// An operation interrupted by a restart was failed: compare from the recorded state.
    Interrupted,
    /// A requested sync was refused by a sync window; this reconcile is over.
    Refused,
    /// A requested sync started in its own task; this reconcile is over.
    Started,
}

/// The requested operation first; its result is then visible in the comparison that follows.
async fn operate(
    shared: &Arc<Shared>,
    app: &Application,
    project: &AppProject,
    ours: bool,
) -> Result<Operated> {
    let running_state = app
        .status
        .as_ref()
        .and_then(|s| s.operation_state.as_ref())
        .filter(|s| !s.phase.is_completed());
    if !ours && crate::sharding::ownership::running_elsewhere(shared, app) {
        // Another replica, alive, runs this operation and records its result; look again once
        // its Lease could have lapsed (the end itself re-queues through the watcher).
        if let Some(s) = &shared.sharding {
            shared.queue.push_after(&app_key(app), s.lease_duration);
        }
        return Ok(Operated::Refused);
    }
    if running_state.is_some() && !ours {
        operation::fail_interrupted(shared, app, running_state).await?;
        return Ok(Operated::Interrupted);
    }
    let sync_requested = app.operation.as_ref().is_some_and(|o| o.sync.is_some());
    if ours || !sync_requested {
        return Ok(Operated::Nothing);
    }
    let manual = !app
        .operation
        .as_ref()
        .and_then(|o| o.initiated_by.as_ref())
        .and_then(|i| i.automated)
        .unwrap_or(false);
    if let Err(reason) = crate::windows::allows(project, app, manual) {
        operation::refuse_in_window(shared, app, &reason).await?;
        return Ok(Operated::Refused);
    }
    operation::start_sync(shared, app, project, StatusPatch::default(), false).await?;
    Ok(Operated::Started)
}

/// What one look at the Application found: the status to write, the codes it reports, what
/// automation decided, and whether a refresh was requested.
struct Observed {
    fields: StatusPatch,
    sync_code: String,
    health_code: String,
    decision: Option<Decision>,
    refresh_requested: bool,
}

/// Whether a refresh is asked for (the refresh annotation).
fn refresh_requested(app: &Application) -> bool {
    app.metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(REFRESH))
}

/// Observes the Application (compare, its project's verdicts) and asks automation what to do.
async fn observe(shared: &Arc<Shared>, app: &Application, target: &Target) -> Observed {
    let refresh_req = app
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(REFRESH))
        .cloned();
    // An asked-for refresh (a webhook, `plumb app get --refresh`) must see a push made moments
    // ago: a listing begun after the watcher saw the request; only a poll may share a listing
    // made before, within the TTL.
    let refresh = match refresh_req.as_deref() {
        Some("hard") => Refresh::Hard,
        Some(_) => Refresh::Latest,
        None => Refresh::Normal,
    };
    let engines = shared.engines();
    let render_started = Instant::now();
    let opts = CompareOptions {
        refs_asked_at: shared.memory.refresh_asked_at(&app_key(app)),
        ..CompareOptions::for_project(&target.project, refresh)
    };
    let look = plumb_app::Target {
        project: &target.project,
        cluster: &target.cluster,
        engines: &engines,
        renderer: &shared.renderer,
    };
    let mut observation = plumb_app::observe(app, look, &opts, None).await;
    let decision = match &mut observation.comparison {
        Ok(cmp) => {
            shared
                .metrics
                .observe(Timing::Render, render_started.elapsed());
            let d = automate(shared, app, &target.project, cmp);
            cmp.warnings.extend(d.conditions.iter().cloned());
            cmp.warnings.extend(target.warnings.iter().cloned());
            Some(d)
        }
        Err(e) => {
            tracing::warn!(app = %app_key(app), "{}", status::comparison_error_message(e));
            None
        }
    };
    let (sync_code, health_code) = observation.codes();
    Observed {
        fields: observation.status(app),
        sync_code,
        health_code,
        decision,
        refresh_requested: refresh_req.is_some(),
    }
}

/// Writes the status when it changed (or was asked for), carries out automation's decision and
/// removes a handled refresh request. Returns whether the Application's status now says what
/// was observed: `false` when the write was put off because this process runs its operation
/// ([`crate::shared::Operations::pace_status`]; a reconcile is queued for when it may write).
///
/// An automated sync decided here is requested first and then started at once: the status
/// found and the operation's `Running` state are one write, where a later reconcile would have
/// written each on its own (issue #17: Application writes are the API server's costliest).
async fn write_observation(
    shared: &Arc<Shared>,
    app: &Application,
    project: &AppProject,
    observed: &mut Observed,
    operated: bool,
    ours: bool,
) -> Result<bool> {
    let requested = match observed.decision.take() {
        Some(d) => act_on(shared, app, d).await?,
        None => None,
    };
    if let Some(requested) = requested {
        operation::start_sync(shared, &requested, project, observed.fields.clone(), true).await?;
    } else if !write_found(shared, app, observed, operated, ours).await? {
        return Ok(false);
    }
    if observed.refresh_requested {
        let patch = json!({"metadata": {"annotations": {REFRESH: null}}});
        shared
            .patch_app(app, &patch, "removing the refresh annotation of")
            .await?;
    }
    Ok(true)
}

/// Writes the status found when it changed (or was asked for); `false` when the write was put
/// off (see [`write_observation`]).
async fn write_found(
    shared: &Arc<Shared>,
    app: &Application,
    observed: &Observed,
    operated: bool,
    ours: bool,
) -> Result<bool> {
    // Written once per change: a poll that finds nothing new writes nothing (the timestamps
    // alone are not a change).
    let asked = operated || observed.refresh_requested;
    if !asked && !status::changes_anything(app, &observed.fields) {
        return Ok(true);
    }
    let key = app_key(app);
    match (ours && !asked)
        .then(|| shared.operations.pace_status(&key))
        .flatten()
    {
        Some(wait) => {
            shared.queue.push_after(&key, wait);
            Ok(false)
        }
        None => {
            shared.write_status(app, observed.fields.clone()).await?;
            Ok(true)
        }
    }
}

/// The reconcile's metrics: the Application's series, the reconcile count and duration, Git.
fn record(shared: &Shared, app: &Application, observed: Observed, started: Instant) {
    shared
        .metrics
        .set_app(app_info(app, observed.sync_code, observed.health_code));
    shared.metrics.reconciled(
        app.namespace(),
        app.spec.destination.server.as_deref().unwrap_or_default(),
        started.elapsed(),
    );
    tracing::debug!(app = %app_key(app), sync = %shared_code(app), "reconciled in {:?}", started.elapsed());
    shared.metrics.source_totals(&shared.renderer);
}

/// The `argocd_app_info` series of an Application, with Argo's labels.
fn app_info(app: &Application, sync_status: String, health_status: String) -> AppInfo {
    let operation = if app.metadata.other.contains_key("deletionTimestamp") {
        "delete"
    } else if app.operation.as_ref().is_some_and(|o| o.sync.is_some()) {
        "sync"
    } else {
        ""
    };
    AppInfo {
        name: app.name().to_string(),
        namespace: app.namespace().to_string(),
        project: app.spec.project.clone(),
        repo: app
            .sources()
            .first()
            .map(|s| plumb_source::strip_url_credentials(&s.repo_url))
            .unwrap_or_default(),
        dest_server: app.spec.destination.server.clone().unwrap_or_default(),
        dest_namespace: app.spec.destination.namespace.clone().unwrap_or_default(),
        sync_status,
        health_status,
        operation: operation.to_string(),
        autosync_enabled: app
            .spec
            .sync_policy
            .as_ref()
            .is_some_and(|p| p.is_automated())
            .to_string(),
    }
}

fn shared_code(app: &Application) -> String {
    app.status
        .as_ref()
        .and_then(|s| s.sync.as_ref())
        .map(|s| s.status.to_string())
        .unwrap_or_default()
}

/// Asks automation what to do after this comparison.
fn automate(
    shared: &Arc<Shared>,
    app: &Application,
    project: &AppProject,
    cmp: &Comparison,
) -> Decision {
    if !app
        .spec
        .sync_policy
        .as_ref()
        .is_some_and(|p| p.is_automated())
    {
        return Decision::default();
    }
    let state = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
    let in_progress = app.operation.is_some()
        || shared.operations.is_running(&app_key(app))
        || state.is_some_and(|s| !s.phase.is_completed());
    let since_finished = state
        .and_then(|s| s.finished_at.as_deref())
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| {
            let secs = jiff::Timestamp::now()
                .duration_since(t)
                .as_secs_f64()
                .max(0.0);
            std::time::Duration::from_secs_f64(secs)
        });
    let windows_allow = crate::windows::allows(project, app, false).is_ok();
    let ctx = crate::automation::Context {
        operation_in_progress: in_progress,
        windows_allow,
        windows_change_in: (!windows_allow)
            .then(|| crate::windows::next_change(project, app))
            .flatten(),
        failed_retries: shared.memory.auto_failures(&app_key(app), &cmp.revision),
        since_finished,
        prune_brake: operation::brake_of(app, &[], &shared.engines()),
    };
    crate::automation::decide(app, cmp, ctx)
}

/// Carries out an automation decision: the events, a later look, the operation's request.
/// Returns the Application as the request left it, for the caller to start; `None` when
/// nothing was requested (or another writer came first: looked at again).
async fn act_on(
    shared: &Arc<Shared>,
    app: &Application,
    d: Decision,
) -> Result<Option<Application>> {
    let key = app_key(app);
    let name = key.as_str();
    for (reason, message, warning) in &d.events {
        // Skips are re-decided on every reconcile; say each once.
        if reason == "AutoSyncSkipped" && !shared.memory.note_skip(name, message) {
            continue;
        }
        if *warning {
            shared.events.warning(app, reason, message.clone()).await;
        } else {
            shared.events.normal(app, reason, message.clone()).await;
        }
    }
    if let Some(after) = d.recheck_after {
        shared.queue.push_after(name, after);
    }
    let Some(op) = d.operation else {
        return Ok(None);
    };
    if d.retrying_failure {
        shared.memory.count_auto_failure(name);
    }
    let mut patch = json!({"operation": op});
    if let Some(sharding) = &shared.sharding {
        // Decided from this read: with several replicas, only if nobody wrote since (the
        // previous owner may have just synced it). The request claims the operation for
        // this replica in the same guarded write.
        patch["metadata"] = json!({
            "resourceVersion": app.metadata.other.get("resourceVersion"),
            "annotations": {crate::sharding::ownership::OPERATION_OWNER: sharding.identity},
        });
    }
    match shared.try_patch_app(app, &patch).await {
        Ok(written) => Ok(Some(crate::watched::application_of(&written, name)?)),
        Err(kube::Error::Api(s)) if s.code == 409 => {
            shared.queue.push(name);
            Ok(None)
        }
        Err(source) => Err(Error::Api {
            what: format!("requesting the automated sync of {name}"),
            source: Box::new(source),
        }),
    }
}

/// The Application cannot be compared or synced as specified: status says why, and a requested
/// operation fails with the same message instead of waiting forever.
async fn invalid_spec(shared: &Arc<Shared>, app: &Application, msg: &str) -> Result<()> {
    refuse(shared, app, condition::INVALID_SPEC_ERROR, msg).await
}

/// [`invalid_spec`] with the condition type given (`UnknownError` for a project the
/// Application's namespace may not use, as Argo CD reports it).
async fn refuse(
    shared: &Arc<Shared>,
    app: &Application,
    condition_type: &str,
    msg: &str,
) -> Result<()> {
    let now = status::now();
    let mut fields = status::from_failure(app, condition_type, msg, &now);
    if let Some(op) = app
        .operation
        .as_ref()
        .filter(|_| !shared.operations.is_running(&app_key(app)))
    {
        fields.operation_state = Some(
            json!({"operation": op, "phase": "Error", "message": msg, "startedAt": now, "finishedAt": now}),
        );
        shared.clear_operation(app).await?;
    }
    shared.write_status(app, fields).await
}

async fn project_of(
    shared: &Shared,
    app: &Application,
) -> Result<std::result::Result<AppProject, String>> {
    let project = if app.spec.project.is_empty() {
        "default"
    } else {
        app.spec.project.as_str()
    };
    let found = match shared
        .watched
        .project(&shared.config.control_namespace, project)
    {
        Lookup::Found(p) => Some(p),
        Lookup::Missing => None,
        // Not in the watch's cache (yet): the API server says whether it exists.
        Lookup::Unknown => {
            let api: Api<DynamicObject> = Api::namespaced_with(
                shared.client.clone(),
                &shared.config.control_namespace,
                &plumb_app::appproject_resource(),
            );
            api.get_opt(project)
                .await
                .map_err(|source| Error::Api {
                    what: format!("reading AppProject {project}"),
                    source: Box::new(source),
                })?
                .map(Arc::new)
        }
    };
    let raw = found.map(|p| serde_json::to_value(&*p));
    // A project asking for what Plumb cannot enforce and would grant is refused however it was
    // read (watch or GET); its warnings are added by `target`.
    if let Some(Ok(v)) = &raw
        && let Some(msg) = plumb_app::unenforced::refusal(&plumb_app::unenforced::in_project(v))
    {
        return Ok(Err(msg));
    }
    match raw {
        // As Argo's controller reads it (`GetAppProjectByName`): with the repositories and
        // clusters scoped to it added to its lists.
        Some(p) => Ok(p
            .and_then(serde_json::from_value)
            .map(|p| plumb_app::ScopedProject::new(&p, shared.project_scope(project)).project)
            .map_err(|e| format!("AppProject {project} is not valid: {e}"))),
        None => Ok(Err(format!(
            "Application referencing project {project} which does not exist"
        ))),
    }
}

/// Deletes every object the Application tracks, then lets the Application go (Argo's
/// `resources-finalizer.argocd.argoproj.io`).
async fn cascade_delete(shared: &Arc<Shared>, app: &Application) -> Result<()> {
    let finalizers = app.metadata.finalizers.clone().unwrap_or_default();
    if !finalizers
        .iter()
        .any(|f| f.starts_with(RESOURCES_FINALIZER))
    {
        return Ok(());
    }
    let policy = if finalizers.iter().any(|f| f.ends_with("/background")) {
        plumb_kube::PropagationPolicy::Background
    } else {
        plumb_kube::PropagationPolicy::Foreground
    };
    if let Some(cluster) = shared.clusters.of(app) {
        let applier = match deletion_writer(shared, app, &cluster).await? {
            Ok(a) => a,
            // Retried when the project or the settings change (both re-queue), or at the next
            // poll; the condition says why until then.
            Err(msg) => return deletion_failed(shared, app, msg).await,
        };
        let instance = app.instance_name(&shared.config.control_namespace);
        let mut keys: Vec<plumb_model::ResourceKey> = cluster
            .live
            .as_ref()
            .map(|r| {
                r.app_objects(&instance)
                    .iter()
                    .map(|o| o.key.clone())
                    .collect()
            })
            .unwrap_or_default();
        keys.sort_by(|a, b| {
            plumb_sync::kind_rank(&b.kind)
                .cmp(&plumb_sync::kind_rank(&a.kind))
                .then(a.cmp(b))
        });
        for key in keys {
            if let Err(e) = applier.delete(&key, policy.clone()).await {
                deletion_failed(shared, app, format!("deleting {key}: {}", chain(&e))).await?;
                return Err(e.into());
            }
        }
    }
    let remaining: Vec<String> = finalizers
        .into_iter()
        .filter(|f| !f.starts_with(RESOURCES_FINALIZER))
        .collect();
    let patch = json!({"metadata": {"finalizers": remaining}});
    shared
        .patch_app(app, &patch, "removing the finalizer of")
        .await
}

/// What the cascade deletion deletes with: the project's ServiceAccount when argocd-cm turns
/// impersonation on (as a sync writes), else the controller's own client. `Err` says why
/// nothing may be deleted (no project to derive the account from, no match while enforced).
async fn deletion_writer(
    shared: &Shared,
    app: &Application,
    cluster: &Cluster,
) -> Result<std::result::Result<plumb_kube::Applier, String>> {
    let engines = shared.engines();
    if plumb_policy::impersonation::Mode::of(&engines.settings)
        == plumb_policy::impersonation::Mode::Off
    {
        return Ok(Ok(cluster.applier.clone()));
    }
    Ok(project_of(shared, app).await?.and_then(|project| {
        plumb_app::impersonation::sync_applier(&project, app, cluster, &engines.settings)
    }))
}

/// Records why the cascade deletion stopped (Argo's `DeletionError` condition).
async fn deletion_failed(shared: &Shared, app: &Application, msg: String) -> Result<()> {
    let failed = [(condition::DELETION_ERROR.into(), msg)];
    let fields = StatusPatch {
        conditions: Some(status::conditions(app, &failed, &[], &status::now())),
        ..StatusPatch::default()
    };
    shared.write_status(app, fields).await
}
