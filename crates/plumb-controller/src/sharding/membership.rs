//! Membership through Leases: this replica's own shard Lease held and renewed by
//! kube-lease-manager, and a watch on every shard Lease of the control namespace telling which
//! shards are live.
//!
//! A shard is live while its Lease has a holder that renewed it within the Lease duration, as
//! this replica observed it: the moment a renewal is seen is taken from the local clock, not
//! from the `renewTime` written by another node, so clock skew between nodes cannot make a dead
//! replica look alive or a live one dead.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube::runtime::watcher;
use kube_lease_manager::LeaseManagerBuilder;
use tokio::sync::watch;

use super::{Sharding, lease_name};

/// What was last seen of one Lease.
struct Seen {
    holder: Option<String>,
    renew: Option<String>,
    /// When the holder or the renew time last changed, on this replica's clock.
    changed_at: Instant,
    duration: Duration,
}

/// Starts holding this replica's Lease and watching all of them; `on_change` runs whenever the
/// live shards or this replica's membership change, with whether membership was just lost.
pub(crate) fn spawn(
    client: kube::Client,
    namespace: String,
    sharding: Arc<Sharding>,
    on_change: impl Fn(bool) + Send + Sync + 'static,
) {
    let holding = hold(client.clone(), namespace.clone(), sharding.clone());
    tokio::spawn(observe(client, namespace, sharding, holding, on_change));
}

/// Holds the Lease of this replica's shard: acquired when free (or expired), renewed before it
/// expires; the receiver says whether it is held.
fn hold(client: kube::Client, namespace: String, sharding: Arc<Sharding>) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        let secs = sharding.lease_duration.as_secs().max(2);
        // Renew halfway through: a renewal delayed by a loaded node or API server still lands
        // well before the others count the Lease lapsed.
        let grace = (secs / 2).max(1);
        loop {
            let manager = LeaseManagerBuilder::new(client.clone(), lease_name(sharding.shard))
                .with_namespace(namespace.clone())
                .with_identity(sharding.identity.clone())
                .with_duration(secs)
                .with_grace(grace)
                .with_field_manager(format!("plumb-controller-shard-{}", sharding.shard))
                .build()
                .await;
            let manager = match manager {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(
                        lease = %lease_name(sharding.shard),
                        "cannot use the shard Lease (RBAC for coordination.k8s.io leases?): {e}"
                    );
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    continue;
                }
            };
            let (mut held, task) = manager.watch().await;
            loop {
                let now = *held.borrow_and_update();
                tx.send_if_modified(|v| std::mem::replace(v, now) != now);
                if held.changed().await.is_err() {
                    break;
                }
            }
            // The manager's task ended (an error it could not recover from): start again.
            match task.await {
                Ok(Err(e)) => tracing::warn!("shard Lease manager stopped: {e}"),
                Err(e) => tracing::warn!("shard Lease manager stopped: {e}"),
                Ok(Ok(_)) => {}
            }
            tx.send_if_modified(|v| std::mem::replace(v, false));
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    rx
}

/// Watches the shard Leases and publishes the live shards once a second and on every event.
async fn observe(
    client: kube::Client,
    namespace: String,
    sharding: Arc<Sharding>,
    holding: watch::Receiver<bool>,
    on_change: impl Fn(bool) + Send + Sync + 'static,
) {
    let api: Api<Lease> = Api::namespaced(client, &namespace);
    let names: HashMap<String, usize> =
        (0..sharding.replicas).map(|n| (lease_name(n), n)).collect();
    let mut seen: HashMap<usize, Seen> = HashMap::new();
    let mut stream = std::pin::pin!(watcher::watcher(api, watcher::Config::default()));
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            ev = stream.try_next() => match ev {
                Ok(Some(watcher::Event::Apply(l) | watcher::Event::InitApply(l))) => {
                    let Some(shard) = l.metadata.name.as_ref().and_then(|n| names.get(n)) else {
                        continue;
                    };
                    let spec = l.spec.unwrap_or_default();
                    let holder = spec.holder_identity.filter(|h| !h.is_empty());
                    let renew = spec.renew_time.map(|t| t.0.to_string());
                    let duration = spec
                        .lease_duration_seconds
                        .and_then(|d| u64::try_from(d).ok())
                        .map(Duration::from_secs)
                        .unwrap_or(sharding.lease_duration);
                    let same = seen
                        .get(shard)
                        .is_some_and(|s| s.holder == holder && s.renew == renew);
                    if !same {
                        seen.insert(*shard, Seen { holder, renew, changed_at: Instant::now(), duration });
                    }
                }
                Ok(Some(watcher::Event::Delete(l))) => {
                    if let Some(shard) = l.metadata.name.as_ref().and_then(|n| names.get(n)) {
                        seen.remove(shard);
                    }
                }
                Ok(Some(_)) => continue,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!("watching shard Leases: {e}");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
            _ = tick.tick() => {}
        }
        let live: BTreeMap<usize, String> = seen
            .iter()
            .filter(|(_, s)| s.changed_at.elapsed() < s.duration)
            .filter_map(|(n, s)| s.holder.clone().map(|h| (*n, h)))
            .collect();
        let member = *holding.borrow() && live.get(&sharding.shard) == Some(&sharding.identity);
        let (changed, lost) = sharding.set_live(live, member);
        if changed {
            tracing::info!(member, "sharding: {}", sharding.describe());
            on_change(lost);
        }
    }
}
