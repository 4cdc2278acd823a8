//! Argo's refusal of a project update that would leave Applications invalid
//! (`server/project/project.go` `Update`): every Application of the project whose first source
//! the old project permits and the new one does not, and every one whose destination the old
//! project permits and the new one does not, is counted; any count refuses the update with
//! Argo's message. An Application with no destination at all counts as invalid, as in Argo.

use plumb_model::application::AppProject;

use super::scoped::{ProjectScope, scoped_cluster_refusal};
use super::{Destination, destination_permitted, source_permitted};

/// Where an Application's destination resolved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolvedDestination<'a> {
    /// Neither `server` nor `name` (Argo's `ErrDestinationMissing`): counted as invalid.
    Missing,
    /// No cluster has that server or name, or both are set: left out, as Argo does (the
    /// Application is in error already).
    Unknown,
    /// The cluster's server and name, and the Application's namespace.
    Cluster(Destination<'a>),
}

/// One Application of the project as the update check sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppUnderUpdate<'a> {
    /// The repository of its first source (Argo's `Spec.GetSource()`).
    pub repo_url: &'a str,
    /// Its destination.
    pub destination: ResolvedDestination<'a>,
}

// Argo's `IsDestinationPermitted`: the destinations, then `permitOnlyProjectScopedClusters`.
fn destination_ok(project: &AppProject, scope: &ProjectScope, dest: &Destination) -> bool {
    destination_permitted(project, dest)
        && scoped_cluster_refusal(project, scope, dest, dest.server).is_none()
}

/// Argo's error when updating `old` to `new` would make Applications invalid, if it would.
/// `scope` is what is scoped to the project (its clusters, for
/// `permitOnlyProjectScopedClusters`); `apps` are the project's Applications in the control
/// namespace.
pub fn update_refusal(
    old: &AppProject,
    new: &AppProject,
    scope: &ProjectScope,
    apps: &[AppUnderUpdate],
) -> Option<String> {
    let mut invalid_src = 0;
    let mut invalid_dst = 0;
    for app in apps {
        if source_permitted(old, app.repo_url) && !source_permitted(new, app.repo_url) {
            invalid_src += 1;
        }
        match app.destination {
            ResolvedDestination::Missing => invalid_dst += 1,
            ResolvedDestination::Unknown => {}
            ResolvedDestination::Cluster(dest) => {
                if destination_ok(old, scope, &dest) && !destination_ok(new, scope, &dest) {
                    invalid_dst += 1;
                }
            }
        }
    }
    let mut parts = Vec::new();
    if invalid_src > 0 {
        parts.push(format!("{invalid_src} applications source became invalid"));
    }
    if invalid_dst > 0 {
        parts.push(format!(
            "{invalid_dst} applications destination became invalid"
        ));
    }
    (!parts.is_empty()).then(|| format!("as a result of project update {}", parts.join(" and ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project(spec: serde_json::Value) -> AppProject {
        serde_json::from_value(json!({"metadata": {"name": "team"}, "spec": spec})).unwrap()
    }

    const LOCAL: &str = "https://kubernetes.default.svc";

    fn at(namespace: &str) -> ResolvedDestination<'_> {
        ResolvedDestination::Cluster(Destination {
            server: LOCAL,
            name: "in-cluster",
            namespace,
        })
    }

    #[test]
    fn narrowing_sources_and_destinations_under_applications_is_refused() {
        let old = project(json!({"sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}]}));
        let new = project(json!({"sourceRepos": ["https://git.acme.internal/apps/*"],
            "destinations": [{"server": LOCAL, "namespace": "team-*"}]}));
        let scope = ProjectScope::default();
        let apps = [
            AppUnderUpdate {
                repo_url: "https://git.acme.internal/apps/web.git",
                destination: at("team-web"),
            },
            AppUnderUpdate {
                repo_url: "https://github.com/other/x.git",
                destination: at("kube-system"),
            },
            AppUnderUpdate {
                repo_url: "https://github.com/other/y.git",
                destination: at("team-y"),
            },
        ];
        assert_eq!(
            update_refusal(&old, &new, &scope, &apps).as_deref(),
            Some(
                "as a result of project update 2 applications source became invalid and 1 applications destination became invalid"
            )
        );
        // Widening, or leaving the Applications valid, passes.
        assert_eq!(update_refusal(&new, &old, &scope, &apps), None);
        assert_eq!(update_refusal(&old, &new, &scope, &apps[..1]), None);
        assert_eq!(update_refusal(&old, &new, &scope, &[]), None);
    }

    #[test]
    fn already_invalid_unknown_and_missing_destinations() {
        let old = project(json!({"sourceRepos": ["https://a/*"],
            "destinations": [{"server": LOCAL, "namespace": "a"}]}));
        let new = project(json!({"sourceRepos": ["https://b/*"],
            "destinations": [{"server": LOCAL, "namespace": "b"}]}));
        let scope = ProjectScope::default();
        // Invalid before the update: not counted.
        let before = [AppUnderUpdate {
            repo_url: "https://c/x",
            destination: at("c"),
        }];
        assert_eq!(update_refusal(&old, &new, &scope, &before), None);
        // A cluster nobody knows: only the source counts.
        let unknown = [AppUnderUpdate {
            repo_url: "https://a/x",
            destination: ResolvedDestination::Unknown,
        }];
        assert_eq!(
            update_refusal(&old, &new, &scope, &unknown).as_deref(),
            Some("as a result of project update 1 applications source became invalid")
        );
        // No destination at all: counted whatever the projects say (Argo's quirk).
        let missing = [AppUnderUpdate {
            repo_url: "https://c/x",
            destination: ResolvedDestination::Missing,
        }];
        assert_eq!(
            update_refusal(&old, &old, &scope, &missing).as_deref(),
            Some("as a result of project update 1 applications destination became invalid")
        );
    }

    #[test]
    fn permit_only_project_scoped_clusters_counts() {
        let old = project(json!({"sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}]}));
        let new = project(
            json!({"sourceRepos": ["*"], "permitOnlyProjectScopedClusters": true,
            "destinations": [{"server": "*", "namespace": "*"}]}),
        );
        let apps = [AppUnderUpdate {
            repo_url: "https://a/x",
            destination: at("x"),
        }];
        assert_eq!(
            update_refusal(&old, &new, &ProjectScope::default(), &apps).as_deref(),
            Some("as a result of project update 1 applications destination became invalid")
        );
        let scope = ProjectScope {
            repos: vec![],
            clusters: vec![crate::project::scoped::ScopedCluster {
                server: LOCAL.into(),
                name: "in-cluster".into(),
                namespaces: vec![],
            }],
        };
        assert_eq!(update_refusal(&old, &new, &scope, &apps), None);
    }
}
