//! Running the operation requested on `Application.operation` and recording it in
//! `status.operationState` and `status.history`.
//!
//! The operation is marked `Running` in the status before any change is made, then runs in a
//! task of its own (a sync with waves and hooks can take minutes; reconciles of other
//! Applications go on meanwhile). Progress (the running message and each resource's result) is
//! written as it happens; a failed sync is retried with backoff when the operation (or the
//! Application's `syncPolicy.retry`) asks for it; `Terminating` (written by `plumb app
//! terminate-op`) stops it. A controller that finds an operation `Running` that it did not start
//! itself (it was restarted mid-way) fails it cleanly instead of running it again.

use std::sync::Arc;
use std::time::Duration;

use plumb_model::annotations::DELETION_APPROVED;
use plumb_model::application::{
    Application, OperationPhase, RetryStrategy, RevisionHistory, SyncOperationResource,
    SyncStatusCode,
};
use plumb_sync::{
    Control, HealthGate, NamespaceToCreate, Progress, SyncContext, SyncOptions, SyncOutcome,
    SyncRequest, SyncTask, TaskSelection,
};
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::compare::{
    CompareOptions, Comparison, Refresh, Written, compare_after_sync, compare_with,
};
use crate::error::chain;
use crate::metrics::Timing;
use crate::shared::{Shared, app_key};
use crate::status::{self, now};

/// Message recorded for an operation interrupted by a controller restart.
pub const INTERRUPTED: &str = "Operation was interrupted by a controller restart before it finished; it was not run again. Request the sync again.";

/// How often running hooks and gated waves are looked at.
const POLL: Duration = Duration::from_millis(500);

/// The least time between two writes of a running operation's progress.
const PROGRESS_PACE: Duration = Duration::from_secs(1);

/// The message of an operation that has started (Argo CD's).
const RUNNING_MESSAGE: &str = "one or more tasks are running";

/// The `operationState` written when an operation starts.
pub fn started(app: &Application, now: &str) -> Value {
    // Written as a merge patch over the previous operation's state: clear what belonged to it.
    json!({
        "operation": app.operation,
        "phase": "Running",
        "message": RUNNING_MESSAGE,
        "startedAt": now,
        "finishedAt": null,
        "syncResult": null,
        "retryCount": null,
    })
}

/// The control a running operation gets from the Application as last seen: `Terminating`
/// written by `terminate-op`, and a deletion approval newer than the operation's start.
pub fn control_of(app: &Value) -> Control {
    let state = app.pointer("/status/operationState");
    let terminate =
        state.and_then(|s| s.get("phase")).and_then(Value::as_str) == Some("Terminating");
    let started = state
        .and_then(|s| s.get("startedAt"))
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let approved = app
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(DELETION_APPROVED))
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    Control {
        terminate,
        prune_confirmed: matches!((approved, started), (Some(a), Some(s)) if a >= s),
    }
}

/// Runs the requested operation to its end (with retries) and records the result; the caller
/// has written the `Running` state. `asked`: when the operation was started here; refs come from
/// a Git listing begun since.
pub(crate) async fn drive(
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
        let mut state = Map::new();
        state.insert("message".into(), json!(message));
        state.insert("retryCount".into(), json!(retries));
        if let Some(c) = &cmp {
            state.insert("syncResult".into(), sync_result(&app, c, &outcome));
        }
        let mut fields = Map::new();
        fields.insert("operationState".into(), Value::Object(state));
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

/// When an operation began: `at` as written in its state, `asked` for the Git listing its
/// refs must come from (see [`drive`]).
struct Began<'a> {
    at: &'a str,
    asked: std::time::Instant,
}

