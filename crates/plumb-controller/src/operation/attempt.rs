//! One attempt of a sync: compare with the revision asked for, build the sync request from the
//! operation, run it with progress written as it goes.

use std::sync::Arc;
use std::time::Duration;

use plumb_app::compare::{CompareOptions, Comparison, Refresh, compare_with};
use plumb_app::status::StatusPatch;
use plumb_app::{Written, chain};
use plumb_model::application::{Application, OperationPhase, SyncOperation, SyncStatusCode};
use plumb_sync::{
    Control, HealthGate, NamespaceToCreate, Progress, SyncContext, SyncOptions, SyncOutcome,
    SyncRequest, SyncTask, TaskSelection,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::state::RUNNING_MESSAGE;
use crate::shared::Shared;
/// How often running hooks and gated waves are looked at.
const POLL: Duration = Duration::from_millis(500);

/// The least time between two writes of a running operation's progress.
const PROGRESS_PACE: Duration = Duration::from_secs(1);

/// When an operation began: `at` as written in its state, `asked` for the Git listing its
/// refs must come from (see [`drive`]).
#[derive(Clone, Copy)]
pub(super) struct Began<'a> {
    pub(super) at: &'a str,
    pub(super) asked: std::time::Instant,
}

/// One attempt: compare, then run the sync with progress written as it goes.
pub(super) async fn attempt(
    shared: &Arc<Shared>,
    app: &Application,
    project: &plumb_model::application::AppProject,
    cluster: &plumb_app::Cluster,
    began: Began<'_>,
    control: &watch::Receiver<Control>,
    written: &std::sync::Mutex<Written>,
) -> (SyncOutcome, Option<Comparison>) {
    let engines = shared.engines();
    let cmp = match compare_for_sync(shared, app, project, cluster, &engines, began.asked).await {
        Ok(c) => c,
        Err(failed) => return (failed, None),
    };
    if let Some(refusal) = comparison_errors(&cmp) {
        return (SyncOutcome::error(refusal), None);
    }
    // After the comparison, as Argo decides it (a comparison error is reported first). Every
    // write of the sync goes through this applier, impersonating when the project says so.
    let applier =
        match plumb_app::impersonation::sync_applier(project, app, cluster, &engines.settings) {
            Ok(a) => a,
            Err(refusal) => return (SyncOutcome::error(refusal), None),
        };
    let (mut request, cmp) = match prepare(app, cmp, &engines, began.at).await {
        Ok(built) => built,
        Err(failed) => return (failed, None),
    };
    request.permitted = Some(plumb_app::guard::permission_check(project, app, cluster));

    let (tx, rx) = watch::channel::<Option<Progress>>(None);
    let writer = spawn_progress_writer(shared, app, &cmp, rx);
    let progress = move |p: &Progress| {
        let _ = tx.send(Some(p.clone()));
    };
    let applied = |key: &plumb_model::ResourceKey, desired: &Value, stored: &Value| {
        cluster.applied.insert(key, desired, stored);
        written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .applied(key, desired, stored);
    };
    let ctx = SyncContext {
        applier: &applier,
        assessor: engines.assessor.clone(),
        facts: Some(std::sync::Arc::new(cluster.live_health_facts())),
        progress: &progress,
        applied: Some(&applied),
        control: control.clone(),
        poll: POLL,
        wave_delay: shared.config.sync_wave_delay,
    };
    let outcome = plumb_sync::run(&ctx, request).await;
    drop(ctx);
    drop(progress);
    let _ = writer.await;
    (outcome, Some(cmp))
}

