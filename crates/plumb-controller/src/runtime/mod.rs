//! The controller process: watches Applications, AppProjects and the settings ConfigMap, keeps a
//! live cache of the in-cluster destination, and reconciles Applications from a deduplicating
//! work queue on a few workers. Triggers: any change of an Application (spec, operation, refresh
//! annotation), of its project, of the settings, of a tracked live object, and a periodic poll
//! (`timeout.reconciliation` plus jitter) that also picks up new commits.
//!
//! Here: the configuration, the state the tasks share (`Shared`: engines, clusters, running
//! operations, automation memory), the queue and the workers; the watchers are in `watchers`.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::watcher;
use plumb_kube::{LiveCacheConfig, LiveEvent};
use plumb_model::Settings;
use plumb_model::application::Application;
use plumb_model::settings::{RECONCILIATION_JITTER, RECONCILIATION_TIMEOUT};
use plumb_source::Renderer;
use plumb_sync::Control;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::context::{Cluster, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use crate::error::{Error, Result, chain};
use crate::events::Events;
use crate::metrics::Metrics;

mod watchers;

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// Namespace holding Applications, AppProjects and the settings ConfigMap.
    pub control_namespace: String,
    /// Name of the settings ConfigMap.
    pub settings_name: String,
    /// Where the Git and manifest caches live.
    pub cache_dir: PathBuf,
    /// Argo-layout Lua health directories.
    pub customizations: Vec<PathBuf>,
    /// Reconcile workers.
    pub workers: usize,
    /// `/metrics` and `/healthz` listen address; `None` disables the server.
    pub metrics_addr: Option<SocketAddr>,
    /// Source tools (helm, kustomize) and limits.
    pub source: plumb_source::Config,
    /// Pause between sync waves (Argo CD's `ARGOCD_SYNC_WAVE_DELAY`, 2 s).
    pub sync_wave_delay: Duration,
    /// How often API discovery runs again (30 s): an aggregated API whose backend stops
    /// answering after start is then reported unavailable instead of compared from stale cache,
    /// and a new APIService is seen. A failing watch runs it sooner.
    pub discovery_interval: Duration,
    /// Namespaces besides the control namespace whose Applications are reconciled (Argo CD's
    /// `--application-namespaces`: globs, or regular expressions written `/.../`). `None` reads
    /// the `application.namespaces` key of `argocd-cmd-params-cm` in the control namespace at
    /// start; an empty list (the default there) means the control namespace only.
    pub application_namespaces: Option<Vec<String>>,
    /// Replicas sharing the work through Leases (`--replicas`, `--shard`, ...; one replica by
    /// default: no Lease, everything reconciled here). See docs/sharding.md.
    pub sharding: crate::sharding::ShardingConfig,
}

impl ControllerConfig {
    /// Defaults: namespace `argocd`, ConfigMap `argocd-cm`, 4 workers, metrics on 127.0.0.1:8082.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        let cache_dir = cache_dir.into();
        Self {
            control_namespace: crate::context::DEFAULT_CONTROL_NAMESPACE.to_string(),
            settings_name: "argocd-cm".to_string(),
            // Every Application on one repository shares a ref listing for a few seconds: a
            // poll wave or a restart lists each repository a handful of times, not once per
            // Application. A refresh annotation or webhook invalidates it at once.
            source: plumb_source::Config::new(cache_dir.clone())
                .ref_cache_ttl(Duration::from_secs(5)),
            cache_dir,
            customizations: Vec::new(),
            workers: 4,
            metrics_addr: Some(SocketAddr::from(([127, 0, 0, 1], 8082))),
            sync_wave_delay: Duration::from_secs(2),
            discovery_interval: Duration::from_secs(30),
            application_namespaces: None,
            sharding: crate::sharding::ShardingConfig::default(),
        }
    }
}

/// The `argoproj.io/v1alpha1` applications resource.
pub fn application_resource() -> ApiResource {
    ApiResource {
        group: "argoproj.io".into(),
        version: "v1alpha1".into(),
        api_version: "argoproj.io/v1alpha1".into(),
        kind: "Application".into(),
        plural: "applications".into(),
    }
}

