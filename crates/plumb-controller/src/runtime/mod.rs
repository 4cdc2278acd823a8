//! The controller process: watches Applications, AppProjects and the settings ConfigMap, keeps a
//! live cache of the in-cluster destination, and reconciles Applications from a deduplicating
//! work queue on a few workers. Triggers: any change of an Application (spec, operation, refresh
//! annotation), of its project, of the settings, of a tracked live object, and a periodic poll
//! (`timeout.reconciliation` plus jitter) that also picks up new commits.
//!
//! Here: the start-up wiring and the workers; the watchers are in `watchers`, the configuration
//! in `crate::config`, the state the tasks share in `crate::shared`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;
use plumb_kube::{LiveCacheConfig, LiveEvent};
use plumb_model::Settings;
use plumb_source::Renderer;
use tokio::sync::mpsc;

use crate::config::{ControllerConfig, load_settings, plugins_dir, render_limits};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::shared::{Queue, Shared};
use plumb_app::{Cluster, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_app::{Error, Result, chain};
use plumb_app::{application_namespaces, appproject_resource};

mod watchers;

/// Runs the controller until an unrecoverable error.
pub async fn run(client: kube::Client, config: ControllerConfig) -> Result<()> {
    // Every request to the in-cluster API server counted (argocd_app_k8s_request_total).
    let client = plumb_app::k8s_requests::counted(client, IN_CLUSTER_SERVER);
    let settings = load_settings(&client, &config).await?;
    let app_namespaces = match &config.application_namespaces {
        Some(list) => list.clone(),
        None => application_namespaces(&client, &config.control_namespace).await?,
    };
    if !app_namespaces.is_empty() {
        tracing::info!(namespaces = ?app_namespaces, "reconciling Applications in other namespaces too");
    }
    let sharding = if config.sharding.replicas > 1 {
        let params = crate::config::cmd_params(&client, &config.control_namespace).await?;
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
    plumb_app::repositories::load(&client, &config.control_namespace, &renderer).await;
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
    let (watched, apps_cache, projects_cache) = crate::watched::Watched::new();
    let shared = Arc::new(Shared {
        client: client.clone(),
        renderer,
        events: Events::new(client.clone()),
        metrics: metrics.clone(),
        engines: RwLock::new(engines),
        in_cluster: Arc::new(cluster),
        remote: RwLock::new(Vec::new()),
        running_ops: Mutex::new(HashMap::new()),
        status_paced: Mutex::new(HashMap::new()),
        refresh_seen: Mutex::new(HashMap::new()),
        operation_slots: Arc::new(tokio::sync::Semaphore::new(
            config.operation_processors.max(1),
        )),
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
        watched,
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
    watchers::spawn_app_watcher(shared.clone(), apps_cache);
    watchers::spawn_project_watcher(shared.clone(), projects_cache);
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
                let reconciled = plumb_app::k8s_requests::for_app(
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
    fn jitter_stays_in_range() {
        for app in ["a", "payments-api", "x-very-long-name"] {
            assert!(jitter_for(app, Duration::from_secs(60)) < Duration::from_secs(60));
        }
        assert_eq!(jitter_for("a", Duration::ZERO), Duration::ZERO);
    }
}