/// The comparison a sync applies: against the revision (and sources, or local manifests) the
/// operation asks for.
async fn compare_for_sync(
    shared: &Shared,
    app: &Application,
    project: &plumb_model::application::AppProject,
    cluster: &plumb_app::Cluster,
    engines: &plumb_app::Engines,
    asked: std::time::Instant,
) -> Result<Comparison, SyncOutcome> {
    let op = app.operation.clone().unwrap_or_default();
    let sync = op.sync.clone().unwrap_or_default();
    // From the live cache, as the reconcile that led here compared (a GET of every desired
    // object, half of them 404 before a first sync, bought nothing the watch had not shown), and
    // with the reconcile's diff configuration, so its server-side results are reused rather than
    // dry-run again. A sync goes to the branch's head as of its request, not as of a listing
    // shared for the TTL; syncs asked for together share one listing.
    let cmp_opts = CompareOptions {
        revision: sync.revision.clone().filter(|r| !r.is_empty()),
        refs_asked_at: Some(asked),
        sources: operation_sources(&sync),
        ..CompareOptions::for_project(project, Refresh::Latest)
    };
    let local = sync.manifests.as_deref();
    compare_with(app, engines, cluster, &shared.renderer, &cmp_opts, local)
        .await
        .map_err(|e| SyncOutcome::error(format!("ComparisonError: {}", chain(&e))))
}

/// Argo CD's refusal of a sync whose comparison has errors (a revision that fails the project's
/// `signatureKeys`): `ComparisonError: <message>`, joined by `;` (`argo.FormatAppConditions`).
fn comparison_errors(cmp: &Comparison) -> Option<String> {
    let errors: Vec<String> = cmp
        .warnings
        .iter()
        .filter(|(kind, _)| kind == plumb_model::application::condition::COMPARISON_ERROR)
        .map(|(kind, message)| format!("{kind}: {message}"))
        .collect();
    (!errors.is_empty()).then(|| errors.join(";"))
}

/// The engine's request from the comparison. `RespectIgnoreDifferences` runs the jq ignore
/// rules over every object: CPU work, off the runtime.
async fn prepare(
    app: &Application,
    cmp: Comparison,
    engines: &Arc<plumb_app::Engines>,
    started_at: &str,
) -> Result<(SyncRequest, Comparison), SyncOutcome> {
    let (app, engines, started_at) = (app.clone(), engines.clone(), started_at.to_string());
    tokio::task::spawn_blocking(move || {
        let request = request(&app, &cmp, &engines, &started_at);
        (request, cmp)
    })
    .await
    .map_err(|e| SyncOutcome::error(format!("preparing the sync: {e}")))
}

/// Starts the task that writes the sync's progress (see [`write_progress`]).
fn spawn_progress_writer(
    shared: &Arc<Shared>,
    app: &Application,
    cmp: &Comparison,
    rx: watch::Receiver<Option<Progress>>,
) -> tokio::task::JoinHandle<()> {
    let running = SyncOutcome {
        phase: OperationPhase::Running,
        message: String::new(),
        results: Vec::new(),
        terminated: false,
        braked: false,
    };
    let result_base = sync_result(app, cmp, &running);
    tokio::spawn(write_progress(shared.clone(), app.clone(), result_base, rx))
}

/// Writes a running sync's progress to `operationState` as the engine reports it: the engine
/// never waits for the API server, and a burst of changes becomes one status write.
async fn write_progress(
    shared: Arc<Shared>,
    app: Application,
    result_base: Value,
    mut rx: watch::Receiver<Option<Progress>>,
) {
    // The start wrote `Running` with this message moments ago: the first progress write
    // waits its pace as any other (a sync done within it writes no progress at all).
    let mut written = RUNNING_MESSAGE.to_string();
    loop {
        // At most one progress write per PROGRESS_PACE for results, but a new message
        // (what the sync waits for, e.g. a wave's health) is written at once: a short
        // wait must still be visible to whoever watches the sync. The end of the sync
        // (the sender dropped) ends the wait without a write: the result written next
        // holds it all.
        let mut pending = false;
        let pace = tokio::time::sleep(PROGRESS_PACE);
        tokio::pin!(pace);
        loop {
            tokio::select! {
                _ = &mut pace => break,
                changed = rx.changed() => match changed {
                    Ok(()) => {
                        pending = true;
                        let news = rx
                            .borrow()
                            .as_ref()
                            .is_some_and(|n| n.message != written);
                        if news {
                            break;
                        }
                    }
                    Err(_) => return,
                },
            }
        }
        // Quiet through the pace: the next change is written as it comes.
        if !pending && rx.changed().await.is_err() {
            return;
        }
        let Some(p) = rx.borrow_and_update().clone() else {
            continue;
        };
        let mut result = result_base.clone();
        result["resources"] = json!(p.results);
        // No `phase`: `Terminating`, written by terminate-op, must not be overwritten.
        let fields =
            StatusPatch::operation_state(json!({"message": p.message, "syncResult": result}));
        if let Err(e) = shared.write_status(&app, fields).await {
            tracing::debug!(app = %app.name(), "writing progress: {}", chain(&e));
        }
        written = p.message;
    }
}

