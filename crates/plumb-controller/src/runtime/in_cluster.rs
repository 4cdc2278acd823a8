//! The in-cluster destination (the controller's own connection): built once start-up knows its
//! scope from the cluster Secrets and `cluster.inClusterEnabled`, and rebuilt when either
//! changes. Nothing is listed before the scope is known, so a controller whose RBAC covers a
//! few namespaces (Argo's namespace-install) never asks for the whole cluster.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use plumb_app::{Cluster, IN_CLUSTER_NAME, IN_CLUSTER_SERVER, chain};
use plumb_kube::{LiveCacheConfig, LiveEvent};
use plumb_model::GroupKind;
use tokio::sync::oneshot;

use crate::shared::{InClusterWant, Shared};

/// Makes the in-cluster destination what `want` says, unless it already is. The receiver
/// hears once a new live cache has its initial lists (at once when there is no cache to wait
/// for: disabled, unusable, or unchanged). A connection that fails leaves no destination (its
/// Applications are refused) and is returned as the error.
pub(super) async fn apply(
    shared: &Arc<Shared>,
    want: InClusterWant,
) -> plumb_app::Result<oneshot::Receiver<()>> {
    let (ready_tx, ready_rx) = oneshot::channel::<()>();
    {
        let state = shared
            .clusters
            .in_cluster
            .read()
            .unwrap_or_else(|e| e.into_inner());
        if state.want == want
            && (state.cluster.is_some() || !matches!(want, InClusterWant::Scoped(_)))
        {
            let _ = ready_tx.send(());
            return Ok(ready_rx);
        }
    }
    let built = match &want {
        InClusterWant::Scoped(scope) => Some(connect(shared, scope.clone(), ready_tx).await),
        InClusterWant::Disabled | InClusterWant::Unusable(_) => {
            let _ = ready_tx.send(());
            None
        }
    };
    match &want {
        InClusterWant::Scoped(scope) if !scope.is_whole_cluster() => {
            tracing::info!(namespaces = ?scope.namespaces(), cluster_resources = scope.cluster_resources(), "in-cluster destination narrowed by its cluster Secret");
        }
        InClusterWant::Scoped(_) => tracing::info!("in-cluster destination: the whole cluster"),
        InClusterWant::Disabled => {
            tracing::info!("in-cluster destination disabled (cluster.inClusterEnabled: \"false\")");
        }
        InClusterWant::Unusable(why) => tracing::warn!("in-cluster destination refused: {why}"),
    }
    let (cluster, task, result) = match built {
        Some(Ok((c, t))) => (Some(c), Some(t), Ok(())),
        Some(Err(e)) => (None, None, Err(e)),
        None => (None, None, Ok(())),
    };
    let mut state = shared
        .clusters
        .in_cluster
        .write()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(old) = state.task.take() {
        old.abort();
    }
    state.want = want;
    state.cluster = cluster;
    state.task = task;
    result.map(|()| ready_rx)
}

/// Connects to the in-cluster destination with `scope` and starts its live cache.
async fn connect(
    shared: &Arc<Shared>,
    scope: plumb_kube::ClusterScope,
    ready: oneshot::Sender<()>,
) -> plumb_app::Result<(Arc<Cluster>, tokio::task::JoinHandle<()>)> {
    let client = shared.client.clone();
    let mut cluster = Cluster::connect(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, client.clone()).await?;
    cluster.scope = scope;
    let engines = shared.engines();
    let cfg = LiveCacheConfig::default()
        .tracking(engines.tracking.clone())
        .exclusions(engines.exclusions.clone())
        .scope(cluster.scope.clone());
    let (reader, events) = plumb_kube::live_cache(client, &cluster.discovery.catalog(), cfg);
    cluster.live = Some(reader.clone());
    let task = tokio::spawn(follow(shared.clone(), reader, events.boxed(), ready));
    Ok((Arc::new(cluster), task))
}

/// Follows the in-cluster live cache: tracked objects that change re-queue their Applications,
/// and `ready` hears once every watched kind's initial list has completed or been refused by
/// RBAC (403). Argo's controller health does not wait on cluster caches either: a refused kind
/// keeps retrying, its absence from the cache is never taken for absence in the cluster (the
/// comparison asks the API server, and the Application that declares such an object gets the
/// refusal as its `ComparisonError`), so nothing is pruned or judged from it.
async fn follow(
    shared: Arc<Shared>,
    reader: plumb_kube::LiveCacheReader,
    events: futures::stream::BoxStream<'static, plumb_kube::Result<LiveEvent>>,
    ready: oneshot::Sender<()>,
) {
    let mut ready = Some(ready);
    let mut refused: BTreeSet<GroupKind> = BTreeSet::new();
    let mut events = events;
    while let Some(ev) = events.next().await {
        match ev {
            Ok(LiveEvent::Changed(change)) => {
                for app in change.managed {
                    shared.queue.push(&shared.key_of_instance(&app));
                }
            }
            Ok(LiveEvent::Ready) => {
                shared.metrics.set_live_cache_synced();
                if let Some(t) = ready.take() {
                    let _ = t.send(());
                }
            }
            Ok(_) => {}
            Err(plumb_kube::Error::Watch { gk, source }) if is_forbidden(&source) => {
                if refused.insert(gk.clone()) {
                    tracing::warn!(kind = %gk, "in-cluster live cache: list refused (retrying): {source}");
                } else {
                    tracing::debug!(kind = %gk, "in-cluster live cache: list refused again");
                }
            }
            Err(e) => {
                tracing::warn!("live cache: {}", chain(&e));
                shared.clusters.rediscover.notify_one();
            }
        }
        // Refused kinds never finish their list: the others decide when the cache is ready.
        if ready.is_some() && !refused.is_empty() && all_listed_or_refused(&reader, &refused) {
            tracing::warn!(
                refused = refused.len(),
                "in-cluster live cache: every kind listed or refused by RBAC; ready (Applications that declare a refused kind fail comparing)"
            );
            shared.metrics.set_live_cache_synced();
            if let Some(t) = ready.take() {
                let _ = t.send(());
            }
        }
    }
}

/// Whether a watch failed because RBAC refused it (403 Forbidden).
fn is_forbidden(error: &kube::runtime::watcher::Error) -> bool {
    use kube::runtime::watcher::Error as W;
    match error {
        W::InitialListFailed(e) | W::WatchStartFailed(e) | W::WatchFailed(e) => {
            matches!(e, kube::Error::Api(s) if s.code == 403)
        }
        W::WatchError(s) => s.code == 403,
        _ => false,
    }
}

/// Whether every watched kind has its initial list, or was refused.
fn all_listed_or_refused(
    reader: &plumb_kube::LiveCacheReader,
    refused: &BTreeSet<GroupKind>,
) -> bool {
    reader
        .watched_kinds()
        .iter()
        .all(|gk| refused.contains(gk) || reader.is_synced(gk))
}

/// Comparisons need a complete cache; waits for the initial lists (bounded, then goes on).
/// Without an in-cluster cache to wait for (disabled or refused) the controller is ready at
/// once: its Applications are refused with the reason, which needs no cache.
pub(super) async fn wait_until_listed(shared: &Shared, ready: oneshot::Receiver<()>) {
    if tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .is_err()
    {
        tracing::warn!("live cache not complete after 60s; reconciling anyway");
    }
    if shared.clusters.in_cluster().is_none() {
        shared.metrics.set_live_cache_synced();
    }
    tracing::info!("live cache ready");
}
