//! Which kinds the live cache watches: everything listable, minus the noisy kinds Argo CD never
//! caches and the `resource.exclusions` rules of the settings.

use plumb_model::GroupKind;
use serde::Deserialize;

/// Kinds that change constantly and are never managed by an Application.
pub const NOISY_KINDS: &[(&str, &str)] = &[
    ("", "Event"),
    ("events.k8s.io", "Event"),
    ("coordination.k8s.io", "Lease"),
    ("discovery.k8s.io", "EndpointSlice"),
    ("", "Endpoints"),
];

/// One `resource.exclusions` rule (argocd-cm YAML list items). An empty list matches everything;
/// entries are globs (`*`, `?`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExclusionRule {
    /// API groups.
    #[serde(default)]
    pub api_groups: Vec<String>,
    /// Kinds.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Cluster URLs.
    #[serde(default)]
    pub clusters: Vec<String>,
}

impl ExclusionRule {
    /// Whether the rule excludes a kind on a cluster (Argo's `FilteredResource.Match`).
    pub fn matches(&self, gk: &GroupKind, cluster: &str) -> bool {
        let any = |patterns: &[String], value: &str| {
            patterns.is_empty() || patterns.iter().any(|p| glob(p, value))
        };
        any(&self.api_groups, &gk.group)
            && any(&self.kinds, &gk.kind)
            && any(&self.clusters, cluster)
    }
}

/// Whether the live cache should watch a kind.
pub fn is_watched(gk: &GroupKind, cluster: &str, exclusions: &[ExclusionRule]) -> bool {
    !NOISY_KINDS
        .iter()
        .any(|(g, k)| gk.group == *g && gk.kind == *k)
        && !exclusions.iter().any(|rule| rule.matches(gk, cluster))
}

/// Glob match with `*` (any run) and `?` (one character).
fn glob(pattern: &str, value: &str) -> bool {
    let (p, v): (Vec<char>, Vec<char>) = (pattern.chars().collect(), value.chars().collect());
    let (mut pi, mut vi, mut star, mut mark) = (0, 0, None, 0);
    while vi < v.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == v[vi]) {
            pi += 1;
            vi += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = vi;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            vi = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noisy_kinds_are_never_watched() {
        for (g, k) in NOISY_KINDS {
            assert!(!is_watched(
                &GroupKind::new(*g, *k),
                "https://kubernetes.default.svc",
                &[]
            ));
        }
        assert!(is_watched(
            &GroupKind::new("apps", "Deployment"),
            "https://kubernetes.default.svc",
            &[]
        ));
    }

    #[test]
    fn exclusion_rules_match_like_argo() {
        // The shape of Argo CD's default `resource.exclusions`.
        let rules: Vec<ExclusionRule> = serde_json::from_value(serde_json::json!([
            {"apiGroups": ["", "discovery.k8s.io"], "kinds": ["Endpoints", "EndpointSlice"]},
            {"apiGroups": ["*.kyverno.io"], "kinds": ["*Report"], "clusters": ["*"]},
            {"apiGroups": ["cert-manager.io"], "kinds": ["CertificateRequest"], "clusters": ["https://prod.*"]}
        ]))
        .unwrap();
        let local = "https://kubernetes.default.svc";
        assert!(!is_watched(
            &GroupKind::new("wgpolicyk8s.kyverno.io", "PolicyReport"),
            local,
            &rules
        ));
        assert!(is_watched(
            &GroupKind::new("kyverno.io", "ClusterPolicy"),
            local,
            &rules
        ));
        let cr = GroupKind::new("cert-manager.io", "CertificateRequest");
        assert!(is_watched(&cr, local, &rules));
        assert!(!is_watched(&cr, "https://prod.example.com", &rules));
        assert!(
            ExclusionRule::default().matches(&cr, local),
            "an empty rule matches everything"
        );
        assert!(glob("a*b?d", "axxbcd") && !glob("a*b?d", "axxbd") && glob("*", ""));
    }
}