/// One attempt: compare, then run the sync with progress written as it goes.
async fn attempt(
    shared: &Arc<Shared>,
    app: &Application,
    project: &plumb_model::application::AppProject,
    cluster: &crate::context::Cluster,
    began: Began<'_>,
    control: &watch::Receiver<Control>,
    written: &std::sync::Mutex<Written>,
) -> (SyncOutcome, Option<Comparison>) {
    let Began {
        at: started_at,
        asked,
    } = began;
    let engines = shared.engines();
    if let Some(refusal) = crate::guard::unenforced_protection(project, &engines.settings) {
        return (SyncOutcome::error(refusal), None);
    }
    let op = app.operation.clone().unwrap_or_default();
    let sync = op.sync.clone().unwrap_or_default();
    // From the live cache, as the reconcile that led here compared (a GET of every desired
    // object, half of them 404 before a first sync, bought nothing the watch had not shown), and
    // with the reconcile's diff configuration, so its server-side results are reused rather than
    // dry-run again.
    let cmp_opts = CompareOptions {
        revision: sync.revision.clone().filter(|r| !r.is_empty()),
        // A sync goes to the branch's head as of its request, not as of a listing shared for
        // the TTL; syncs asked for together share one listing.
        refresh: Refresh::Latest,
        refs_asked_at: Some(asked),
        attribution: true,
        fresh_reads: false,
        sources: operation_sources(&sync),
        source_repos: project.spec.source_repos.clone().unwrap_or_default(),
    };
    let local = sync.manifests.as_deref();
    let cmp = match compare_with(app, &engines, cluster, &shared.renderer, &cmp_opts, local).await {
        Ok(c) => c,
        Err(e) => {
            return (
                SyncOutcome::error(format!("ComparisonError: {}", chain(&e))),
                None,
            );
        }
    };
    // `RespectIgnoreDifferences` runs the jq ignore rules over every object: CPU work, off the
    // runtime.
    let built = {
        let (app, engines, started_at) = (app.clone(), engines.clone(), started_at.to_string());
        tokio::task::spawn_blocking(move || {
            let request = request(&app, &cmp, &engines, &started_at);
            (request, cmp)
        })
        .await
    };
    let (mut request, cmp) = match built {
        Ok(built) => built,
        Err(e) => {
            return (SyncOutcome::error(format!("preparing the sync: {e}")), None);
        }
    };
    request.permitted = Some(crate::guard::permission_check(project, app, cluster));

    let (tx, rx) = watch::channel::<Option<Progress>>(None);
    let writer = {
        let result_base = sync_result(
            app,
            &cmp,
            &SyncOutcome {
                phase: OperationPhase::Running,
                message: String::new(),
                results: Vec::new(),
                terminated: false,
                braked: false,
            },
        );
        tokio::spawn(write_progress(shared.clone(), app.clone(), result_base, rx))
    };
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
        applier: &cluster.applier,
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
        let mut fields = Map::new();
        fields.insert(
            "operationState".into(),
            json!({"message": p.message, "syncResult": result}),
        );
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
    engines: &crate::context::Engines,
    started_at: &str,
) -> SyncRequest {
    let op = app.operation.clone().unwrap_or_default();
    let sync = op.sync.clone().unwrap_or_default();
    let mut options = SyncOptions::parse(
        app.spec
            .sync_policy
            .as_ref()
            .and_then(|p| p.sync_options.as_ref())
            .into_iter()
            .flatten()
            .map(String::as_str),
    );
    options = options.merged(&SyncOptions::parse(
        sync.sync_options.iter().flatten().map(String::as_str),
    ));
    let create_namespace = options
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
        .filter(|ns| !ns.name.is_empty());
    let tasks: Vec<SyncTask> = cmp
        .resources
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
        .collect();
    let selection: Vec<SyncOperationResource> = sync.resources.clone().unwrap_or_default();
    let strategy = sync.sync_strategy.as_ref();
    let hooks = strategy.is_none_or(|s| s.apply.is_none());
    let force = strategy.is_some_and(|s| {
        s.apply.as_ref().and_then(|a| a.force).unwrap_or(false)
            || s.hook.as_ref().and_then(|h| h.force).unwrap_or(false)
    });
    let health_gate = HealthGate::from_setting(
        engines
            .settings
            .get(plumb_model::settings::SYNC_HEALTH_GATE),
    )
    .unwrap_or_else(|e| {
        tracing::warn!("{e}; using plumb");
        HealthGate::Plumb
    });
    SyncRequest {
        tasks,
        selection: TaskSelection::new(selection),
        dry_run: sync.dry_run.unwrap_or(false),
        prune: sync.prune.unwrap_or(false),
        options,
        create_namespace,
        hooks,
        force,
        revision: cmp.revision.clone(),
        started_unix: started_at
            .parse::<jiff::Timestamp>()
            .map(|t| t.as_second())
            .unwrap_or_default(),
        health_gate,
        permitted: None,
        app_name: app.name().to_string(),
        qualified_name: format!("{}/{}", app.namespace(), app.name()),
        prune_brake: prune_brake(app, cmp, engines),
    }
}

