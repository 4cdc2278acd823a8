//! The bookkeeping of the lists behind the watches: a kind is watched through one list+watch
//! over the whole cluster, or one per managed namespace (a namespaced cluster). Each of those
//! lists on its own, and relists on its own after a 410 Gone: which objects a relist no longer
//! shows is decided within that namespace only, so one namespace's relist never drops another
//! namespace's objects, and two relists at once keep apart what each has seen. A kind is
//! synced once every one of its lists has completed once.

use std::collections::{HashMap, HashSet};

use plumb_model::{GroupKind, ResourceKey};

use crate::scope::WatchTarget;

/// Lists in progress, per kind and target.
#[derive(Debug, Default)]
pub(super) struct Lists {
    /// Targets whose initial list has not completed, per kind.
    initial: HashMap<GroupKind, HashSet<WatchTarget>>,
    /// Keys a (re)list in progress has shown so far.
    relisting: HashMap<(GroupKind, WatchTarget), HashSet<ResourceKey>>,
}

/// Whether `key` lies where `target` lists.
fn within(target: &WatchTarget, key: &ResourceKey) -> bool {
    match target {
        WatchTarget::AllNamespaces => true,
        WatchTarget::Namespace(ns) => key.namespace == *ns,
    }
}

impl Lists {
    /// A kind's watches start: none of their lists has completed.
    pub(super) fn started(&mut self, gk: &GroupKind, targets: &[WatchTarget]) {
        self.initial
            .entry(gk.clone())
            .or_default()
            .extend(targets.iter().cloned());
    }

    /// Whether this target's first list is still running (its objects notify nobody yet).
    pub(super) fn is_initial(&self, gk: &GroupKind, target: &WatchTarget) -> bool {
        self.initial.get(gk).is_some_and(|t| t.contains(target))
    }

    /// A (re)list begins (`Init`): what it shows is recorded from now on.
    pub(super) fn begins(&mut self, gk: &GroupKind, target: &WatchTarget) {
        self.relisting
            .insert((gk.clone(), target.clone()), HashSet::new());
    }

    /// The list in progress showed `key` (`InitApply`).
    pub(super) fn shows(&mut self, gk: &GroupKind, target: &WatchTarget, key: ResourceKey) {
        if let Some(seen) = self.relisting.get_mut(&(gk.clone(), target.clone())) {
            seen.insert(key);
        }
    }

    /// The list completed (`InitDone`). `cached` are the kind's keys in the cache now; returns
    /// those within the target the list did not show (gone while the watch was away), and
    /// whether the kind just became synced (its last initial list completed).
    pub(super) fn done(
        &mut self,
        gk: &GroupKind,
        target: &WatchTarget,
        cached: Vec<ResourceKey>,
    ) -> (Vec<ResourceKey>, bool) {
        let seen = self
            .relisting
            .remove(&(gk.clone(), target.clone()))
            .unwrap_or_default();
        let stale = cached
            .into_iter()
            .filter(|k| within(target, k) && !seen.contains(k))
            .collect();
        let mut synced = false;
        if let Some(targets) = self.initial.get_mut(gk)
            && targets.remove(target)
            && targets.is_empty()
        {
            self.initial.remove(gk);
            synced = true;
        }
        (stale, synced)
    }

    /// A kind is no longer watched.
    pub(super) fn forget(&mut self, gk: &GroupKind) {
        self.initial.remove(gk);
        self.relisting.retain(|(g, _), _| g != gk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(ns: &str, name: &str) -> ResourceKey {
        ResourceKey::new("", "ConfigMap", ns, name)
    }

    fn ns(n: &str) -> WatchTarget {
        WatchTarget::Namespace(n.into())
    }

    #[test]
    fn a_kind_is_synced_when_every_namespace_listed() {
        let gk = GroupKind::new("", "ConfigMap");
        let mut l = Lists::default();
        l.started(&gk, &[ns("a"), ns("b")]);
        assert!(l.is_initial(&gk, &ns("a")) && l.is_initial(&gk, &ns("b")));
        l.begins(&gk, &ns("a"));
        l.shows(&gk, &ns("a"), cm("a", "x"));
        assert_eq!(l.done(&gk, &ns("a"), vec![cm("a", "x")]), (vec![], false));
        assert!(!l.is_initial(&gk, &ns("a")) && l.is_initial(&gk, &ns("b")));
        l.begins(&gk, &ns("b"));
        assert_eq!(l.done(&gk, &ns("b"), vec![cm("a", "x")]), (vec![], true));
        // A relist later never makes the kind "newly synced" again.
        l.begins(&gk, &ns("a"));
        assert_eq!(l.done(&gk, &ns("a"), vec![]), (vec![], false));
    }

    /// A 410 on namespace a's watch relists a only: b's objects stay, a's objects the relist
    /// no longer shows go (deleted while the watch was away).
    #[test]
    fn a_relist_drops_only_its_own_namespaces_stale_objects() {
        let gk = GroupKind::new("", "ConfigMap");
        let mut l = Lists::default();
        l.started(&gk, &[ns("a"), ns("b")]);
        for t in ["a", "b"] {
            l.begins(&gk, &ns(t));
            l.done(&gk, &ns(t), vec![]);
        }
        l.begins(&gk, &ns("a"));
        l.shows(&gk, &ns("a"), cm("a", "kept"));
        let cached = vec![cm("a", "kept"), cm("a", "gone"), cm("b", "other")];
        let (stale, synced) = l.done(&gk, &ns("a"), cached);
        assert_eq!(stale, [cm("a", "gone")]);
        assert!(!synced);
    }

    /// Two namespaces relisting at once keep apart what each has seen: a's end neither
    /// forgets b's progress nor judges b's objects.
    #[test]
    fn overlapping_relists_keep_their_own_progress() {
        let gk = GroupKind::new("", "ConfigMap");
        let mut l = Lists::default();
        l.started(&gk, &[ns("a"), ns("b")]);
        l.begins(&gk, &ns("a"));
        l.begins(&gk, &ns("b"));
        l.shows(&gk, &ns("b"), cm("b", "y"));
        l.shows(&gk, &ns("a"), cm("a", "x"));
        let cached = vec![cm("a", "x"), cm("b", "y"), cm("b", "z")];
        assert_eq!(l.done(&gk, &ns("a"), cached.clone()), (vec![], false));
        let (stale, synced) = l.done(&gk, &ns("b"), cached);
        assert_eq!(stale, [cm("b", "z")]);
        assert!(synced);
    }

    #[test]
    fn a_cluster_wide_list_judges_every_namespace_and_forget_clears() {
        let gk = GroupKind::new("", "ConfigMap");
        let mut l = Lists::default();
        l.started(&gk, &[WatchTarget::AllNamespaces]);
        l.begins(&gk, &WatchTarget::AllNamespaces);
        l.shows(&gk, &WatchTarget::AllNamespaces, cm("a", "x"));
        let (stale, synced) = l.done(
            &gk,
            &WatchTarget::AllNamespaces,
            vec![cm("a", "x"), cm("b", "y")],
        );
        assert_eq!((stale, synced), (vec![cm("b", "y")], true));
        l.started(&gk, &[ns("a")]);
        l.begins(&gk, &ns("a"));
        l.forget(&gk);
        assert!(!l.is_initial(&gk, &ns("a")));
        assert!(!l.done(&gk, &ns("a"), vec![cm("a", "x")]).1);
    }
}
