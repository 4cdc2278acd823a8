//! Several controller replicas sharing the Applications through `coordination.k8s.io` Leases
//! (see docs/sharding.md).
//!
//! Each replica holds the Lease `plumb-controller-shard-<n>` of its shard (Argo CD's
//! `ARGOCD_CONTROLLER_SHARD`, or the number at the end of the host name), kept by
//! kube-lease-manager, and watches the Leases of the others. A shard is live while its Lease is
//! held and renewed. Clusters get their home shard from Argo CD's algorithms (`argo`); a live
//! home shard reconciles the cluster's Applications, a dead one's clusters go to the survivors
//! (`owner`). With application sharding, Applications spread over the live shards by name.
//!
//! An operation belongs to the replica that started it (`ownership`): it is claimed with a
//! resourceVersion-guarded write of an annotation naming the replica, and another replica
//! leaves it alone while that replica's Lease lives, and fails it as interrupted once it died.

pub mod argo;
pub(crate) mod membership;
pub mod owner;
pub(crate) mod ownership;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::RwLock;
use std::time::{Duration, Instant};

pub use argo::{Algorithm, ClusterRef};
pub use owner::Placement;

use plumb_app::{IN_CLUSTER_NAME, IN_CLUSTER_SERVER};

/// The name of the Lease of shard `n`.
pub fn lease_name(shard: usize) -> String {
    format!("plumb-controller-shard-{shard}")
}

/// The key of `argocd-cmd-params-cm` choosing Argo's cluster sharding algorithm.
pub const ALGORITHM_KEY: &str = "controller.sharding.algorithm";
/// Plumb's key of `argocd-cmd-params-cm` turning on application sharding (`"true"`).
pub const APPLICATIONS_KEY: &str = "plumb.sharding.applications";

/// How this replica takes part in sharding (`plumb controller --replicas ...`).
#[derive(Debug, Clone)]
pub struct ShardingConfig {
    /// Replicas sharing the work (`ARGOCD_CONTROLLER_REPLICAS`); 1 (the default) turns sharding
    /// off: no Lease, every Application reconciled here.
    pub replicas: usize,
    /// This replica's shard (`ARGOCD_CONTROLLER_SHARD`); `None`: the number ending the host
    /// name (a StatefulSet pod `...-2` is shard 2), else 0.
    pub shard: Option<usize>,
    /// `controller.sharding.algorithm`; `None`: the key of `argocd-cmd-params-cm`, else legacy.
    pub algorithm: Option<String>,
    /// Application sharding; `None`: `plumb.sharding.applications` of `argocd-cmd-params-cm`.
    pub applications: Option<bool>,
    /// How long a Lease stays valid without renewal: a dead replica's shard moves to the
    /// survivors within it (15 s).
    pub lease_duration: Duration,
    /// The holder identity written in the Leases; `None`: host name, process id and a random
    /// suffix (unique per process, so a restarted pod never mistakes its predecessor's
    /// operations for its own).
    pub identity: Option<String>,
}

impl Default for ShardingConfig {
    fn default() -> Self {
        Self {
            replicas: 1,
            shard: None,
            algorithm: None,
            applications: None,
            lease_duration: Duration::from_secs(15),
            identity: None,
        }
    }
}

/// Sharding as resolved at start, with what the replica has learnt since.
pub(crate) struct Sharding {
    pub(crate) replicas: usize,
    pub(crate) shard: usize,
    pub(crate) identity: String,
    pub(crate) algorithm: Algorithm,
    pub(crate) by_application: bool,
    pub(crate) lease_duration: Duration,
    state: RwLock<State>,
}

#[derive(Default)]
struct State {
    /// Cluster Secrets: (name, ClusterRef).
    secrets: Vec<(String, ClusterRef)>,
    /// Each known Application's destination (server, name).
    apps: HashMap<String, (String, String)>,
    /// Shards whose Lease is live, with their holders.
    live: BTreeMap<usize, String>,
    /// Whether this replica holds its own Lease (it works on nothing otherwise).
    member: bool,
    /// When it last became a member: until every shard was seen live or one Lease duration
    /// passed, the shards not seen yet count as live (replicas starting together do not take
    /// each other's work for the first seconds).
    member_since: Option<Instant>,
    /// Every shard was seen live since then.
    all_seen: bool,
    /// Whether it was settling at the last observation (the end of settling is a change).
    was_settling: bool,
    placement: Placement,
    /// Whether `placement.home` must be computed again (clusters or loads changed).
    stale_home: bool,
}

