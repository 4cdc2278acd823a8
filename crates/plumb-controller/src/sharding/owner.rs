//! Which shard owns an Application, given the live shards: the cluster's home shard (Argo's
//! algorithms) while its replica lives, else a survivor; or, with application sharding, the
//! Application's own place among the live shards.

use std::collections::{BTreeMap, BTreeSet};

use blake2::{Blake2b512, Digest};

/// The inputs of the decision, as one replica sees them at one moment.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// The shard of each cluster (server URL) for the configured replicas (Argo's algorithms and
    /// the Secrets' pins).
    pub home: BTreeMap<String, usize>,
    /// Servers whose Secret pins them to a shard (their Applications follow the cluster even
    /// with application sharding).
    pub pinned: BTreeSet<String>,
    /// Shards whose Lease is held and fresh.
    pub live: BTreeSet<usize>,
    /// Spread the Applications of a cluster over the live shards by name instead of keeping
    /// each cluster on one shard.
    pub by_application: bool,
}

impl Placement {
    /// The shard that reconciles the Application `key` (`namespace/name`) deploying to `server`
    /// (its cluster's URL; an unknown one counts as in-cluster, shard 0 in Argo). `None` when no
    /// shard is live.
    pub fn owner(&self, key: &str, server: &str) -> Option<usize> {
        if self.live.is_empty() {
            return None;
        }
        let home = self.home.get(server).copied().unwrap_or(0);
        if self.by_application && !self.pinned.contains(server) {
            return rendezvous(key, &self.live);
        }
        if self.live.contains(&home) {
            return Some(home);
        }
        // The home replica is gone: the cluster goes to a survivor chosen by the cluster's URL,
        // so its Applications stay together and the other clusters do not move.
        rendezvous(server, &self.live)
    }
}

/// Rendezvous (highest random weight) hashing, a consistent hashing scheme: every key goes to
/// the shard scoring highest for it. Balanced, and when a shard leaves only its keys move (to
/// where they scored second); when it returns, exactly those come back.
pub fn rendezvous(key: &str, shards: &BTreeSet<usize>) -> Option<usize> {
    shards
        .iter()
        .map(|s| (score(key, *s), *s))
        .max()
        .map(|(_, s)| s)
}

fn score(key: &str, shard: usize) -> u64 {
    let mut h = Blake2b512::new();
    h.update(key.as_bytes());
    h.update([0u8]);
    h.update(shard.to_string().as_bytes());
    let out = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&out[..8]);
    u64::from_le_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(shards: &[usize]) -> BTreeSet<usize> {
        shards.iter().copied().collect()
    }

    fn apps(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("argocd/app-{i:04}")).collect()
    }

    #[test]
    fn applications_spread_evenly_over_the_live_shards() {
        let shards = live(&[0, 1, 2]);
        let mut counts = [0usize; 3];
        for a in apps(3000) {
            counts[rendezvous(&a, &shards).unwrap_or(99)] += 1;
        }
        for (s, n) in counts.iter().enumerate() {
            assert!(
                (900..=1100).contains(n),
                "shard {s} got {n} of 3000: {counts:?}"
            );
        }
    }

    #[test]
    fn a_leaving_shard_moves_only_its_own_applications_and_they_come_back() {
        let all = live(&[0, 1, 2]);
        let survivors = live(&[0, 2]);
        let mut moved = 0;
        for a in apps(2000) {
            let before = rendezvous(&a, &all).unwrap_or(99);
            let after = rendezvous(&a, &survivors).unwrap_or(99);
            if before == 1 {
                moved += 1;
                assert_ne!(after, 1);
            } else {
                assert_eq!(after, before, "{a} moved although its shard stayed");
            }
            assert_eq!(rendezvous(&a, &all), Some(before), "{a} comes back");
        }
        // Shard 1 had about a third; its Applications spread over both survivors.
        assert!((500..=830).contains(&moved), "{moved} moved");
        let to_zero = apps(2000)
            .iter()
            .filter(|a| rendezvous(a, &all) == Some(1) && rendezvous(a, &survivors) == Some(0))
            .count();
        assert!(
            to_zero * 3 > moved && to_zero * 3 < moved * 2,
            "{to_zero} of {moved} went to shard 0"
        );
    }

    #[test]
    fn a_cluster_stays_home_while_its_shard_lives_and_moves_whole_when_it_dies() {
        let mut p = Placement {
            home: [("https://c1".to_string(), 1), ("https://c2".to_string(), 2)]
                .into_iter()
                .collect(),
            live: live(&[0, 1, 2]),
            ..Default::default()
        };
        assert_eq!(p.owner("argocd/a", "https://c1"), Some(1));
        assert_eq!(p.owner("argocd/b", "https://c1"), Some(1));
        assert_eq!(
            p.owner("argocd/c", "https://kubernetes.default.svc"),
            Some(0)
        );
        p.live = live(&[0, 2]);
        let a = p.owner("argocd/a", "https://c1");
        assert!(matches!(a, Some(0 | 2)));
        assert_eq!(
            p.owner("argocd/b", "https://c1"),
            a,
            "one cluster, one survivor"
        );
        assert_eq!(p.owner("argocd/x", "https://c2"), Some(2), "others stay");
        p.live.clear();
        assert_eq!(p.owner("argocd/a", "https://c1"), None);
    }

    #[test]
    fn application_sharding_spreads_one_cluster_but_respects_pins() {
        let mut p = Placement {
            home: [("https://pinned".to_string(), 2)].into_iter().collect(),
            pinned: ["https://pinned".to_string()].into_iter().collect(),
            live: live(&[0, 1, 2]),
            by_application: true,
        };
        let mut seen = BTreeSet::new();
        for a in apps(60) {
            seen.insert(p.owner(&a, "https://kubernetes.default.svc").unwrap_or(99));
            assert_eq!(p.owner(&a, "https://pinned"), Some(2));
        }
        assert_eq!(
            seen,
            live(&[0, 1, 2]),
            "one cluster's Applications on every shard"
        );
        p.live = live(&[0, 1]);
        let survivor = p.owner("argocd/app-0001", "https://pinned");
        assert!(
            matches!(survivor, Some(0 | 1)),
            "a pinned cluster's dead shard is covered"
        );
    }
}
