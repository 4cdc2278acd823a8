//! Which part of a cluster Plumb manages: the whole cluster, or, for a namespaced cluster
//! (Argo's `Cluster.Namespaces` and `Cluster.ClusterResources`), a list of namespaces and
//! perhaps the cluster-scoped kinds. The live cache lists and watches through it, and a
//! comparison refuses what lies outside it, with gitops-engine's messages
//! (`pkg/cache/cluster.go`: `processApi`, `GetManagedLiveObjs`).

use plumb_model::ResourceKey;

/// The namespaces of a cluster Plumb manages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterScope {
    /// Empty: every namespace (and every cluster-scoped kind).
    namespaces: Vec<String>,
    /// With namespaces listed: whether cluster-scoped kinds are managed too.
    cluster_resources: bool,
}

/// Where one kind is listed and watched.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WatchTarget {
    /// One list and watch over the whole cluster.
    AllNamespaces,
    /// One list and watch in this namespace.
    Namespace(String),
}

impl ClusterScope {
    /// The whole cluster.
    pub fn whole_cluster() -> Self {
        Self::default()
    }

    /// A namespaced cluster: these namespaces (blanks and repeats dropped, order kept), and
    /// the cluster-scoped kinds when `cluster_resources`. No namespace at all: the whole
    /// cluster, as in Argo (`clusterResources` only counts with namespaces).
    pub fn namespaced(namespaces: &[String], cluster_resources: bool) -> Self {
        let mut kept: Vec<String> = Vec::new();
        for ns in namespaces
            .iter()
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
        {
            if !kept.iter().any(|k| k == ns) {
                kept.push(ns.to_string());
            }
        }
        Self {
            cluster_resources: cluster_resources && !kept.is_empty(),
            namespaces: kept,
        }
    }

    /// Whether every namespace is managed.
    pub fn is_whole_cluster(&self) -> bool {
        self.namespaces.is_empty()
    }

    /// The namespaces managed (empty: all of them).
    pub fn namespaces(&self) -> &[String] {
        &self.namespaces
    }

    /// Whether cluster-scoped kinds are managed.
    pub fn cluster_resources(&self) -> bool {
        self.is_whole_cluster() || self.cluster_resources
    }

    /// Where a kind is listed and watched (gitops-engine's `processApi`): the whole cluster
    /// when every namespace is managed or for a cluster-scoped kind with `clusterResources`,
    /// each managed namespace for a namespaced kind, nowhere for a cluster-scoped kind
    /// without `clusterResources`.
    pub fn watch_targets(&self, namespaced: bool) -> Vec<WatchTarget> {
        if self.is_whole_cluster() || (!namespaced && self.cluster_resources) {
            return vec![WatchTarget::AllNamespaces];
        }
        if !namespaced {
            return Vec::new();
        }
        self.namespaces
            .iter()
            .map(|n| WatchTarget::Namespace(n.clone()))
            .collect()
    }

    /// Whether an object in `namespace` (`""` for cluster-scoped) is within the scope.
    pub fn manages(&self, namespace: &str) -> bool {
        if self.is_whole_cluster() {
            return true;
        }
        if namespace.is_empty() {
            return self.cluster_resources;
        }
        self.namespaces.iter().any(|n| n == namespace)
    }

    /// Why an object the Application declares cannot be managed on this cluster, in
    /// gitops-engine's words (`GetManagedLiveObjs`); `None` when it can. `key` has its
    /// namespace already defaulted (empty for a cluster-scoped kind).
    pub fn refusal(&self, key: &ResourceKey) -> Option<String> {
        if self.manages(&key.namespace) {
            return None;
        }
        Some(if key.namespace.is_empty() {
            format!(
                "cluster level {} {} can not be managed when in namespaced mode",
                key.kind,
                go_quote(&key.name)
            )
        } else {
            format!(
                "namespace {} for {} {} is not managed",
                go_quote(&key.namespace),
                key.kind,
                go_quote(&key.name)
            )
        })
    }
}

/// Go's `%q` of a string (`strconv.Quote`), as Argo's messages print names.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(list: &[&str], cluster_resources: bool) -> ClusterScope {
        let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        ClusterScope::namespaced(&list, cluster_resources)
    }

    #[test]
    fn the_whole_cluster_watches_every_kind_once_and_refuses_nothing() {
        let all = ClusterScope::whole_cluster();
        assert_eq!(all.watch_targets(true), [WatchTarget::AllNamespaces]);
        assert_eq!(all.watch_targets(false), [WatchTarget::AllNamespaces]);
        assert!(all.manages("") && all.manages("x"));
        assert_eq!(
            all.refusal(&ResourceKey::new("", "Namespace", "", "x")),
            None
        );
        // `clusterResources` without namespaces means nothing (Argo: "used only if list of
        // managed namespaces is not empty").
        assert_eq!(ns(&[], true), all);
        assert_eq!(ns(&[" ", ""], false), all);
    }

    #[test]
    fn a_namespaced_cluster_watches_namespaced_kinds_per_namespace() {
        let s = ns(&["a", " b", "a", ""], false);
        assert_eq!(s.namespaces(), ["a", "b"]);
        assert_eq!(
            s.watch_targets(true),
            [
                WatchTarget::Namespace("a".into()),
                WatchTarget::Namespace("b".into())
            ]
        );
        assert_eq!(s.watch_targets(false), []);
        assert!(!s.cluster_resources());
        let with = ns(&["a"], true);
        assert_eq!(with.watch_targets(false), [WatchTarget::AllNamespaces]);
        assert_eq!(
            with.watch_targets(true),
            [WatchTarget::Namespace("a".into())]
        );
        assert!(with.cluster_resources());
    }

    #[test]
    fn refusals_are_gitops_engines_messages() {
        let s = ns(&["a", "b"], false);
        let cm = |n: &str| ResourceKey::new("", "ConfigMap", n, "settings");
        assert_eq!(s.refusal(&cm("a")), None);
        assert_eq!(s.refusal(&cm("b")), None);
        assert_eq!(
            s.refusal(&cm("c")).as_deref(),
            Some(r#"namespace "c" for ConfigMap "settings" is not managed"#)
        );
        let role = ResourceKey::new("rbac.authorization.k8s.io", "ClusterRole", "", "reader");
        assert_eq!(
            s.refusal(&role).as_deref(),
            Some(
                r#"cluster level ClusterRole "reader" can not be managed when in namespaced mode"#
            )
        );
        assert_eq!(ns(&["a"], true).refusal(&role), None);
        assert!(ns(&["a"], true).refusal(&cm("c")).is_some());
    }

    #[test]
    fn names_are_quoted_as_go_quotes_them() {
        assert_eq!(go_quote("plain"), r#""plain""#);
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("x\ny\u{0}\u{7f}"), r#""x\ny\x00\x7f""#);
        assert_eq!(go_quote("é\u{85}"), "\"é\\u0085\"");
    }
}
