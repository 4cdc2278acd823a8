//! One reconcile of one Application: cascade deletion, project and destination checks, the
//! requested operation, comparison, status write, refresh annotation, events and metrics.

use std::sync::Arc;
use std::time::Instant;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use plumb_model::annotations::REFRESH;
use plumb_model::application::{Application, RESOURCES_FINALIZER, SyncStatusCode, condition};
use serde_json::{Map, Value, json};

use crate::compare::{CompareOptions, Refresh, compare};
use crate::error::{Error, Result, chain};
use crate::metrics::{AppInfo, Timing};
use crate::operation;
use crate::runtime::Shared;
use crate::status;

/// The key of an Application in the work queue and in the controller's memory: `namespace/name`.
pub(crate) fn app_key(app: &Application) -> String {
    format!("{}/{}", app.namespace(), app.name())
}

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
    let api = shared.apps_api_in(namespace);
    // Whether this process runs the Application's operation, taken before the read: an operation
    // that ends between the read and the check would otherwise look Running and not ours, and be
    // failed as interrupted.
    let ours = shared.is_running(key);
    let Some(obj) = api.get_opt(name).await.map_err(|source| Error::Api {
        what: format!("reading Application {key}"),
        source: Box::new(source),
    })?
    else {
        shared.metrics.remove_app(namespace, name);
        return Ok(false);
    };
    let app: Application = serde_json::to_value(&obj)
        .and_then(serde_json::from_value)
        .map_err(|e| Error::InvalidApplication {
            name: key.to_string(),
            reason: e.to_string(),
        })?;

    // An Application outside the control namespace may use only a project whose
    // `sourceNamespaces` lists its namespace: otherwise nothing is done for it (no comparison,
    // no sync, no cascade deletion), and its status says why, as Argo CD's controller says it.
    if namespace != shared.config.control_namespace {
        match project_of(shared, &app).await? {
            Ok(project)
                if plumb_policy::project::app_namespace_permitted(
                    &project,
                    namespace,
                    &shared.config.control_namespace,
                ) => {}
            Ok(project) => {
                let msg = format!(
                    "{} (sourceNamespaces)",
                    plumb_policy::project::project_not_permitted_message(
                        name,
                        namespace,
                        project.metadata.name.as_deref().unwrap_or_default(),
                    )
                );
                tracing::warn!(app = key, "{msg}");
                refuse(shared, &app, condition::UNKNOWN_ERROR, &msg).await?;
                return Ok(true);
            }
            Err(msg) => {
                refuse(shared, &app, condition::INVALID_SPEC_ERROR, &msg).await?;
                return Ok(true);
            }
        }
    }

    crate::k8s_requests::set_project(&app.spec.project);
    if app
        .metadata
        .other
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        cascade_delete(shared, &app).await?;
        return Ok(true);
    }

    let engines = shared.engines();
    let Some(cluster) = shared.cluster_for(&app) else {
        let dest = app
            .spec
            .destination
            .server
            .clone()
            .or(app.spec.destination.name.clone())
            .unwrap_or_default();
        let msg = format!(
            "application destination cluster {dest:?} is not configured: use https://kubernetes.default.svc (or name in-cluster), or add an Argo CD cluster Secret"
        );
        // The cluster may still be connecting (a Secret just added, a controller starting): the
        // condition says why nothing happens, a requested operation waits for it.
        let now = status::now();
        write_status(
            shared,
            &app,
            status::from_failure(&app, condition::INVALID_SPEC_ERROR, &msg, &now),
        )
        .await?;
        return Ok(true);
    };
    let project = match project_of(shared, &app).await? {
        Ok(p) => p,
        Err(msg) => {
            invalid_spec(shared, &app, &msg).await?;
            return Ok(true);
        }
    };
    let violations = crate::guard::application_violations(
        &project,
        &app,
        &shared.config.control_namespace,
        &cluster,
    );
    if !violations.is_empty() {
        invalid_spec(shared, &app, &violations.join("; ")).await?;
        return Ok(true);
    }

    // The requested operation first; its result is then visible in the comparison below.
    let mut operated = false;
    let running_state = app
        .status
        .as_ref()
        .and_then(|s| s.operation_state.as_ref())
        .filter(|s| !s.phase.is_completed());
    if !ours && crate::sharding::ownership::running_elsewhere(shared, &app) {
        // Another replica, alive, runs this operation and records its result; look again once
        // its Lease could have lapsed (the end itself re-queues through the watcher).
        if let Some(s) = &shared.sharding {
            shared.requeue_after(key, s.lease_duration);
        }
        return Ok(true);
    }
    if running_state.is_some() && !ours {
        // Interrupted by a restart: never run twice, fail it visibly.
        if app.operation.is_some() {
            clear_operation(shared, &app).await?;
        }
        let mut state = serde_json::to_value(running_state).unwrap_or(Value::Null);
        state["phase"] = json!("Failed");
        state["message"] = json!(operation::INTERRUPTED);
        state["finishedAt"] = json!(status::now());
        let mut fields = Map::new();
        fields.insert("operationState".into(), state);
        write_status(shared, &app, fields).await?;
        operated = true;
    } else if app.operation.as_ref().is_some_and(|o| o.sync.is_some()) && !ours {
        let manual = !app
            .operation
            .as_ref()
            .and_then(|o| o.initiated_by.as_ref())
            .and_then(|i| i.automated)
            .unwrap_or(false);
        if let Err(reason) = crate::windows::allows(&project, &app, manual) {
            // Refused before it starts, as Argo CD's API server refuses the request: nothing
            // waits silently for a window to open.
            let now = status::now();
            let mut fields = Map::new();
            fields.insert("operationState".into(), Value::Null);
            write_status(shared, &app, fields).await?;
            let mut fields = Map::new();
            fields.insert(
                "operationState".into(),
                json!({"operation": app.operation, "phase": "Failed",
                       "message": format!("Sync operation blocked by sync window: {reason}"),
                       "startedAt": now, "finishedAt": now}),
            );
            clear_operation(shared, &app).await?;
            write_status(shared, &app, fields).await?;
            shared
                .events
                .warning(
                    &app,
                    "OperationCompleted",
                    format!("Sync operation blocked by sync window: {reason}"),
                )
                .await;
            return Ok(true);
        }
        let started_at = status::now();
        // A merge patch would blend the new operation into the previous one's record: drop the
        // old record first, then write the new one.
        let mut clear = Map::new();
        clear.insert("operationState".into(), Value::Null);
        let mut fields = Map::new();
        fields.insert(
            "operationState".into(),
            operation::started(&app, &started_at),
        );
        if !crate::sharding::ownership::record_start(shared, &app, clear, fields).await? {
            // Another replica wrote first (a hand-over between replicas): look again shortly.
            shared.requeue_after(key, std::time::Duration::from_secs(1));
            return Ok(true);
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
        shared
            .events
            .normal(&app, "OperationStarted", format!("Initiated sync to {rev}"))
            .await;
        let control = shared.start_operation(key);
        tokio::spawn(crate::k8s_requests::for_app(
            namespace,
            name,
            &app.spec.project,
            operation::drive(
                shared.clone(),
                app.clone(),
                project.clone(),
                started_at,
                control,
            ),
        ));
        shared.metrics.observe(Timing::Reconcile, started.elapsed());
        return Ok(true);
    }

    // Re-read after an operation so the comparison starts from the recorded state.
    let app = if operated {
        match api.get_opt(name).await.map_err(|source| Error::Api {
            what: format!("reading Application {key}"),
            source: Box::new(source),
        })? {
            Some(o) => serde_json::to_value(&o)
                .and_then(serde_json::from_value)
                .map_err(|e| Error::InvalidApplication {
                    name: key.to_string(),
                    reason: e.to_string(),
                })?,
            None => return Ok(false),
        }
    } else {
        app
    };

    let refresh_req = app
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(REFRESH))
        .cloned();
    let refresh = if refresh_req.as_deref() == Some("hard") {
        Refresh::Hard
    } else {
        Refresh::Normal
    };
    let render_started = Instant::now();
    let opts = CompareOptions {
        revision: None,
        refresh,
        attribution: true,
        fresh_reads: false,
        sources: None,
        source_repos: project.spec.source_repos.clone().unwrap_or_default(),
    };
    let now = status::now();
    let mut decision = None;
    let (fields, sync_code, health_code) =
        match compare(&app, &engines, &cluster, &shared.renderer, &opts).await {
            Ok(mut cmp) => {
                shared
                    .metrics
                    .observe(Timing::Render, render_started.elapsed());
                crate::guard::mark_forbidden(&mut cmp, &project, &app, &cluster);
                if let Some(w) = crate::orphans::warning(&app, &project, &cluster, &engines) {
                    cmp.warnings.push(w);
                }
                let d = automate(shared, &app, &project, &cmp);
                cmp.warnings.extend(d.conditions.iter().cloned());
                decision = Some(d);
                let fields = status::from_comparison(&app, &cmp, &now);
                (
                    fields,
                    cmp.sync.as_str().to_string(),
                    cmp.health.code.as_str().to_string(),
                )
            }
            Err(e) => {
                let msg = format!(
                    "Failed to compare desired state to live state: {}",
                    chain(&e)
                );
                tracing::warn!(app = key, "{msg}");
                (
                    status::from_failure(&app, condition::COMPARISON_ERROR, &msg, &now),
                    "Unknown".into(),
                    "Unknown".into(),
                )
            }
        };
    let stale = app
        .status
        .as_ref()
        .and_then(|s| s.reconciled_at.as_deref())
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .is_none_or(|t| {
            jiff::Timestamp::now().duration_since(t).as_secs()
                >= shared.poll_interval().as_secs() as i64
        });
    if operated || refresh_req.is_some() || stale || status::changes_anything(&app, &fields) {
        write_status(shared, &app, fields).await?;
    }
    if let Some(d) = decision {
        act_on(shared, &app, d).await?;
    }
    if refresh_req.is_some() {
        let patch = json!({"metadata": {"annotations": {REFRESH: null}}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| Error::Api {
                what: format!("removing the refresh annotation of {key}"),
                source: Box::new(source),
            })?;
    }

    let prev_sync = app
        .status
        .as_ref()
        .and_then(|s| s.sync.as_ref())
        .map(|s| s.status);
    if prev_sync.map(|s| s.as_str().to_string()) != Some(sync_code.clone()) {
        shared
            .events
            .normal(
                &app,
                "ResourceUpdated",
                format!(
                    "Updated sync status: {} -> {sync_code}",
                    prev_sync.map(SyncStatusCode::as_str).unwrap_or("")
                ),
            )
            .await;
    }
    let prev_health = app
        .status
        .as_ref()
        .and_then(|s| s.health.as_ref())
        .and_then(|h| h.status.clone());
    if prev_health.as_deref() != Some(health_code.as_str()) {
        shared
            .events
            .normal(
                &app,
                "ResourceUpdated",
                format!(
                    "Updated health status: {} -> {health_code}",
                    prev_health.unwrap_or_default()
                ),
            )
            .await;
    }
    shared
        .metrics
        .set_app(app_info(&app, sync_code, health_code));
    shared.metrics.reconciled(
        app.namespace(),
        app.spec.destination.server.as_deref().unwrap_or_default(),
        started.elapsed(),
    );
    tracing::debug!(app = key, sync = %shared_code(&app), "reconciled in {:?}", started.elapsed());
    shared.metrics.source_totals(&shared.renderer);
    Ok(true)
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
    project: &plumb_model::application::AppProject,
    cmp: &crate::compare::Comparison,
) -> crate::automation::Decision {
    if !app
        .spec
        .sync_policy
        .as_ref()
        .is_some_and(|p| p.is_automated())
    {
        return crate::automation::Decision::default();
    }
    let state = app.status.as_ref().and_then(|s| s.operation_state.as_ref());
    let in_progress = app.operation.is_some()
        || shared.is_running(&app_key(app))
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
        failed_retries: shared.auto_failures(&app_key(app), &cmp.revision),
        since_finished,
        prune_brake: crate::operation::brake_of(app, &[], &shared.engines()),
    };
    crate::automation::decide(app, cmp, ctx)
}