/// The `argoproj.io/v1alpha1` appprojects resource.
pub fn appproject_resource() -> ApiResource {
    ApiResource {
        group: "argoproj.io".into(),
        version: "v1alpha1".into(),
        api_version: "argoproj.io/v1alpha1".into(),
        kind: "AppProject".into(),
        plural: "appprojects".into(),
    }
}

/// A cluster from a cluster Secret: the Secret as read, the connection, its live cache task.
type RemoteCluster = (
    crate::clusters::ClusterSecret,
    Arc<Cluster>,
    tokio::task::JoinHandle<()>,
);

/// State shared by the watchers and workers.
pub(crate) struct Shared {
    pub(crate) config: ControllerConfig,
    pub(crate) client: kube::Client,
    pub(crate) renderer: Arc<Renderer>,
    pub(crate) events: Events,
    pub(crate) metrics: Arc<Metrics>,
    engines: RwLock<Arc<Engines>>,
    in_cluster: Arc<Cluster>,
    /// Clusters from Argo cluster Secrets, with the task driving each one's live cache.
    remote: RwLock<Vec<RemoteCluster>>,
    /// Operations running in this process, with the channel that tells each one to stop.
    running_ops: Mutex<HashMap<String, watch::Sender<Control>>>,
    /// Automated attempts started again after a failure: Application → (revision, count).
    auto_failures: Mutex<HashMap<String, (String, u32)>>,
    /// The pending delayed reconcile of each Application.
    wakes: Mutex<HashMap<String, Instant>>,
    /// The last automation skip reported per Application (so each is said once).
    last_skip: Mutex<HashMap<String, String>>,
    /// Keys (`namespace/name`) of the Applications reconciled, kept by the Application watcher.
    known_apps: Mutex<std::collections::BTreeSet<String>>,
    /// The namespaces besides the control namespace whose Applications are reconciled (patterns,
    /// resolved from the configuration or `argocd-cmd-params-cm` at start).
    pub(crate) app_namespaces: Vec<String>,
    queue: Queue,
    /// This replica's part when several share the work (`None`: one replica does everything).
    pub(crate) sharding: Option<Arc<crate::sharding::Sharding>>,
    /// Woken when a watch fails: discovery runs again (a group may have gone).
    pub(crate) rediscover: tokio::sync::Notify,
}

