//! Argo CD's cluster sharding, ported from `controller/sharding/sharding.go`, `cache.go` and
//! `consistent/consistent.go`. Our own code because of Argo CD compatibility: a fleet moving
//! from Argo's application controller keeps every cluster on the shard Argo gave it, so the
//! hashes (FNV-32a, BLAKE2b-512), the sort orders and the bounded-load arithmetic (integer
//! division included) are Argo's exactly.

use std::collections::{BTreeMap, HashMap};

use blake2::{Blake2b512, Digest};

/// `controller.sharding.algorithm`: how clusters are spread over the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// FNV-32a of the cluster ID modulo the replicas (Argo's default); in-cluster on shard 0.
    #[default]
    Legacy,
    /// Clusters sorted by ID, the index modulo the replicas.
    RoundRobin,
    /// Consistent hashing with bounded loads (loads: Applications per cluster).
    ConsistentHashing,
}

impl Algorithm {
    /// Argo's names; `None` for anything else (Argo then warns and uses `legacy`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim() {
            "legacy" => Some(Self::Legacy),
            "round-robin" => Some(Self::RoundRobin),
            "consistent-hashing" => Some(Self::ConsistentHashing),
            _ => None,
        }
    }

    /// The name as written in settings.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Legacy => "legacy",
            Self::RoundRobin => "round-robin",
            Self::ConsistentHashing => "consistent-hashing",
        }
    }
}

/// A destination cluster as sharding sees it (Argo's `v1alpha1.Cluster` fields that matter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRef {
    /// Argo's cluster ID: the UID of the cluster Secret; empty for the in-cluster destination
    /// without a Secret (Argo's local cluster has no ID).
    pub id: String,
    /// The API server URL (what `destination.server` names).
    pub server: String,
    /// The `shard` key of the cluster Secret: pins the cluster to that shard.
    pub shard: Option<i64>,
}

/// The shard of every cluster (by server URL) for `replicas` replicas: Argo's
/// `ClusterSharding.updateDistribution`. A pinned shard below `replicas` wins; a pinned shard
/// out of range falls back to shard 0 (Argo logs "Using shard 0"; a negative one, which Argo
/// would keep and so leave the cluster to no replica, also goes to shard 0). `apps_per_server` counts the
/// Applications whose `destination.server` is each cluster's URL (the consistent-hashing loads).
pub fn distribute(
    algorithm: Algorithm,
    clusters: &[ClusterRef],
    apps_per_server: &HashMap<String, i64>,
    replicas: usize,
) -> BTreeMap<String, usize> {
    let computed: HashMap<String, usize> = match algorithm {
        Algorithm::Legacy => clusters
            .iter()
            .map(|c| (c.id.clone(), legacy(&c.id, replicas)))
            .collect(),
        Algorithm::RoundRobin => round_robin(clusters, replicas),
        Algorithm::ConsistentHashing => {
            consistent_hashing_bounded(clusters, apps_per_server, replicas)
        }
    };
    clusters
        .iter()
        .map(|c| {
            let shard = match c.shard {
                Some(pin) => pinned_shard(pin, replicas).unwrap_or(0),
                None => computed.get(&c.id).copied().unwrap_or(0),
            };
            (c.server.clone(), shard)
        })
        .collect()
}

/// A Secret's `shard` when it names one of the `replicas` shards; `None` for one out of range
/// (negative, or not below the replicas), which [`distribute`] places on shard 0 as Argo does
/// (the caller warns once per change of the Secrets, see `Sharding::set_clusters`).
pub fn pinned_shard(pin: i64, replicas: usize) -> Option<usize> {
    usize::try_from(pin).ok().filter(|p| *p < replicas)
}

/// Argo's `LegacyDistributionFunction`: FNV-32a of the ID modulo the replicas; an empty ID (the
/// in-cluster destination) is shard 0.
pub fn legacy(id: &str, replicas: usize) -> usize {
    if replicas == 0 || id.is_empty() {
        return 0;
    }
    (fnv32a(id.as_bytes()) % replicas as u32) as usize
}