/// The brake on mass deletion for an automated operation (a manual one was confirmed by whoever
/// requested it: `plumb app sync --prune` asks when the brake would stop it).
fn prune_brake(
    app: &Application,
    cmp: &Comparison,
    engines: &crate::context::Engines,
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
    engines: &crate::context::Engines,
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

fn sync_result(app: &Application, cmp: &Comparison, outcome: &SyncOutcome) -> Value {
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

/// How the operation ended.
struct End {
    outcome: SyncOutcome,
    message: String,
    retries: u64,
    cmp: Option<Comparison>,
    /// What the sync wrote: the comparison recorded with the result reads it.
    written: Written,
    /// When the operation was asked for (see [`drive`]).
    asked: std::time::Instant,
}

/// How long the end of an operation is retried while the API server does not answer.
const PERSIST_FOR: Duration = Duration::from_secs(120);

/// Runs an API write of an operation's end, retrying while the failure is transient (the API
/// server or etcd restarting, 5xx, 429, no connection). Giving up at once would leave the
/// operation `Running`, which the next reconcile fails as interrupted: the outcome of a sync that
/// did apply its objects would be lost.
async fn persist<F, Fut>(name: &str, what: &str, mut write: F) -> crate::error::Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::error::Result<()>>,
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
fn is_transient(e: &crate::error::Error) -> bool {
    match e {
        crate::error::Error::Api { source, .. } => match source.as_ref() {
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
async fn finish(
    shared: &Arc<Shared>,
    app: &Application,
    project: &plumb_model::application::AppProject,
    cluster: &crate::context::Cluster,
    started_at: &str,
    end: End,
) {
    let End {
        outcome,
        message,
        retries,
        cmp,
        written,
        asked,
    } = end;
    let key = app_key(app);
    let name = key.as_str();
    let op = app.operation.clone().unwrap_or_default();
    let sync = op.sync.clone().unwrap_or_default();
    let dry_run = sync.dry_run.unwrap_or(false);
    let selective = sync.resources.as_ref().is_some_and(|r| !r.is_empty());
    let cleared = persist(name, "clearing the operation", || {
        shared.clear_operation(app)
    })
    .await;
    if let Err(e) = cleared {
        tracing::warn!(app = %name, "clearing the operation: {}", chain(&e));
    }
    let engines = shared.engines();
    let finished_at = now();
    let mut state = json!({
        "operation": op,
        "phase": outcome.phase.as_str(),
        "message": message,
        "startedAt": started_at,
        "finishedAt": finished_at,
        "retryCount": (retries > 0).then_some(retries),
    });
    let revision = cmp.as_ref().map(|c| c.revision.clone()).unwrap_or_default();
    if let Some(c) = &cmp {
        state["syncResult"] = sync_result(app, c, &outcome);
    }
    let opts = CompareOptions {
        revision: None,
        // The status recorded with the result stands until the next poll: it must not come
        // from a listing that predates a push (a rollback would read Synced against an old HEAD).
        refresh: Refresh::Latest,
        refs_asked_at: Some(asked),
        attribution: true,
        fresh_reads: false,
        sources: None,
        source_repos: project.spec.source_repos.clone().unwrap_or_default(),
    };
    let now = status::now();
    // What the sync applied is read from its answers (the live cache may not have seen the
    // writes yet), what it pruned or ran as hooks from the API server, the rest from the cache.
    let compared =
        compare_after_sync(app, &engines, cluster, &shared.renderer, &opts, &written).await;
    let (mut fields, codes) = match compared {
        Ok(mut c) => {
            crate::guard::apply_project(&mut c, project, app, cluster, &engines);
            let codes = (
                c.sync.as_str().to_string(),
                c.health.code.as_str().to_string(),
            );
            (status::from_comparison(app, &c, &now), codes)
        }
        Err(e) => (
            status::from_comparison_error(app, &e, &now),
            ("Unknown".to_string(), "Unknown".to_string()),
        ),
    };
    // The transitions this write records are announced against the status as last written
    // (reconciles' writes are paced while the operation runs, so this may be the first to
    // record them).
    let before = crate::reconcile::read_app(shared, &key)
        .await
        .ok()
        .flatten();
    fields.insert("operationState".into(), state);
    // Argo records a deployment in history only for a successful, full, real sync.
    if outcome.phase == OperationPhase::Succeeded
        && !dry_run
        && !selective
        && let Some(c) = &cmp
    {
        let entry = history_entry(app, c, started_at, &finished_at);
        fields.insert("history".into(), json!(history_with(app, entry)));
    }
    let written = persist(name, "recording the operation result", || {
        shared.write_status(app, fields.clone())
    })
    .await;
    if let Err(e) = &written {
        tracing::warn!(app = %name, "recording the operation result: {}", chain(e));
    }
    if outcome.phase == OperationPhase::Succeeded {
        shared
            .events
            .normal(
                app,
                "OperationCompleted",
                format!("Sync operation to {revision} succeeded"),
            )
            .await;
    } else {
        shared
            .events
            .warning(
                app,
                "OperationCompleted",
                format!("Sync operation to {revision} failed: {message}"),
            )
            .await;
    }
    // As Argo CD: the operation's end first, then the status changes it brought.
    if written.is_ok() {
        let before = before.as_ref().unwrap_or(app);
        crate::reconcile::announce(shared, before, &codes.0, &codes.1).await;
    }
}

fn history_entry(
    app: &Application,
    cmp: &Comparison,
    started_at: &str,
    finished_at: &str,
) -> RevisionHistory {
    let next_id = app
        .status
        .as_ref()
        .and_then(|s| s.history.as_ref())
        .and_then(|h| h.iter().map(|e| e.id).max())
        .map_or(0, |m| m + 1);
    let multi = cmp.sources.len() > 1;
    RevisionHistory {
        // Local manifests have no revision: Argo CD records none (`omitempty`).
        revision: Some(cmp.revision.clone()).filter(|r| !r.is_empty()),
        deployed_at: finished_at.to_string(),
        id: next_id,
        source: if multi {
            None
        } else {
            cmp.sources.first().cloned()
        },
        deploy_started_at: Some(started_at.to_string()),
        sources: multi.then(|| cmp.sources.clone()),
        revisions: (cmp.revisions.len() > 1).then(|| cmp.revisions.clone()),
        initiated_by: app.operation.as_ref().and_then(|o| o.initiated_by.clone()),
    }
}

/// The history after appending `entry`, capped by `spec.revisionHistoryLimit` (default 10).
pub fn history_with(app: &Application, entry: RevisionHistory) -> Vec<RevisionHistory> {
    let mut h = app
        .status
        .as_ref()
        .and_then(|s| s.history.clone())
        .unwrap_or_default();
    h.push(entry);
    let limit = usize::try_from(app.spec.revision_history_limit.unwrap_or(10).max(1)).unwrap_or(10);
    if h.len() > limit {
        h.drain(..h.len() - limit);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16) -> crate::error::Error {
        crate::error::Error::Api {
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
        assert!(!is_transient(&crate::error::Error::Task("x".into())));
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

    #[test]
    fn terminate_and_deletion_approval_come_from_the_application() {
        let app = json!({
            "metadata": {"annotations": {DELETION_APPROVED: "2026-11-30T10:00:05Z"}},
            "status": {"operationState": {"phase": "Terminating", "startedAt": "2026-11-30T10:00:00Z"}}
        });
        assert_eq!(
            control_of(&app),
            Control {
                terminate: true,
                prune_confirmed: true
            }
        );
        let stale = json!({
            "metadata": {"annotations": {DELETION_APPROVED: "2026-11-30T09:00:00Z"}},
            "status": {"operationState": {"phase": "Running", "startedAt": "2026-11-30T10:00:00Z"}}
        });
        assert_eq!(control_of(&stale), Control::default());
    }
}