impl Shared {
    /// The Applications of `namespace` (an Application's own namespace: every read and write
    /// of an Application goes there).
    pub(crate) fn apps_api_in(&self, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), namespace, &application_resource())
    }

    /// What the Application watcher lists: the control namespace alone, or every namespace
    /// when others are permitted (filtered by [`Shared::namespace_enabled`]). One cluster-wide
    /// watch rather than one per namespace, as Argo CD does: the patterns may be globs or
    /// regular expressions matching namespaces created later, which per-namespace watches would
    /// miss without a second watch on Namespaces.
    pub(crate) fn apps_watch_api(&self) -> Api<DynamicObject> {
        if self.app_namespaces.is_empty() {
            self.apps_api_in(&self.config.control_namespace)
        } else {
            Api::all_with(self.client.clone(), &application_resource())
        }
    }

    /// Whether Applications in `namespace` are reconciled: the control namespace, or one the
    /// configured patterns match (Argo's `IsNamespaceEnabled`). Others are never touched.
    pub(crate) fn namespace_enabled(&self, namespace: &str) -> bool {
        namespace == self.config.control_namespace
            || plumb_policy::project::namespace_in_list(&self.app_namespaces, namespace)
    }

    /// The queue key of the Application that tracks objects under `instance` (its instance
    /// name: `name` in the control namespace, `namespace_name` elsewhere; neither a namespace
    /// nor a name can contain `_`).
    pub(crate) fn key_of_instance(&self, instance: &str) -> String {
        match instance.split_once('_') {
            Some((ns, name)) => format!("{ns}/{name}"),
            None => format!("{}/{instance}", self.config.control_namespace),
        }
    }

    pub(crate) fn engines(&self) -> Arc<Engines> {
        self.engines
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn cluster_for(&self, app: &Application) -> Option<Arc<Cluster>> {
        let d = &app.spec.destination;
        let (server, name) = (d.server.as_deref(), d.name.as_deref());
        if self.in_cluster.is_destination(server, name) {
            return Some(self.in_cluster.clone());
        }
        self.remote
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(_, c, _)| c.is_destination(server, name))
            .map(|(_, c, _)| c.clone())
    }

    pub(crate) fn is_running(&self, name: &str) -> bool {
        self.running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(name)
    }

    /// Registers a starting operation; its control follows the Application from now on.
    pub(crate) fn start_operation(&self, name: &str) -> watch::Receiver<Control> {
        let (tx, rx) = watch::channel(Control::default());
        self.running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), tx);
        rx
    }

    pub(crate) fn end_operation(&self, name: &str) {
        self.running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// Passes terminate requests and deletion approvals to a running operation.
    fn update_control(&self, name: &str, app: &Value) {
        if let Some(tx) = self
            .running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            let c = crate::operation::control_of(app);
            tx.send_if_modified(|cur| {
                let changed = *cur != c;
                *cur = c;
                changed
            });
        }
    }

    /// Stops every operation running here (this replica lost its Lease: another one now
    /// counts it dead and fails them as interrupted, so they must not go on writing).
    fn terminate_all(&self) {
        for tx in self
            .running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            tx.send_if_modified(|c| !std::mem::replace(&mut c.terminate, true));
        }
    }

    /// Whether this replica reconciles the Application `key` (always, with one replica).
    pub(crate) fn owns(&self, key: &str) -> bool {
        self.sharding.as_ref().is_none_or(|s| s.owns(key))
    }

    pub(crate) fn requeue(&self, name: &str) {
        self.queue.push(name);
    }

    /// Reconciles the Application again after `after`. One wake-up per Application is kept
    /// (the earliest): a blocked Application reconciled often does not pile up sleeping tasks.
    pub(crate) fn requeue_after(&self, name: &str, after: Duration) {
        let at = Instant::now() + after;
        {
            let mut wakes = self.wakes.lock().unwrap_or_else(|e| e.into_inner());
            if wakes
                .get(name)
                .is_some_and(|t| *t <= at && *t > Instant::now())
            {
                return;
            }
            wakes.insert(name.to_string(), at);
        }
        let queue = self.queue.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            queue.push(&name);
        });
    }

    /// Failed automated attempts started again for `revision` (0 after a revision change).
    pub(crate) fn auto_failures(&self, name: &str, revision: &str) -> u32 {
        let mut m = self.auto_failures.lock().unwrap_or_else(|e| e.into_inner());
        match m.get(name) {
            Some((rev, n)) if rev == revision => *n,
            _ => {
                m.insert(name.to_string(), (revision.to_string(), 0));
                0
            }
        }
    }

    pub(crate) fn count_auto_failure(&self, name: &str) {
        if let Some((_, n)) = self
            .auto_failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(name)
        {
            *n += 1;
        }
    }

    /// Drops what automation remembers of a deleted Application.
    pub(crate) fn forget_automation(&self, name: &str) {
        self.auto_failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.last_skip
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.wakes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// Records a skip message; returns whether it is new for this Application.
    pub(crate) fn note_skip(&self, name: &str, message: &str) -> bool {
        let mut m = self.last_skip.lock().unwrap_or_else(|e| e.into_inner());
        if m.get(name).map(String::as_str) == Some(message) {
            return false;
        }
        m.insert(name.to_string(), message.to_string());
        true
    }

    pub(crate) fn poll_interval(&self) -> Duration {
        parse_duration(self.engines().settings.get(RECONCILIATION_TIMEOUT))
            .unwrap_or(Duration::from_secs(120))
    }

    fn jitter(&self) -> Duration {
        parse_duration(self.engines().settings.get(RECONCILIATION_JITTER))
            .unwrap_or(Duration::from_secs(60))
    }
}

/// A deduplicating queue: an Application waits at most once; one queued while it is being
/// reconciled is reconciled again afterwards.
#[derive(Clone)]
struct Queue {
    tx: mpsc::UnboundedSender<String>,
    pending: Arc<Mutex<HashSet<String>>>,
}

impl Queue {
    fn push(&self, name: &str) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = p.insert(name.to_string());
        tracing::trace!(app = name, queued = fresh, "push");
        if fresh {
            // The receiver lives as long as the controller; a send error means we are stopping.
            let _ = self.tx.send(name.to_string());
        }
    }

    fn taken(&self, name: &str) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }
}

