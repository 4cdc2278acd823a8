//! The notifications controller (Argo CD's `argocd-notifications-controller`, here a task of
//! `plumb controller`): watches Applications, AppProjects, `argocd-notifications-cm` and
//! `argocd-notifications-secret`; for each Application whose sync status is up to date, runs
//! the subscribed triggers, sends what is due, and records it in the `notified` annotation.
//! Every Application is looked at again every [`Config::resync`] (Argo's informer resync) and
//! whenever the ConfigMap or Secret changes.
//!
//! Bounds: the trigger conditions of one Application run on a blocking thread under
//! [`Config::eval_deadline`]; past it the pass is abandoned, reported with the Application
//! named, and retried at the next resync (a runaway condition keeps its thread until it ends:
//! the static bounds in `triggers` are what keep that finite).

mod events;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::{Value, json};

use crate::config::Config as NotificationsConfig;
use crate::engine::Engine;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::state::NOTIFIED_ANNOTATION;

/// Whether this replica works (the leader, with several replicas).
pub type Gate = Arc<dyn Fn() -> bool + Send + Sync>;
/// Whether Applications in a namespace are handled.
pub type NamespaceFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// How the controller runs.
#[derive(Clone)]
pub struct Config {
    pub control_namespace: String,
    /// Watch Applications in every namespace (then filtered by `namespaces`), else the control
    /// namespace only.
    pub all_namespaces: bool,
    pub namespaces: NamespaceFilter,
    pub config_map: String,
    pub secret: String,
    pub resync: Duration,
    pub eval_deadline: Duration,
    pub concurrency: u16,
}

impl Config {
    /// Argo's names and periods, the control namespace only.
    pub fn new(control_namespace: &str) -> Self {
        let ns = control_namespace.to_string();
        Config {
            control_namespace: ns.clone(),
            all_namespaces: false,
            namespaces: Arc::new(move |n| n == ns),
            config_map: "argocd-notifications-cm".into(),
            secret: "argocd-notifications-secret".into(),
            resync: Duration::from_secs(60),
            eval_deadline: Duration::from_secs(2),
            // Sends are awaited inside a pass: a receiver that never answers holds a worker for
            // up to (retryMax + 1) x 30 s, so more workers than the Application controller.
            concurrency: 10,
        }
    }
}

struct Ctx {
    client: kube::Client,
    config: Config,
    gate: Gate,
    metrics: Metrics,
    events: events::Events,
    projects: Store<DynamicObject>,
    config_maps: Store<ConfigMap>,
    secrets: Store<Secret>,
    engine: Mutex<Option<(String, Arc<Engine>)>>,
}

/// Runs until the Application watch ends.
pub async fn run(
    client: kube::Client,
    config: Config,
    metrics: Metrics,
    gate: Gate,
) -> Result<(), Error> {
    let ns = config.control_namespace.clone();
    let pw = reflector::store::Writer::new(plumb_app::appproject_resource());
    let projects = pw.as_reader();
    let proj_api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &plumb_app::appproject_resource());
    spawn_reflector(
        reflector::reflector(pw, watcher(proj_api, watcher::Config::default())),
        None,
    );
    let (changed_tx, changed_rx) = futures::channel::mpsc::channel::<()>(16);
    let (config_maps, cw) = reflector::store();
    let cm_api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let by_name = |n: &str| watcher::Config::default().fields(&format!("metadata.name={n}"));
    spawn_reflector(
        reflector::reflector(cw, watcher(cm_api, by_name(&config.config_map))),
        Some(changed_tx.clone()),
    );
    let (secrets, sw) = reflector::store();
    let secret_api: Api<Secret> = Api::namespaced(client.clone(), &ns);
    spawn_reflector(
        reflector::reflector(sw, watcher(secret_api, by_name(&config.secret))),
        Some(changed_tx),
    );
    for ready in [
        projects.wait_until_ready().await,
        config_maps.wait_until_ready().await,
        secrets.wait_until_ready().await,
    ] {
        ready.map_err(|e| Error::Service {
            service: "controller".into(),
            message: e.to_string(),
        })?;
    }
    let ar = plumb_app::application_resource();
    let apps: Api<DynamicObject> = if config.all_namespaces {
        Api::all_with(client.clone(), &ar)
    } else {
        Api::namespaced_with(client.clone(), &ns, &ar)
    };
    let concurrency = config.concurrency;
    let ctx = Arc::new(Ctx {
        events: events::Events::new(client.clone()),
        client,
        config,
        gate,
        metrics,
        projects,
        config_maps,
        secrets,
        engine: Mutex::new(None),
    });
    Controller::new_with(apps, watcher::Config::default(), ar)
        .with_config(controller::Config::default().concurrency(concurrency))
        .reconcile_all_on(changed_rx)
        .run(reconcile, error_policy, ctx)
        .for_each(|_| futures::future::ready(()))
        .await;
    Ok(())
}

