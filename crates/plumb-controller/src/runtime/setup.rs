//! The controller's start-up: settings, the namespaces and shard it serves, the engines and the
//! renderer, the in-cluster destination with its live cache, and the state the tasks share.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use kube::api::DynamicObject;
use kube::runtime::reflector::store::Writer;
use plumb_kube::{LiveCacheConfig, LiveEvent};
use plumb_source::Renderer;
use tokio::sync::{mpsc, oneshot};

use crate::config::{ControllerConfig, load_settings, render_defaults};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::sharding::Sharding;
use crate::shared::{AppMemory, Clusters, Operations, Queue, Shared};
use plumb_app::application_namespaces;
use plumb_app::{Cluster, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_app::{Error, Result, chain};

/// The events of a live cache, boxed: the stream borrows nothing, but its opaque type captures
/// the lifetimes of the references it was built from, so it cannot be returned as it is.
pub(super) type LiveEvents = BoxStream<'static, plumb_kube::Result<LiveEvent>>;

/// What start-up hands to the running controller: the shared state, and what only one task
/// takes (the in-cluster live cache's events, the work queue's receiving end, the watch caches'
/// writers).
pub(super) struct Started {
    pub(super) shared: Arc<Shared>,
    pub(super) live_events: LiveEvents,
    pub(super) queue: mpsc::UnboundedReceiver<String>,
    pub(super) apps_cache: Writer<DynamicObject>,
    pub(super) projects_cache: Writer<DynamicObject>,
}

/// Reads the configuration the controller starts with, connects to the in-cluster destination
/// and builds the state the tasks share.
pub(super) async fn start(client: kube::Client, config: ControllerConfig) -> Result<Started> {
    let settings = load_settings(&client, &config).await?;
    plumb_app::unenforced::log(&plumb_app::unenforced::in_settings(&settings));
    let app_namespaces = reconciled_namespaces(&client, &config).await?;
    let sharding = resolve_sharding(&client, &config).await?;
    let engines = Arc::new(Engines::new(
        settings,
        &config.control_namespace,
        &config.customizations,
    )?);
    let renderer = renderer(&config, &engines)?;
    let submodules = match crate::config::cmd_params(&client, &config.control_namespace).await {
        Ok(params) => submodules_enabled(params.get(SUBMODULES_KEY).map(String::as_str)),
        Err(e) => {
            tracing::warn!("{e}; Git submodules stay enabled (Argo CD's default)");
            true
        }
    };
    renderer.git().set_submodules(submodules);
    plumb_app::repositories::load(&client, &config.control_namespace, &renderer).await;
    plumb_app::signatures::load(&client, &config.control_namespace, &renderer).await;
    let (cluster, live_events) = connect_in_cluster(&client, &engines).await?;
    let (tx, queue) = mpsc::unbounded_channel();
    let metrics = in_cluster_metrics(&client).await;
    let (watched, apps_cache, projects_cache) = crate::watched::Watched::new();
    let shared = Arc::new(Shared {
        client: client.clone(),
        renderer,
        events: Events::new(client.clone()),
        metrics,
        engines: RwLock::new(engines),
        app_namespaces,
        sharding,
        clusters: Clusters::new(cluster),
        operations: Operations::new(config.operation_processors),
        memory: AppMemory::default(),
        queue: Queue::new(tx),
        watched,
        config,
    });
    Ok(Started {
        shared,
        live_events,
        queue,
        apps_cache,
        projects_cache,
    })
}

/// The namespaces besides the control namespace whose Applications are reconciled: from the
/// configuration, else from `argocd-cmd-params-cm`.
async fn reconciled_namespaces(
    client: &kube::Client,
    config: &ControllerConfig,
) -> Result<Vec<String>> {
    let app_namespaces = match &config.application_namespaces {
        Some(list) => list.clone(),
        None => application_namespaces(client, &config.control_namespace).await?,
    };
    if !app_namespaces.is_empty() {
        tracing::info!(namespaces = ?app_namespaces, "reconciling Applications in other namespaces too");
    }
    Ok(app_namespaces)
}

/// This replica's shard when several replicas share the work.
async fn resolve_sharding(
    client: &kube::Client,
    config: &ControllerConfig,
) -> Result<Option<Arc<Sharding>>> {
    let sharding = if config.sharding.replicas > 1 {
        let params = crate::config::cmd_params(client, &config.control_namespace).await?;
        Sharding::resolve(&config.sharding, &params)?.map(Arc::new)
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
    Ok(sharding)
}

/// argocd-cmd-params-cm's key turning Git submodules on (Argo CD's default: on).
const SUBMODULES_KEY: &str = "reposerver.enable.git.submodule";

/// Go's `strconv.ParseBool` as Argo reads the key; a value it cannot read keeps the default (on),
/// with a warning, as Argo does.
fn submodules_enabled(value: Option<&str>) -> bool {
    match value.map(str::trim) {
        None | Some("") => true,
        Some("1" | "t" | "T" | "TRUE" | "true" | "True") => true,
        Some("0" | "f" | "F" | "FALSE" | "false" | "False") => false,
        Some(other) => {
            tracing::warn!(value = %other, "{SUBMODULES_KEY} is not a boolean; submodules stay enabled");
            true
        }
    }
}

/// The renderer, with the limits and plugins the settings give.
fn renderer(config: &ControllerConfig, engines: &Engines) -> Result<Arc<Renderer>> {
    let renderer = Arc::new(Renderer::new(config.source.clone())?);
    plumb_app::render_settings::apply(&renderer, &engines.settings, &render_defaults(config));
    Ok(renderer)
}

/// The in-cluster destination with its live cache, and the cache's events.
async fn connect_in_cluster(
    client: &kube::Client,
    engines: &Engines,
) -> Result<(Cluster, LiveEvents)> {
    let mut cluster = Cluster::connect(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, client.clone()).await?;
    let cache_cfg = LiveCacheConfig::default()
        .tracking(engines.tracking.clone())
        .exclusions(engines.exclusions.clone());
    let (reader, live_events) =
        plumb_kube::live_cache(client.clone(), &cluster.discovery.catalog(), cache_cfg);
    cluster.live = Some(reader);
    Ok((cluster, live_events.boxed()))
}

/// The metrics, starting with the in-cluster destination's `argocd_cluster_info`.
async fn in_cluster_metrics(client: &kube::Client) -> Arc<Metrics> {
    let metrics = Arc::new(Metrics::default());
    let k8s_version = client
        .apiserver_version()
        .await
        .map(|v| v.git_version)
        .unwrap_or_default();
    metrics.cluster(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, &k8s_version);
    metrics
}

/// Serves `/metrics` when an address is configured.
pub(super) async fn serve_metrics(shared: &Shared) -> Result<()> {
    if let Some(addr) = shared.config.metrics_addr {
        let m = shared.metrics.clone();
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::Task(format!("binding the metrics server to {addr}: {e}")))?;
        tracing::info!("metrics on http://{addr}/metrics");
        tokio::spawn(crate::server::serve(listener, m));
    }
    Ok(())
}

/// Follows the in-cluster live cache: tracked objects that change re-queue their Applications.
/// The receiver hears once the initial lists are complete.
pub(super) fn spawn_live_events(
    shared: Arc<Shared>,
    live_events: LiveEvents,
) -> oneshot::Receiver<()> {
    let (ready_tx, ready_rx) = oneshot::channel::<()>();
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
                    shared.clusters.rediscover.notify_one();
                }
            }
        }
    });
    ready_rx
}

/// Comparisons need a complete cache; waits for the initial lists (bounded, then goes on).
pub(super) async fn wait_for_live_cache(ready: oneshot::Receiver<()>) {
    if tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .is_err()
    {
        tracing::warn!("live cache not complete after 60s; reconciling anyway");
    }
    tracing::info!("live cache ready");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submodules_follow_go_booleans_and_default_on() {
        assert!(submodules_enabled(None));
        assert!(submodules_enabled(Some("true")));
        assert!(!submodules_enabled(Some("false")));
        assert!(!submodules_enabled(Some(" 0 ")));
        assert!(submodules_enabled(Some("perhaps")));
    }
}