/// Parses Argo's duration settings (`120s`, `3m`, `1m30s`, `1.5h`, or plain seconds): Go's
/// `time.ParseDuration`, as Argo reads `timeout.reconciliation`.
pub fn parse_duration(v: Option<&str>) -> Option<Duration> {
    plumb_sync::retry::parse_duration(v?)
}

async fn load_settings(client: &kube::Client, config: &ControllerConfig) -> Result<Settings> {
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), &config.control_namespace);
    let cm = api
        .get_opt(&config.settings_name)
        .await
        .map_err(|source| Error::Api {
            what: format!("reading ConfigMap {}", config.settings_name),
            source: Box::new(source),
        })?;
    Ok(cm
        .map(|cm| Settings::from_data(cm.data.unwrap_or_default().into_iter().collect()))
        .unwrap_or_default())
}

/// The name of Argo CD's ConfigMap of command-line parameters.
pub const CMD_PARAMS_CONFIGMAP: &str = "argocd-cmd-params-cm";
/// Its key listing the namespaces Applications may live in.
pub const APPLICATION_NAMESPACES_KEY: &str = "application.namespaces";

/// Splits a comma-separated namespace list (`--application-namespaces`,
/// `application.namespaces`): entries trimmed, empty ones dropped.
pub fn parse_namespace_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `application.namespaces` of `argocd-cmd-params-cm` in `control_namespace` (absent ConfigMap
/// or key: none). The controller and `plumb server` read it at start.
pub async fn application_namespaces(
    client: &kube::Client,
    control_namespace: &str,
) -> Result<Vec<String>> {
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), control_namespace);
    let cm = api
        .get_opt(CMD_PARAMS_CONFIGMAP)
        .await
        .map_err(|source| Error::Api {
            what: format!("reading ConfigMap {CMD_PARAMS_CONFIGMAP}"),
            source: Box::new(source),
        })?;
    Ok(cm
        .and_then(|cm| cm.data)
        .and_then(|d| d.get(APPLICATION_NAMESPACES_KEY).cloned())
        .map(|v| parse_namespace_list(&v))
        .unwrap_or_default())
}

/// The data of `argocd-cmd-params-cm` in `control_namespace` (empty when absent).
async fn cmd_params(
    client: &kube::Client,
    control_namespace: &str,
) -> Result<std::collections::BTreeMap<String, String>> {
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), control_namespace);
    let cm = api
        .get_opt(CMD_PARAMS_CONFIGMAP)
        .await
        .map_err(|source| Error::Api {
            what: format!("reading ConfigMap {CMD_PARAMS_CONFIGMAP}"),
            source: Box::new(source),
        })?;
    Ok(cm.and_then(|cm| cm.data).unwrap_or_default())
}

/// The limits renders run with: the configured ones, with the settings' `plumb.render.*` keys
/// (checked when the settings were accepted; a value that fails here keeps the configured limit).
pub(crate) fn render_limits(
    config: &ControllerConfig,
    settings: &Settings,
) -> plumb_source::Limits {
    let base = config.source.limits.clone();
    base.clone().with_settings(settings).unwrap_or(base)
}

/// The directory config management plugins are read from: the settings' `plumb.plugins.dir`,
/// else the configured one (`--plugin-dir`).
pub(crate) fn plugins_dir(config: &ControllerConfig, settings: &Settings) -> Option<PathBuf> {
    settings
        .get(plumb_model::settings::PLUGINS_DIR)
        .filter(|d| !d.trim().is_empty())
        .map(|d| PathBuf::from(d.trim()))
        .or_else(|| config.source.plugins_dir.clone())
}