impl Sharding {
    /// Resolves the configuration: `None` when it asks for a single replica.
    pub(crate) fn resolve(
        config: &ShardingConfig,
        cmd_params: &BTreeMap<String, String>,
    ) -> plumb_app::Result<Option<Self>> {
        if config.replicas <= 1 {
            return Ok(None);
        }
        let hostname = hostname();
        let shard = config.shard.unwrap_or_else(|| argo::infer_shard(&hostname));
        if shard >= config.replicas {
            return Err(plumb_app::Error::Task(format!(
                "shard {shard} is not below the number of replicas ({}): set ARGOCD_CONTROLLER_SHARD / --shard, or name the pod ...-<n>",
                config.replicas
            )));
        }
        let algorithm_name = config
            .algorithm
            .clone()
            .or_else(|| cmd_params.get(ALGORITHM_KEY).cloned())
            .filter(|a| !a.trim().is_empty());
        let algorithm = match algorithm_name.as_deref() {
            None => Algorithm::Legacy,
            Some(name) => Algorithm::parse(name).unwrap_or_else(|| {
                tracing::warn!(
                    "sharding algorithm {name:?} is not supported (legacy, round-robin, consistent-hashing); using legacy"
                );
                Algorithm::Legacy
            }),
        };
        let by_application = config.applications.unwrap_or_else(|| {
            cmd_params
                .get(APPLICATIONS_KEY)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        });
        let identity = config
            .identity
            .clone()
            .unwrap_or_else(|| format!("{hostname}-{}-{:08x}", std::process::id(), random()));
        let lease_duration = config.lease_duration.max(Duration::from_secs(2));
        Ok(Some(Self {
            replicas: config.replicas,
            shard,
            identity,
            algorithm,
            by_application,
            lease_duration,
            state: RwLock::new(State {
                stale_home: true,
                ..Default::default()
            }),
        }))
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether this replica reconciles the Application `key` now.
    pub(crate) fn owns(&self, key: &str) -> bool {
        self.refresh_home();
        let st = self.read();
        if !st.member {
            return false;
        }
        let Some((server, name)) = st.apps.get(key) else {
            return false;
        };
        let server = resolve_server(&st.secrets, server, name);
        let mut placement = st.placement.clone();
        placement.live = self.live_view(&st);
        placement.owner(key, &server) == Some(self.shard)
    }

    /// The live shards as this replica counts them (see `State::member_since`).
    fn live_view(&self, st: &State) -> BTreeSet<usize> {
        let mut live: BTreeSet<usize> = st.live.keys().copied().collect();
        if self.settling(st) {
            live.extend(0..self.replicas);
        }
        live
    }

    fn settling(&self, st: &State) -> bool {
        !st.all_seen
            && st
                .member_since
                .is_some_and(|t| t.elapsed() < self.lease_duration)
    }

    /// Whether this replica leads: it holds its Lease and no lower shard is live (while the
    /// replicas settle, shard 0). The ApplicationSet controller runs on the leader only.
    pub(crate) fn leads(&self) -> bool {
        let st = self.read();
        st.member && self.live_view(&st).first() == Some(&self.shard)
    }

    /// Whether `identity` holds a live Lease (its operations are its own to finish).
    pub(crate) fn is_alive(&self, identity: &str) -> bool {
        let st = self.read();
        (identity == self.identity && st.member) || st.live.values().any(|h| h == identity)
    }

    /// An Application was added or changed; returns whether the placement of others may have
    /// changed (consistent hashing weighs clusters by their Applications).
    pub(crate) fn set_app(&self, key: &str, server: &str, name: &str) -> bool {
        let mut st = self.write();
        let new = (server.to_string(), name.to_string());
        let old = st.apps.insert(key.to_string(), new.clone());
        let moved = old.as_ref() != Some(&new);
        if moved && self.algorithm == Algorithm::ConsistentHashing {
            st.stale_home = true;
            return true;
        }
        false
    }

    pub(crate) fn remove_app(&self, key: &str) -> bool {
        let mut st = self.write();
        let gone = st.apps.remove(key).is_some();
        if gone && self.algorithm == Algorithm::ConsistentHashing {
            st.stale_home = true;
            return true;
        }
        false
    }

    /// The cluster Secrets changed.
    pub(crate) fn set_clusters(&self, secrets: Vec<(String, ClusterRef)>) {
        for (name, c) in &secrets {
            if let Some(pin) = c
                .shard
                .filter(|p| argo::pinned_shard(*p, self.replicas).is_none())
            {
                tracing::warn!(
                    "cluster {name} ({}): shard {pin} of its Secret is out of range (0 to {}); using shard 0",
                    c.server,
                    self.replicas - 1
                );
            }
        }
        let mut st = self.write();
        st.secrets = secrets;
        st.stale_home = true;
    }

    /// New Lease observations; returns (placement changed, membership lost).
    pub(crate) fn set_live(&self, live: BTreeMap<usize, String>, member: bool) -> (bool, bool) {
        let mut st = self.write();
        let was_member = st.member;
        if member && !was_member {
            st.member_since = Some(Instant::now());
            st.all_seen = false;
        }
        if !member {
            st.member_since = None;
        }
        if live.len() >= self.replicas {
            // Everyone is here: no need to wait any longer.
            st.all_seen = true;
        }
        let settling = self.settling(&st);
        let changed = st.live != live || was_member != member || st.was_settling != settling;
        st.was_settling = settling;
        st.live = live;
        st.member = member;
        (changed, was_member && !member)
    }

    /// Computes the clusters' home shards again when clusters or loads changed.
    fn refresh_home(&self) {
        if !self.read().stale_home {
            return;
        }
        let mut st = self.write();
        if !st.stale_home {
            return;
        }
        let mut clusters: Vec<ClusterRef> = st.secrets.iter().map(|(_, c)| c.clone()).collect();
        if !clusters.iter().any(|c| c.server == IN_CLUSTER_SERVER) {
            // Argo's local cluster: no Secret, no ID.
            clusters.push(ClusterRef {
                id: String::new(),
                server: IN_CLUSTER_SERVER.to_string(),
                shard: None,
            });
        }
        let mut per_server: HashMap<String, i64> = HashMap::new();
        for (server, _) in st.apps.values() {
            *per_server.entry(server.clone()).or_insert(0) += 1;
        }
        let home = argo::distribute(self.algorithm, &clusters, &per_server, self.replicas);
        st.placement.pinned = clusters
            .iter()
            .filter(|c| c.shard.is_some())
            .map(|c| c.server.clone())
            .collect();
        st.placement.home = home;
        st.placement.by_application = self.by_application;
        st.stale_home = false;
    }

    /// For logs and docs: which shard each known cluster is at home on.
    pub(crate) fn describe(&self) -> String {
        self.refresh_home();
        let st = self.read();
        format!(
            "shard {} of {} ({}{}), live shards {:?}, clusters {:?}",
            self.shard,
            self.replicas,
            self.algorithm.as_str(),
            if self.by_application {
                ", applications spread by name"
            } else {
                ""
            },
            st.live.keys().collect::<Vec<_>>(),
            st.placement.home
        )
    }
}

/// The server URL an Application's destination names (`name` resolved through the cluster
/// Secrets; `in-cluster` is the local cluster).
fn resolve_server(secrets: &[(String, ClusterRef)], server: &str, name: &str) -> String {
    if !server.is_empty() {
        return server.to_string();
    }
    if let Some((_, c)) = secrets.iter().find(|(n, _)| n == name) {
        return c.server.clone();
    }
    if name == IN_CLUSTER_NAME || name.is_empty() {
        return IN_CLUSTER_SERVER.to_string();
    }
    String::new()
}

fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|| "plumb-controller".to_string())
}