fn spawn_reflector<K>(
    stream: impl futures::Stream<Item = watcher::Result<watcher::Event<K>>> + Send + 'static,
    changed: Option<futures::channel::mpsc::Sender<()>>,
) where
    K: Send + 'static,
{
    tokio::spawn(async move {
        let mut s = std::pin::pin!(stream.default_backoff());
        while let Some(ev) = s.next().await {
            match ev {
                Ok(
                    watcher::Event::Apply(_) | watcher::Event::Delete(_) | watcher::Event::InitDone,
                ) => {
                    if let Some(tx) = &changed {
                        // Full: a re-evaluation of everything is already pending.
                        let _ = tx.clone().try_send(());
                    }
                }
                Ok(_) => {}
                Err(e) => tracing::warn!("notifications controller watch: {e}"),
            }
        }
    });
}

fn error_policy(_app: Arc<DynamicObject>, e: &Error, ctx: Arc<Ctx>) -> Action {
    tracing::warn!("notifications: {e}");
    Action::requeue(ctx.config.resync)
}

impl Ctx {
    /// The engine of the current ConfigMap and Secret (rebuilt when either changes); `None`
    /// without a ConfigMap.
    fn engine(&self) -> Option<Arc<Engine>> {
        let cm = self.config_maps.state().into_iter().next()?;
        let secret = self.secrets.state().into_iter().next();
        let version = format!(
            "{}/{}",
            cm.metadata.resource_version.as_deref().unwrap_or_default(),
            secret
                .as_ref()
                .and_then(|s| s.metadata.resource_version.as_deref())
                .unwrap_or_default()
        );
        let mut cached = self.engine.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((v, e)) = cached.as_ref()
            && *v == version
        {
            return Some(e.clone());
        }
        let data: BTreeMap<String, String> =
            cm.data.clone().unwrap_or_default().into_iter().collect();
        let secret_data: BTreeMap<String, Vec<u8>> = secret
            .and_then(|s| s.data.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, v.0))
            .collect();
        let (cfg, errors) = NotificationsConfig::parse(&data, &secret_data);
        let engine = Arc::new(Engine::new(cfg, errors));
        for e in &engine.errors {
            tracing::error!("notifications configuration: {e}");
        }
        *cached = Some((version, engine.clone()));
        Some(engine)
    }

    fn project(&self, app: &Value) -> Option<Value> {
        let name = app
            .pointer("/spec/project")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or("default");
        let key = ObjectRef::new_with(name, plumb_app::appproject_resource())
            .within(&self.config.control_namespace);
        let p = self.projects.get(&key)?;
        serde_json::to_value(&*p).ok()
    }
}

async fn reconcile(app: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let requeue = Action::requeue(ctx.config.resync);
    let namespace = app.metadata.namespace.clone().unwrap_or_default();
    let name = app.metadata.name.clone().unwrap_or_default();
    if !(ctx.gate)() || !(ctx.config.namespaces)(&namespace) {
        return Ok(requeue);
    }
    let Some(engine) = ctx.engine() else {
        return Ok(requeue);
    };
    let app_json = serde_json::to_value(&*app).map_err(|e| Error::Service {
        service: "controller".into(),
        message: format!("Application {namespace}/{name}: {e}"),
    })?;
    if !sync_status_refreshed(&app_json) {
        tracing::debug!(app = %name, "notifications: sync status out of date");
        return Ok(requeue);
    }
    let project = ctx.project(&app_json);
    let plan = plan_within(
        &engine,
        &app_json,
        project.as_ref(),
        ctx.config.eval_deadline,
    )
    .await;
    let plan = match plan {
        Some(Ok(plan)) => plan,
        Some(Err(join)) => {
            tracing::error!(app = %name, "notifications: trigger evaluation failed: {join}");
            return Ok(requeue);
        }
        None => {
            let msg = format!(
                "the trigger conditions of Application {namespace}/{name} took more than {:?}; skipped until the next resync",
                ctx.config.eval_deadline
            );
            tracing::error!("notifications: {msg}");
            ctx.events.warning(&app, "NotificationTriggerTimeout", msg);
            return Ok(requeue);
        }
    };
    for e in &plan.errors {
        tracing::warn!(app = %format!("{namespace}/{name}"), "notifications: {e}");
    }
    let now = jiff::Timestamp::now().as_second();
    let outcome = engine
        .deliver(&plan, &app_json, project.as_ref(), now, &ctx.metrics)
        .await;
    for d in &outcome.deliveries {
        match &d.error {
            None => {
                tracing::info!(app = %name, trigger = %d.trigger, "notification sent to {}", d.destination)
            }
            Some(err) => {
                let msg = format!(
                    "failed to deliver notification {} to {}: {err}",
                    d.trigger, d.destination
                );
                tracing::error!(app = %format!("{namespace}/{name}"), "{msg}");
                ctx.events.warning(&app, "NotificationDeliveryFailed", msg);
            }
        }
    }
    if let Some(value) = outcome.annotation {
        patch_state(&ctx, &app, value).await?;
    }
    Ok(requeue)
}