/// Carries out an automation decision: the operation, the events, a later look.
async fn act_on(
    shared: &Arc<Shared>,
    app: &Application,
    d: crate::automation::Decision,
) -> Result<()> {
    let key = app_key(app);
    let name = key.as_str();
    for (reason, message, warning) in &d.events {
        // Skips are re-decided on every reconcile; say each once.
        if reason == "AutoSyncSkipped" && !shared.note_skip(name, message) {
            continue;
        }
        if *warning {
            shared.events.warning(app, reason, message.clone()).await;
        } else {
            shared.events.normal(app, reason, message.clone()).await;
        }
    }
    if let Some(after) = d.recheck_after {
        shared.requeue_after(name, after);
    }
    if let Some(op) = d.operation {
        if d.retrying_failure {
            shared.count_auto_failure(name);
        }
        let mut patch = json!({"operation": op});
        if shared.sharding.is_some() {
            // Decided from this read: with several replicas, only if nobody wrote since (the
            // previous owner may have just synced it).
            patch["metadata"] =
                json!({"resourceVersion": app.metadata.other.get("resourceVersion")});
        }
        match shared
            .apps_api_in(app.namespace())
            .patch(app.name(), &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => shared.requeue(name),
            Err(source) => {
                return Err(Error::Api {
                    what: format!("requesting the automated sync of {name}"),
                    source: Box::new(source),
                });
            }
        }
    }
    Ok(())
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
        .filter(|_| !shared.is_running(&app_key(app)))
    {
        fields.insert(
            "operationState".into(),
            json!({"operation": op, "phase": "Error", "message": msg, "startedAt": now, "finishedAt": now}),
        );
        clear_operation(shared, app).await?;
    }
    write_status(shared, app, fields).await
}