fn random() -> u32 {
    let mut b = [0u8; 4];
    // A failure leaves zeros: the process id still tells incarnations apart.
    let _ = getrandom::fill(&mut b);
    u32::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(replicas: usize, shard: usize) -> ShardingConfig {
        ShardingConfig {
            replicas,
            shard: Some(shard),
            identity: Some(format!("replica-{shard}")),
            ..Default::default()
        }
    }

    #[test]
    fn one_replica_means_no_sharding() {
        assert!(
            Sharding::resolve(&ShardingConfig::default(), &BTreeMap::new())
                .is_ok_and(|s| s.is_none())
        );
    }

    #[test]
    fn a_shard_beyond_the_replicas_is_refused() {
        assert!(Sharding::resolve(&config(3, 3), &BTreeMap::new()).is_err());
    }

    #[test]
    fn the_algorithm_comes_from_the_flag_then_argocd_cmd_params_cm() {
        let mut params = BTreeMap::new();
        params.insert(ALGORITHM_KEY.to_string(), "round-robin".to_string());
        params.insert(APPLICATIONS_KEY.to_string(), "true".to_string());
        let s = Sharding::resolve(&config(2, 1), &params).ok().flatten();
        assert!(
            s.as_ref()
                .is_some_and(|s| s.algorithm == Algorithm::RoundRobin)
        );
        assert!(s.is_some_and(|s| s.by_application));
        let mut c = config(2, 1);
        c.algorithm = Some("consistent-hashing".into());
        c.applications = Some(false);
        let s = Sharding::resolve(&c, &params).ok().flatten();
        assert!(
            s.as_ref()
                .is_some_and(|s| s.algorithm == Algorithm::ConsistentHashing)
        );
        assert!(s.is_some_and(|s| !s.by_application));
        let s = Sharding::resolve(&config(2, 0), &BTreeMap::new())
            .ok()
            .flatten();
        assert!(s.is_some_and(|s| s.algorithm == Algorithm::Legacy));
    }

    fn live(shards: &[usize]) -> BTreeMap<usize, String> {
        shards
            .iter()
            .map(|s| (*s, format!("replica-{s}")))
            .collect()
    }

    #[test]
    fn a_replica_owns_its_share_and_takes_a_dead_shards_after_settling() {
        let mut c = config(3, 1);
        c.applications = Some(true);
        let Some(s) = Sharding::resolve(&c, &BTreeMap::new()).ok().flatten() else {
            panic!("sharding");
        };
        let keys: Vec<String> = (0..30).map(|i| format!("argocd/app-{i}")).collect();
        for k in &keys {
            s.set_app(k, IN_CLUSTER_SERVER, "");
        }
        assert!(keys.iter().all(|k| !s.owns(k)), "not a member yet");
        // Only its own Lease seen so far: the others count as live while settling.
        s.set_live(live(&[1]), true);
        let own: Vec<&String> = keys.iter().filter(|k| s.owns(k)).collect();
        assert!(!own.is_empty() && own.len() < keys.len(), "{own:?}");
        // Everyone seen: settled; then shard 2 dies and 1 takes part of its share.
        s.set_live(live(&[0, 1, 2]), true);
        let before = keys.iter().filter(|k| s.owns(k)).count();
        assert_eq!(before, own.len());
        s.set_live(live(&[0, 1]), true);
        let after = keys.iter().filter(|k| s.owns(k)).count();
        assert!(after > before, "{after} > {before}");
        assert!(s.is_alive("replica-0") && !s.is_alive("replica-2"));
        // Losing its own Lease: nothing.
        let (_, lost) = s.set_live(live(&[0]), false);
        assert!(lost);
        assert!(keys.iter().all(|k| !s.owns(k)));
    }

    #[test]
    fn destinations_by_name_resolve_through_the_secrets() {
        let secrets = vec![(
            "prod".to_string(),
            ClusterRef {
                id: "uid-1".into(),
                server: "https://prod:6443".into(),
                shard: None,
            },
        )];
        assert_eq!(resolve_server(&secrets, "", "prod"), "https://prod:6443");
        assert_eq!(
            resolve_server(&secrets, "", "in-cluster"),
            IN_CLUSTER_SERVER
        );
        assert_eq!(resolve_server(&secrets, "https://x", "prod"), "https://x");
    }
}
