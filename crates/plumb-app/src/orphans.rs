//! Orphaned resources (AppProject `spec.orphanedResources`): top-level objects in an
//! Application's destination namespace that no Application tracks. With `warn: true` the
//! Application gets Argo's `OrphanedResourceWarning` condition.

use plumb_model::ResourceKey;
use plumb_model::application::{AppProject, Application};

use crate::context::{Cluster, Engines};

/// Objects every namespace has, created by Kubernetes itself: never orphans.
const BUILT_IN: &[(&str, &str, &str)] = &[
    ("", "ServiceAccount", "default"),
    ("", "ConfigMap", "kube-root-ca.crt"),
];

/// The keys of the orphaned objects in the Application's destination namespace, sorted; `None`
/// when the project does not monitor orphans or there is no live cache to look in.
pub fn orphaned(
    app: &Application,
    project: &AppProject,
    cluster: &Cluster,
    engines: &Engines,
) -> Option<Vec<ResourceKey>> {
    let settings = project.spec.orphaned_resources.as_ref()?;
    let reader = cluster.live.as_ref()?;
    let ns = app
        .spec
        .destination
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())?;
    let ignore = settings.ignore.clone().unwrap_or_default();
    let mut out: Vec<ResourceKey> = reader
        .namespace_objects(ns)
        .iter()
        .filter(|o| o.tracked_by.is_none() && o.owners.is_empty())
        .map(|o| o.key.clone())
        .filter(|k| {
            !BUILT_IN
                .iter()
                .any(|(g, kind, n)| k.group == *g && k.kind == *kind && k.name == *n)
        })
        .filter(|k| {
            !ignore.iter().any(|i| {
                glob_or_any(i.group.as_deref(), &k.group)
                    && glob_or_any(i.kind.as_deref(), &k.kind)
                    && glob_or_any(i.name.as_deref(), &k.name)
            })
        })
        .collect();
    let _ = engines;
    out.sort();
    Some(out)
}

/// The `OrphanedResourceWarning` condition, when the project asks for it and there are orphans.
pub fn warning(
    app: &Application,
    project: &AppProject,
    cluster: &Cluster,
    engines: &Engines,
) -> Option<(String, String)> {
    let warn = project
        .spec
        .orphaned_resources
        .as_ref()?
        .warn
        .unwrap_or(false);
    let orphans = orphaned(app, project, cluster, engines)?;
    (warn && !orphans.is_empty()).then(|| {
        (
            "OrphanedResourceWarning".to_string(),
            format!("Application has {} orphaned resources", orphans.len()),
        )
    })
}

fn glob_or_any(pattern: Option<&str>, value: &str) -> bool {
    match pattern {
        None | Some("") | Some("*") => true,
        Some(p) => match p.split_once('*') {
            None => p == value,
            Some((pre, post)) => {
                value.starts_with(pre)
                    && value.ends_with(post)
                    && value.len() >= pre.len() + post.len()
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_patterns() {
        assert!(glob_or_any(None, "x"));
        assert!(glob_or_any(Some("*"), "x"));
        assert!(glob_or_any(Some("cert-*"), "cert-manager"));
        assert!(!glob_or_any(Some("cert-*"), "other"));
        assert!(glob_or_any(Some("exact"), "exact"));
    }
}