/// The engine's request from the comparison, the Application and the operation.
fn request(
    app: &Application,
    cmp: &Comparison,
    engines: &plumb_app::Engines,
    started_at: &str,
) -> SyncRequest {
    let op = app.operation.clone().unwrap_or_default();
    let sync = op.sync.clone().unwrap_or_default();
    let options = sync_options(app, &sync);
    let strategy = sync.sync_strategy.as_ref();
    let hooks = strategy.is_none_or(|s| s.apply.is_none());
    let force = strategy.is_some_and(|s| {
        s.apply.as_ref().and_then(|a| a.force).unwrap_or(false)
            || s.hook.as_ref().and_then(|h| h.force).unwrap_or(false)
    });
    SyncRequest {
        tasks: tasks(cmp, &options),
        selection: TaskSelection::new(sync.resources.clone().unwrap_or_default()),
        dry_run: sync.dry_run.unwrap_or(false),
        prune: sync.prune.unwrap_or(false),
        create_namespace: namespace_to_create(app, &options),
        options,
        hooks,
        force,
        revision: cmp.revision.clone(),
        started_unix: started_at
            .parse::<jiff::Timestamp>()
            .map(|t| t.as_second())
            .unwrap_or_default(),
        health_gate: health_gate(engines),
        permitted: None,
        app_name: app.name().to_string(),
        qualified_name: format!("{}/{}", app.namespace(), app.name()),
        prune_brake: prune_brake(app, cmp, engines),
    }
}

/// The Application's sync options with the operation's over them.
fn sync_options(app: &Application, sync: &SyncOperation) -> SyncOptions {
    let options = SyncOptions::parse(
        app.spec
            .sync_policy
            .as_ref()
            .and_then(|p| p.sync_options.as_ref())
            .into_iter()
            .flatten()
            .map(String::as_str),
    );
    options.merged(&SyncOptions::parse(
        sync.sync_options.iter().flatten().map(String::as_str),
    ))
}

/// The destination namespace to create first (`CreateNamespace=true`), with the managed
/// namespace metadata.
fn namespace_to_create(app: &Application, options: &SyncOptions) -> Option<NamespaceToCreate> {
    options
        .is_true("CreateNamespace")
        .then(|| {
            let meta = app
                .spec
                .sync_policy
                .as_ref()
                .and_then(|p| p.managed_namespace_metadata.clone());
            NamespaceToCreate {
                name: app.spec.destination.namespace.clone().unwrap_or_default(),
                labels: meta
                    .as_ref()
                    .and_then(|m| m.labels.clone())
                    .unwrap_or_default(),
                annotations: meta.and_then(|m| m.annotations).unwrap_or_default(),
            }
        })
        .filter(|ns| !ns.name.is_empty())
}

/// A task for every object to apply or prune, with the ignored differences kept from the live
/// object where `RespectIgnoreDifferences=true`.
fn tasks(cmp: &Comparison, options: &SyncOptions) -> Vec<SyncTask> {
    cmp.resources
        .iter()
        .filter(|r| r.desired.is_some() || r.requires_pruning)
        .map(|r| {
            let mut desired = r.desired.clone();
            if let (Some(d), Some(l)) = (desired.as_mut(), r.live.as_ref())
                && !r.hook
                && options
                    .merged(&SyncOptions::of_object(d))
                    .is_true("RespectIgnoreDifferences")
            {
                cmp.ignore.respect_live(&r.key, d, l);
            }
            SyncTask {
                key: r.key.clone(),
                version: r.version.clone(),
                desired,
                live: r.live.clone(),
                out_of_sync: r.status == Some(SyncStatusCode::OutOfSync),
                shared_with: r.shared_with.clone(),
            }
        })
        .collect()
}