pub(crate) async fn write_status(
    shared: &Shared,
    app: &Application,
    fields: Map<String, Value>,
) -> Result<()> {
    let patch = json!({"status": Value::Object(fields)});
    shared
        .apps_api_in(app.namespace())
        .patch_status(app.name(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::Api {
            what: format!("writing the status of Application {}", app_key(app)),
            source: Box::new(source),
        })?;
    Ok(())
}

pub(crate) async fn clear_operation(shared: &Shared, app: &Application) -> Result<()> {
    let patch = json!({"operation": null});
    shared
        .apps_api_in(app.namespace())
        .patch(app.name(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::Api {
            what: format!("clearing the operation of Application {}", app_key(app)),
            source: Box::new(source),
        })?;
    Ok(())
}

async fn project_of(
    shared: &Shared,
    app: &Application,
) -> Result<std::result::Result<plumb_model::application::AppProject, String>> {
    let project = if app.spec.project.is_empty() {
        "default"
    } else {
        app.spec.project.as_str()
    };
    let api: Api<DynamicObject> = Api::namespaced_with(
        shared.client.clone(),
        &shared.config.control_namespace,
        &crate::runtime::appproject_resource(),
    );
    match api.get_opt(project).await {
        Ok(Some(p)) => Ok(serde_json::to_value(&p)
            .and_then(serde_json::from_value)
            .map_err(|e| format!("AppProject {project} is not valid: {e}"))),
        Ok(None) => Ok(Err(format!(
            "Application referencing project {project} which does not exist"
        ))),
        Err(source) => Err(Error::Api {
            what: format!("reading AppProject {project}"),
            source: Box::new(source),
        }),
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
    if let Some(cluster) = shared.cluster_for(app) {
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
            if let Err(e) = cluster.applier.delete(&key, policy.clone()).await {
                let msg = format!("deleting {key}: {}", chain(&e));
                let mut fields = Map::new();
                fields.insert(
                    "conditions".into(),
                    status::conditions_value(
                        app,
                        &[(condition::DELETION_ERROR.into(), msg)],
                        &[],
                        &status::now(),
                    ),
                );
                write_status(shared, app, fields).await?;
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
        .apps_api_in(app.namespace())
        .patch(app.name(), &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::Api {
            what: format!("removing the finalizer of {}", app_key(app)),
            source: Box::new(source),
        })?;
    Ok(())
}