/// Runs the controller until an unrecoverable error.
pub async fn run(client: kube::Client, config: ControllerConfig) -> Result<()> {
    // Every request to the in-cluster API server counted (argocd_app_k8s_request_total).
    let client = crate::k8s_requests::counted(client, IN_CLUSTER_SERVER);
    let settings = load_settings(&client, &config).await?;
    let app_namespaces = match &config.application_namespaces {
        Some(list) => list.clone(),
        None => application_namespaces(&client, &config.control_namespace).await?,
    };
    if !app_namespaces.is_empty() {
        tracing::info!(namespaces = ?app_namespaces, "reconciling Applications in other namespaces too");
    }
    let sharding = if config.sharding.replicas > 1 {
        let params = cmd_params(&client, &config.control_namespace).await?;
        crate::sharding::Sharding::resolve(&config.sharding, &params)?.map(Arc::new)
    } else {
        None
    };
    if let Some(s) = &sharding {
        tracing::info!(
            shard = s.shard,
            replicas = s.replicas,
            identity = %s.identity,
            algorithm = s.algorithm.as_str(),
            by_application = s.by_application,
            "sharing the work with other replicas through Leases"
        );
    }
    let engines = Arc::new(Engines::new(
        settings,
        &config.control_namespace,
        &config.customizations,
    )?);
    let renderer = Arc::new(Renderer::new(config.source.clone())?);
    renderer.set_limits(render_limits(&config, &engines.settings));
    renderer.set_plugins_dir(plugins_dir(&config, &engines.settings));
    crate::repositories::load(&client, &config.control_namespace, &renderer).await;
    let mut cluster = Cluster::connect(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, client.clone()).await?;
    let cache_cfg = LiveCacheConfig::default()
        .tracking(engines.tracking.clone())
        .exclusions(engines.exclusions.clone());
    let (reader, live_events) =
        plumb_kube::live_cache(client.clone(), &cluster.discovery.catalog(), cache_cfg);
    cluster.live = Some(reader);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let metrics = Arc::new(Metrics::default());
    let k8s_version = client
        .apiserver_version()
        .await
        .map(|v| v.git_version)
        .unwrap_or_default();
    metrics.cluster(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, &k8s_version);
    let shared = Arc::new(Shared {
        client: client.clone(),
        renderer,
        events: Events::new(client.clone()),
        metrics: metrics.clone(),
        engines: RwLock::new(engines),
        in_cluster: Arc::new(cluster),
        remote: RwLock::new(Vec::new()),
        running_ops: Mutex::new(HashMap::new()),
        auto_failures: Mutex::new(HashMap::new()),
        last_skip: Mutex::new(HashMap::new()),
        wakes: Mutex::new(HashMap::new()),
        known_apps: Mutex::new(Default::default()),
        app_namespaces,
        queue: Queue {
            tx,
            pending: Arc::new(Mutex::new(HashSet::new())),
        },
        rediscover: tokio::sync::Notify::new(),
        sharding,
        config,
    });

    if let Some(addr) = shared.config.metrics_addr {
        let m = metrics.clone();
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Task(format!("binding the metrics server to {addr}: {e}")))?;
        tracing::info!("metrics on http://{addr}/metrics");
        tokio::spawn(crate::server::serve(listener, m));
    }

    // The live cache: tracked objects that change re-queue their Applications.
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    {
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut ready_tx = Some(ready_tx);
            let mut events = std::pin::pin!(live_events);
            while let Some(ev) = events.next().await {
                match ev {
                    Ok(LiveEvent::Changed(change)) => {
                        for app in change.managed {
                            shared.queue.push(&shared.key_of_instance(&app));
                        }
                    }
                    Ok(LiveEvent::Ready) => {
                        shared.metrics.set_live_cache_synced();
                        if let Some(t) = ready_tx.take() {
                            let _ = t.send(());
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!("live cache: {}", chain(&e));
                        shared.rediscover.notify_one();
                    }
                }
            }
        });
    }
    // Comparisons need a complete cache; wait for the initial lists (bounded, then go on).
    if tokio::time::timeout(Duration::from_secs(60), ready_rx)
        .await
        .is_err()
    {
        tracing::warn!("live cache not complete after 60s; reconciling anyway");
    }
    tracing::info!("live cache ready");

    watchers::spawn_cluster_watcher(shared.clone());
    watchers::spawn_app_watcher(shared.clone());
    watchers::spawn_project_watcher(shared.clone());
    watchers::spawn_settings_watcher(shared.clone());
    watchers::spawn_repository_watcher(shared.clone());
    watchers::spawn_poller(shared.clone());
    watchers::spawn_rediscovery(shared.clone());
    if let Some(sharding) = shared.sharding.clone() {
        let s = shared.clone();
        crate::sharding::spawn_membership(
            shared.client.clone(),
            shared.config.control_namespace.clone(),
            sharding,
            move |lost| {
                if lost {
                    tracing::warn!("this replica lost its shard Lease: stopping its operations");
                    s.terminate_all();
                }
                // Applications that changed hands are reconciled by their new owner now.
                for app in watchers::all_apps(&s) {
                    s.queue.push(&app);
                }
            },
        );
    }

    // Workers: one Application at a time each; the same Application never runs on two at once.
    let in_flight: Arc<Mutex<HashSet<String>>> = Arc::default();
    let (work_tx, work_rx) = async_channel();
    for _ in 0..shared.config.workers.max(1) {
        let shared = shared.clone();
        let in_flight = in_flight.clone();
        let work_rx = work_rx.clone();
        tokio::spawn(async move {
            loop {
                // An Application's key: `namespace/name`.
                let name = {
                    let mut rx = work_rx.lock().await;
                    match rx.recv().await {
                        Some(n) => n,
                        None => return,
                    }
                };
                tracing::trace!(app = %name, "worker took");
                if !in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name.clone())
                {
                    // Busy elsewhere: try again shortly (out of the pending set, so the retry
                    // is not swallowed by deduplication).
                    shared.queue.taken(&name);
                    let shared = shared.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        shared.queue.push(&name);
                    });
                    continue;
                }
                shared.queue.taken(&name);
                if !shared.owns(&name) {
                    // Another replica's: its metrics are that replica's to publish.
                    if let Some((ns, n)) = name.split_once('/') {
                        shared.metrics.remove_app(ns, n);
                    }
                    in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&name);
                    continue;
                }
                // Requests made for this Application carry its namespace and name.
                let (app_ns, app_name) = name
                    .split_once('/')
                    .unwrap_or((shared.config.control_namespace.as_str(), name.as_str()));
                let reconciled = crate::k8s_requests::for_app(
                    app_ns,
                    app_name,
                    "",
                    crate::reconcile::reconcile(&shared, &name),
                )
                .await;
                match reconciled {
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(app = %name, "reconcile failed: {}", chain(&e));
                        let shared = shared.clone();
                        let retry = name.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_secs(5)).await;
                            shared.queue.push(&retry);
                        });
                    }
                }
                in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&name);
            }
        });
    }
    while let Some(name) = rx.recv().await {
        tracing::trace!(app = %name, "dispatch");
        if work_tx.send(name).is_err() {
            break;
        }
    }
    Err(Error::Task("the work queue closed".into()))
}