/// The health gate between waves the settings choose (Plumb's when the setting is invalid).
fn health_gate(engines: &plumb_app::Engines) -> HealthGate {
    HealthGate::from_setting(
        engines
            .settings
            .get(plumb_model::settings::SYNC_HEALTH_GATE),
    )
    .unwrap_or_else(|e| {
        tracing::warn!("{e}; using plumb");
        HealthGate::Plumb
    })
}

/// The brake on mass deletion for an automated operation (a manual one was confirmed by whoever
/// requested it: `plumb app sync --prune` asks when the brake would stop it).
fn prune_brake(
    app: &Application,
    cmp: &Comparison,
    engines: &plumb_app::Engines,
) -> Option<plumb_sync::PruneBrake> {
    let op = app.operation.as_ref()?;
    if op.initiated_by.as_ref().and_then(|i| i.automated) != Some(true) {
        return None;
    }
    let sync = op.sync.clone().unwrap_or_default();
    Some(plumb_sync::PruneBrake {
        brake: brake_of(
            app,
            sync.sync_options.as_deref().unwrap_or_default(),
            engines,
        ),
        live_objects: crate::automation::live_objects(cmp),
    })
}

/// The limits of the brake on mass deletion for `app`: its sync options then `extra` (an
/// operation's), over `argocd-cm`, over the defaults. Values that do not parse are logged.
pub(crate) fn brake_of(
    app: &Application,
    extra: &[String],
    engines: &plumb_app::Engines,
) -> plumb_policy::brake::Brake {
    let options: Vec<&str> = app
        .spec
        .sync_policy
        .as_ref()
        .and_then(|p| p.sync_options.as_ref())
        .into_iter()
        .flatten()
        .chain(extra)
        .map(String::as_str)
        .collect();
    let resolved = plumb_policy::brake::Brake::resolve(|k| engines.settings.get(k), &options);
    for problem in &resolved.invalid {
        tracing::warn!(app = %app.name(), "{problem}");
    }
    resolved.brake
}

/// The sources an operation renders instead of the Application's: `sync.source`, or
/// `sync.sources` (a multi-source rollback) each at its entry of `sync.revisions`. The project
/// has permitted them before the operation started (`plumb_policy::project::source_repos`).
fn operation_sources(
    sync: &plumb_model::application::SyncOperation,
) -> Option<Vec<plumb_model::application::ApplicationSource>> {
    if let Some(s) = &sync.source {
        return Some(vec![s.clone()]);
    }
    let mut sources = sync.sources.clone().filter(|s| !s.is_empty())?;
    if let Some(revisions) = sync.revisions.as_ref().filter(|r| r.len() == sources.len()) {
        for (s, r) in sources.iter_mut().zip(revisions) {
            s.target_revision = Some(r.clone());
        }
    }
    Some(sources)
}

/// The sources an operation records: the rollback's source(s), else the Application's own, as
/// written in its spec (not with the revision resolved), so that automation can tell whether
/// the last sync already targeted the same source.
fn recorded_sources(app: &Application) -> Vec<plumb_model::application::ApplicationSource> {
    let sync = app.operation.as_ref().and_then(|o| o.sync.as_ref());
    if let Some(s) = sync.and_then(|s| s.source.clone()) {
        return vec![s];
    }
    match sync
        .and_then(|s| s.sources.clone())
        .filter(|s| !s.is_empty())
    {
        Some(sources) => sources,
        None => app.sources().into_iter().cloned().collect(),
    }
}

pub(super) fn sync_result(app: &Application, cmp: &Comparison, outcome: &SyncOutcome) -> Value {
    let sources = recorded_sources(app);
    let mut result = json!({
        "resources": outcome.results,
        "revision": cmp.revision,
    });
    if sources.len() > 1 {
        result["sources"] = json!(sources);
        result["revisions"] = json!(cmp.revisions);
    } else if let Some(s) = sources.first() {
        result["source"] = json!(s);
    }
    result
}