fn fnv32a(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in bytes {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Argo's `RoundRobinDistributionFunction`: the rank in the list sorted by ID, modulo replicas.
fn round_robin(clusters: &[ClusterRef], replicas: usize) -> HashMap<String, usize> {
    let mut ids: Vec<&str> = clusters.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.iter()
        .enumerate()
        .map(|(i, id)| (id.to_string(), i % replicas.max(1)))
        .collect()
}

/// Argo's `createConsistentHashingWithBoundLoads`: shards `"0".."replicas-1"` on a ring of 1000
/// points each, clusters in ID order placed on the least loaded shard at or after their hash, the
/// load of a shard being the Applications of the clusters it got.
fn consistent_hashing_bounded(
    clusters: &[ClusterRef],
    apps_per_server: &HashMap<String, i64>,
    replicas: usize,
) -> HashMap<String, usize> {
    let mut sorted: Vec<&ClusterRef> = clusters.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let mut ring = BoundedRing::new(1000);
    let mut apps_by_shard: HashMap<String, i64> = HashMap::new();
    for i in 0..replicas {
        ring.add(&i.to_string());
        apps_by_shard.insert(i.to_string(), 0);
    }
    let mut out = HashMap::new();
    for c in sorted {
        let host = ring.get_least(&c.id).unwrap_or_default();
        // Argo: `strconv.Atoi` of the host; its error leaves 0.
        out.insert(c.id.clone(), host.parse::<usize>().unwrap_or(0));
        let load = apps_by_shard.entry(host.clone()).or_insert(0);
        *load += apps_per_server.get(&c.server).copied().unwrap_or(0);
        let load = *load;
        ring.update_load(&host, load);
    }
    out
}

/// Argo's `consistent.Consistent`: a hash ring with bounded loads.
struct BoundedRing {
    points: BTreeMap<u64, String>,
    loads: BTreeMap<String, i64>,
    total: i64,
    replication: usize,
}

impl BoundedRing {
    fn new(replication: usize) -> Self {
        Self {
            points: BTreeMap::new(),
            loads: BTreeMap::new(),
            total: 0,
            replication,
        }
    }

    fn add(&mut self, server: &str) {
        if self.loads.contains_key(server) {
            return;
        }
        self.loads.insert(server.to_string(), 0);
        for i in 0..self.replication {
            self.points
                .insert(ring_hash(&format!("{server}{i}")), server.to_string());
        }
    }

    /// The least loaded host at or after `client`'s point (Argo's `GetLeast`, the newer form
    /// with the loop-around check).
    fn get_least(&mut self, client: &str) -> Option<String> {
        if self.points.is_empty() {
            return None;
        }
        let start = ring_hash(client);
        let mut h = start;
        loop {
            let mut found = self
                .points
                .range(h..)
                .map(|(k, _)| *k)
                .find(|k| *k != h)
                .unwrap_or(0);
            if found == 0 {
                found = self.points.keys().next().copied().unwrap_or(0);
            }
            if found == start {
                break;
            }
            let host = self.points.get(&found)?.clone();
            if self.load_ok(&host) {
                return Some(host);
            }
            h = found.wrapping_add(1);
        }
        self.points.get(&start).cloned()
    }

    fn update_load(&mut self, server: &str, load: i64) {
        if let Some(old) = self.loads.get_mut(server) {
            self.total -= *old;
            *old = load;
            self.total += load;
        }
    }

    fn load_ok(&mut self, server: &str) -> bool {
        if self.total < 0 {
            self.total = 0;
        }
        // Go: float64((totalLoad + 1) / int64(len(loadMap))): integer division first.
        let hosts = self.loads.len().max(1) as i64;
        let mut avg = ((self.total + 1) / hosts) as f64;
        if avg == 0.0 {
            avg = 1.0;
        }
        let avg = (avg * 1.25).ceil();
        (self.loads.get(server).copied().unwrap_or(0) as f64) < avg
    }
}

/// Argo's ring hash: the first 8 bytes of BLAKE2b-512, little-endian.
fn ring_hash(key: &str) -> u64 {
    let out = Blake2b512::digest(key.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&out[..8]);
    u64::from_le_bytes(first)
}

/// Argo's `InferShard`: the number after the last `-` of the host name (a StatefulSet pod
/// `argocd-application-controller-2` is shard 2); 0 when there is none (Argo warns and uses 0).
pub fn infer_shard(hostname: &str) -> usize {
    hostname
        .rsplit('-')
        .next()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(id: &str) -> ClusterRef {
        ClusterRef {
            id: id.to_string(),
            // Argo's test fixture `createCluster`.
            server: format!("https://kubernetes.default.svc?{id}"),
            shard: None,
        }
    }

    // Argo's TestGetShardByID_NotEmptyID / TestGetClusterFilterLegacy: with 2 replicas, IDs
    // "1".."4" alternate 0, 1, 0, 1; an empty ID is shard 0; one replica puts everything on 0.
    #[test]
    fn legacy_matches_argo_outputs() {
        assert_eq!(["1", "2", "3", "4"].map(|id| legacy(id, 2)), [0, 1, 0, 1]);
        assert_eq!(legacy("", 10), 0);
        assert_eq!(["1", "2", "3", "4"].map(|id| legacy(id, 1)), [0, 0, 0, 0]);
        // FNV-32a's published test vector: the hash itself is Go's hash/fnv New32a.
        assert_eq!(fnv32a(b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(b""), 0x811c_9dc5);
    }

    // Argo's TestGetShardByIndexModuloReplicasCountDistributionFunction2: clusters "1".."5".
    #[test]
    fn round_robin_matches_argo_outputs() {
        let clusters: Vec<ClusterRef> = ["1", "2", "3", "4", "5"].map(cluster).to_vec();
        let none = HashMap::new();
        for (replicas, want) in [
            (1, [0, 0, 0, 0, 0]),
            (2, [0, 1, 0, 1, 0]),
            (3, [0, 1, 2, 0, 1]),
        ] {
            let d = distribute(Algorithm::RoundRobin, &clusters, &none, replicas);
            let got: Vec<usize> = clusters.iter().map(|c| d[&c.server]).collect();
            assert_eq!(got, want, "{replicas} replicas");
        }
    }

    // Argo's TestRoundRobinGetClusterFilterWithFixedShard / cache.go: a pin below the replicas
    // wins over every algorithm; one out of range means shard 0.
    #[test]
    fn a_cluster_secret_shard_pins_the_cluster() {
        let mut c4 = cluster("4");
        c4.shard = Some(1);
        let mut c5 = cluster("5");
        c5.shard = Some(7);
        // Hostile pins: negative (Argo would keep -1 and leave the cluster to no replica) and
        // the extremes of the field.
        let mut c6 = cluster("6");
        c6.shard = Some(-1);
        let mut c7 = cluster("7");
        c7.shard = Some(i64::MIN);
        let mut c8 = cluster("8");
        c8.shard = Some(i64::MAX);
        let clusters = vec![cluster("1"), cluster("2"), cluster("3"), c4, c5, c6, c7, c8];
        let none = HashMap::new();
        for alg in [
            Algorithm::Legacy,
            Algorithm::RoundRobin,
            Algorithm::ConsistentHashing,
        ] {
            let d = distribute(alg, &clusters, &none, 3);
            assert_eq!(d["https://kubernetes.default.svc?4"], 1, "{alg:?}");
            assert_eq!(d["https://kubernetes.default.svc?5"], 0, "{alg:?}");
            for hostile in ["6", "7", "8"] {
                assert_eq!(
                    d[&format!("https://kubernetes.default.svc?{hostile}")],
                    0,
                    "{alg:?}: cluster {hostile}"
                );
            }
        }
    }

    // Argo's TestConsistentHashingWhenClusterIsAddedAndRemoved: 133 clusters over 3 replicas are
    // within 10 % of the average; going to 2 replicas moves only the clusters of shard 2.
    #[test]
    fn consistent_hashing_balances_and_moves_only_the_removed_shard() {
        let clusters: Vec<ClusterRef> = (0..133).map(|i| cluster(&format!("{i:06}"))).collect();
        let none = HashMap::new();
        let three = distribute(Algorithm::ConsistentHashing, &clusters, &none, 3);
        let mut counts = [0usize; 3];
        for shard in three.values() {
            counts[*shard] += 1;
        }
        let avg = 133.0 / 3.0;
        for (shard, n) in counts.iter().enumerate() {
            let n = *n as f64;
            assert!(
                n <= avg * 1.1 && n >= avg * 0.9,
                "shard {shard} has {n} clusters, average {avg}: {counts:?}"
            );
        }
        let two = distribute(Algorithm::ConsistentHashing, &clusters, &none, 2);
        for c in &clusters {
            let before = three[&c.server];
            if before != 2 {
                assert_eq!(two[&c.server], before, "{} moved", c.id);
            }
        }
    }

    // With loads, a cluster carrying most Applications leaves its shard less room: the others
    // go elsewhere (the "bounded loads" part).
    #[test]
    fn consistent_hashing_weighs_clusters_by_their_applications() {
        let clusters: Vec<ClusterRef> = (0..12).map(|i| cluster(&format!("c{i:02}"))).collect();
        let mut apps = HashMap::new();
        apps.insert(clusters[0].server.clone(), 1000);
        let d = distribute(Algorithm::ConsistentHashing, &clusters, &apps, 3);
        let heavy = d[&clusters[0].server];
        let with_heavy = clusters.iter().filter(|c| d[&c.server] == heavy).count();
        assert_eq!(
            with_heavy, 1,
            "the shard of the heavy cluster gets nothing else: {d:?}"
        );
    }

    #[test]
    fn in_cluster_without_a_secret_is_shard_zero_for_legacy_and_round_robin() {
        let mut clusters: Vec<ClusterRef> = ["1", "2", "3"].map(cluster).to_vec();
        clusters.push(ClusterRef {
            id: String::new(),
            server: "https://kubernetes.default.svc".into(),
            shard: None,
        });
        let none = HashMap::new();
        for alg in [Algorithm::Legacy, Algorithm::RoundRobin] {
            let d = distribute(alg, &clusters, &none, 3);
            assert_eq!(d["https://kubernetes.default.svc"], 0, "{alg:?}");
        }
        // Round robin ranks the empty ID first, so the Secrets' clusters start at index 1.
        let d = distribute(Algorithm::RoundRobin, &clusters, &none, 3);
        assert_eq!(d["https://kubernetes.default.svc?1"], 1);
        assert_eq!(d["https://kubernetes.default.svc?3"], 0);
    }

    // Argo's TestInferShard.
    #[test]
    fn shard_from_the_host_name() {
        assert_eq!(infer_shard("example-shard-3"), 3);
        assert_eq!(infer_shard("argocd-application-controller-2"), 2);
        assert_eq!(infer_shard("exampleshard"), 0);
        assert_eq!(infer_shard("example-shard"), 0);
    }

    #[test]
    fn algorithm_names() {
        for a in [
            Algorithm::Legacy,
            Algorithm::RoundRobin,
            Algorithm::ConsistentHashing,
        ] {
            assert_eq!(Algorithm::parse(a.as_str()), Some(a));
        }
        assert_eq!(Algorithm::parse("hash"), None);
    }
}