type WorkRx = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>;

fn async_channel() -> (mpsc::UnboundedSender<String>, WorkRx) {
    let (tx, rx) = mpsc::unbounded_channel();
    (tx, Arc::new(tokio::sync::Mutex::new(rx)))
}

#[cfg(test)]
mod tests {
    use super::watchers::jitter_for;
    use super::*;

    #[test]
    fn durations_in_argo_forms() {
        assert_eq!(parse_duration(Some("120s")), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration(Some("3m")), Some(Duration::from_secs(180)));
        assert_eq!(parse_duration(Some("90")), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration(Some("0")), Some(Duration::ZERO));
        assert_eq!(parse_duration(Some("abc")), None);
        assert_eq!(parse_duration(Some("1m30s")), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration(Some("99999999999999999999999h")), None);
    }

    #[test]
    fn namespace_lists_as_argo_writes_them() {
        assert_eq!(
            parse_namespace_list("app-team-one, app-team-two"),
            vec!["app-team-one", "app-team-two"]
        );
        assert_eq!(
            parse_namespace_list(" , team-*,,/^t-[0-9]+$/ "),
            vec!["team-*", "/^t-[0-9]+$/"]
        );
        assert!(parse_namespace_list("").is_empty());
    }

    #[test]
    fn jitter_stays_in_range() {
        for app in ["a", "payments-api", "x-very-long-name"] {
            assert!(jitter_for(app, Duration::from_secs(60)) < Duration::from_secs(60));
        }
        assert_eq!(jitter_for("a", Duration::ZERO), Duration::ZERO);
    }
}