/// [`Engine::plan`] on its own thread under `deadline` (`None` past it: the thread is left to
/// finish on its own, its result dropped). A detached thread rather than tokio's blocking pool:
/// the runtime waits for blocking tasks when it shuts down, a runaway would hold the exit.
pub async fn plan_within(
    engine: &Arc<Engine>,
    app: &Value,
    project: Option<&Value>,
    deadline: Duration,
) -> Option<Result<crate::engine::Plan, String>> {
    let (e, a, p) = (engine.clone(), app.clone(), project.cloned());
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("notifications-eval".into())
        .spawn(move || {
            let _ = tx.send(e.plan(&a, p.as_ref()));
        });
    if let Err(e) = spawned {
        return Some(Err(format!("starting the evaluation thread: {e}")));
    }
    match tokio::time::timeout(deadline, rx).await {
        Ok(Ok(plan)) => Some(Ok(plan)),
        Ok(Err(_)) => Some(Err("the evaluation thread panicked".into())),
        Err(_) => None,
    }
}

async fn patch_state(ctx: &Ctx, app: &DynamicObject, value: Option<String>) -> Result<(), Error> {
    let namespace = app.metadata.namespace.clone().unwrap_or_default();
    let name = app.metadata.name.clone().unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctx.client.clone(),
        &namespace,
        &plumb_app::application_resource(),
    );
    let patch = json!({"metadata": {"annotations": {NOTIFIED_ANNOTATION: value}}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::Kube {
            what: format!("recording notifications on Application {namespace}/{name}"),
            source: Box::new(source),
        })?;
    Ok(())
}

/// Argo CD's `isAppSyncStatusRefreshed`: after an operation completed, wait until the
/// Application was reconciled again, so triggers see the sync status it led to.
pub fn sync_status_refreshed(app: &Value) -> bool {
    let Some(op) = app
        .pointer("/status/operationState")
        .filter(|v| v.is_object())
    else {
        return true;
    };
    let Some(phase) = op.get("phase").and_then(Value::as_str) else {
        return true;
    };
    if !matches!(phase, "Failed" | "Error" | "Succeeded") {
        return true;
    }
    let time = |p: &str| {
        app.pointer(p)
            .and_then(Value::as_str)
            .and_then(|s| crate::vars::parse_rfc3339(s).ok())
    };
    let Some(finished) = time("/status/operationState/finishedAt") else {
        return false;
    };
    let epoch = chrono::DateTime::UNIX_EPOCH.fixed_offset();
    let reconciled = time("/status/reconciledAt").unwrap_or(epoch);
    let observed = time("/status/observedAt").unwrap_or(epoch);
    !(finished > reconciled && finished > observed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_runaway_condition_is_abandoned_at_the_deadline() {
        // Three nested predicates over 3,000 resources: 2.7e10 steps, within the static bounds.
        let resources: Vec<Value> = (0..3000)
            .map(|i| json!({"name": format!("r{i}")}))
            .collect();
        let app = json!({"metadata": {"name": "big", "annotations": {
            "notifications.argoproj.io/subscribe.slow.hook": "r", "notifications.argoproj.io/subscribe.fast.hook": "r"}},
            "status": {"resources": resources}});
        let cm = BTreeMap::from([
            ("trigger.slow".to_string(), "- when: \"all(app.status.resources, {all(app.status.resources, {all(app.status.resources, {#.name != ''})})})\"\n  send: [t]".to_string()),
            ("trigger.fast".to_string(), "- when: 'true'\n  send: [t]".to_string()),
        ]);
        let (cfg, errors) = NotificationsConfig::parse(&cm, &BTreeMap::new());
        assert!(errors.is_empty());
        let engine = Arc::new(Engine::new(cfg, Vec::new()));
        assert!(engine.errors.is_empty(), "{:?}", engine.errors);
        assert!(
            plan_within(&engine, &app, None, Duration::from_millis(300))
                .await
                .is_none()
        );
        // Without the runaway subscription, the same Application is evaluated.
        let mut small = app.clone();
        small["metadata"]["annotations"] =
            json!({"notifications.argoproj.io/subscribe.fast.hook": "r"});
        let plan = plan_within(&engine, &small, None, Duration::from_secs(30)).await;
        assert!(plan.is_some_and(|p| p.is_ok_and(|p| p.triggers[0].1[0].triggered)));
    }

    #[test]
    fn sync_status_refreshed_as_argo() {
        let app = |phase: &str, finished: &str, reconciled: &str| {
            json!({"status": {"reconciledAt": reconciled,
                "operationState": {"phase": phase, "finishedAt": finished}}})
        };
        assert!(sync_status_refreshed(&json!({})));
        assert!(sync_status_refreshed(&app("Running", "", "")));
        assert!(!sync_status_refreshed(&app(
            "Succeeded",
            "2024-01-01T00:00:10Z",
            "2024-01-01T00:00:05Z"
        )));
        assert!(sync_status_refreshed(&app(
            "Succeeded",
            "2024-01-01T00:00:10Z",
            "2024-01-01T00:00:10Z"
        )));
        assert!(!sync_status_refreshed(
            &json!({"status": {"operationState": {"phase": "Failed"}}})
        ));
    }
}
