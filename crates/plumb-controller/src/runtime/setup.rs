//! The controller's start-up: settings, the namespaces and shard it serves, the engines and the
//! renderer, the cluster Secrets (which decide the in-cluster destination's scope), and the
//! state the tasks share.

use std::sync::{Arc, RwLock};

use kube::api::DynamicObject;
use kube::runtime::reflector::store::Writer;
use plumb_source::Renderer;
use tokio::sync::mpsc;

use crate::config::{ControllerConfig, load_settings, render_defaults};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::sharding::Sharding;
use crate::shared::{
    AppMemory, Clusters, InClusterWant, Operations, Queue, Shared, in_cluster_enabled,
};
use plumb_app::application_namespaces;
use plumb_app::{Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_app::{Error, Result};

/// What start-up hands to the running controller: the shared state, what the in-cluster
/// destination is to be, and what only one task takes (the work queue's receiving end, the
/// watch caches' writers).
pub(super) struct Started {
    pub(super) shared: Arc<Shared>,
    pub(super) in_cluster: InClusterWant,
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
    let secrets = cluster_secrets(&client, &config.control_namespace).await?;
    let in_cluster = InClusterWant::of(in_cluster_enabled(&engines.settings), &secrets);
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
        clusters: Clusters::new(in_cluster.clone(), secrets),
        operations: Operations::new(config.operation_processors),
        memory: AppMemory::default(),
        queue: Queue::new(tx),
        watched,
        config,
    });
    Ok(Started {
        shared,
        in_cluster,
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

/// The cluster Secrets of the control namespace, sorted by Secret name: read before anything
/// is listed, since a Secret for the in-cluster URL decides what the controller may watch
/// there. One that cannot be read stops the start (fail closed: never wider than it says).
async fn cluster_secrets(
    client: &kube::Client,
    namespace: &str,
) -> Result<Vec<plumb_app::clusters::ClusterSecret>> {
    let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(client.clone(), namespace);
    let lp = kube::api::ListParams::default().labels(plumb_app::clusters::CLUSTER_SECRET_LABEL);
    let mut list = api
        .list(&lp)
        .await
        .map_err(|e| Error::Task(format!("listing the cluster Secrets of {namespace}: {e}")))?
        .items;
    list.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(list
        .iter()
        .filter_map(plumb_app::clusters::ClusterSecret::from_secret)
        .collect())
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
