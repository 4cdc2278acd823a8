//! Project-scoped repositories and clusters (Argo CD's "Project scoped Repositories and
//! Clusters", `docs/user-guide/projects.md`): a repository or cluster Secret with a `project`
//! key belongs to that AppProject.
//!
//! As Argo's controller evaluates a project (`util/argo/argo.go` `GetAppProjectByName`):
//! - each scoped repository's URL joins `spec.sourceRepos` ([`virtual_project`]);
//! - each scoped cluster joins `spec.destinations`, with namespace `*`, or one entry per
//!   namespace of its `namespaces` key ([`virtual_project`]);
//! - with `spec.permitOnlyProjectScopedClusters: true`, a destination the destinations permit
//!   is still refused unless one of the project's clusters has its name or server
//!   (`AppProject.IsDestinationPermitted`, [`scoped_cluster_refusal`]).
//!
//! A cluster scoped to project A is not refused to project B by itself: B may use it when B's
//! own destinations permit it, as in Argo (B sets `permitOnlyProjectScopedClusters` to prevent
//! that). What belongs to A never widens B: nothing is added to B's lists.

use plumb_model::application::{AppProject, ApplicationDestination};

use super::{Destination, Rule, Violation, destination_permitted, project_name};

/// A cluster Secret scoped to the project, as the project rules see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScopedCluster {
    /// `server`.
    pub server: String,
    /// `name`.
    pub name: String,
    /// `namespaces` (comma-separated in the Secret; empty: every namespace).
    pub namespaces: Vec<String>,
}

/// What belongs to one project: the URLs of its scoped repository Secrets and its scoped
/// clusters. Empty for a project nothing is scoped to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProjectScope {
    /// `url` of each repository Secret whose `project` is the project.
    pub repos: Vec<String>,
    /// Each cluster Secret whose `project` is the project.
    pub clusters: Vec<ScopedCluster>,
}

/// The project with its scoped repositories added to `sourceRepos` and its scoped clusters to
/// `destinations` (Argo's `GetAppProjectByName`), what every later check reads.
pub fn virtual_project(project: &AppProject, scope: &ProjectScope) -> AppProject {
    let mut project = project.clone();
    if !scope.repos.is_empty() {
        let repos = project.spec.source_repos.get_or_insert_with(Vec::new);
        repos.extend(scope.repos.iter().cloned());
    }
    if !scope.clusters.is_empty() {
        let destinations = project.spec.destinations.get_or_insert_with(Vec::new);
        for cluster in &scope.clusters {
            let namespaces = match cluster.namespaces.as_slice() {
                [] => vec!["*".to_string()],
                some => some.to_vec(),
            };
            destinations.extend(namespaces.into_iter().map(|ns| ApplicationDestination {
                server: Some(cluster.server.clone()),
                namespace: Some(ns),
                name: None,
            }));
        }
    }
    project
}

/// Argo's `permitOnlyProjectScopedClusters`: when set and the destinations permit `dest`, the
/// refusal if no cluster of the project has the destination's name or server. Argo's message
/// (the destinations one), then the rule in parentheses; `shown` is what Argo prints as the
/// server (the cluster's name when the Application names its destination by name).
pub fn scoped_cluster_refusal(
    project: &AppProject,
    scope: &ProjectScope,
    dest: &Destination,
    shown: &str,
) -> Option<Violation> {
    if project.spec.permit_only_project_scoped_clusters != Some(true)
        || !destination_permitted(project, dest)
    {
        return None;
    }
    let ours = scope
        .clusters
        .iter()
        .any(|c| c.name == dest.name || c.server == dest.server);
    (!ours).then(|| {
        Violation::new(
            Rule::PermitOnlyProjectScopedClusters,
            format!(
                "application destination server '{shown}' and namespace '{}' do not match any of the allowed destinations in project '{}'",
                dest.namespace,
                project_name(project)
            ),
            None,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn project(spec: serde_json::Value) -> AppProject {
        serde_json::from_value(
            json!({"metadata": {"name": "team-a", "namespace": "argocd"}, "spec": spec}),
        )
        .unwrap()
    }

    const PROD: &str = "https://prod.k8s.acme.internal:6443";

    fn prod(namespace: &str) -> Destination<'_> {
        Destination {
            server: PROD,
            name: "prod",
            namespace,
        }
    }

    fn prod_cluster(namespaces: &[&str]) -> ScopedCluster {
        ScopedCluster {
            server: PROD.into(),
            name: "prod".into(),
            namespaces: namespaces.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_scoped_cluster_is_a_destination_of_its_project_only() {
        let bare = project(json!({"sourceRepos": ["*"]}));
        assert!(!destination_permitted(&bare, &prod("web")));
        let scope = ProjectScope {
            repos: vec![],
            clusters: vec![prod_cluster(&[])],
        };
        let ours = virtual_project(&bare, &scope);
        assert!(destination_permitted(&ours, &prod("web")));
        assert!(destination_permitted(&ours, &prod("kube-system")));
        // Another project (nothing scoped to it) gains nothing.
        let theirs = virtual_project(&bare, &ProjectScope::default());
        assert!(!destination_permitted(&theirs, &prod("web")));
        assert_eq!(theirs, bare);
    }

    #[test]
    fn a_scoped_cluster_with_namespaces_adds_those_namespaces_only() {
        let bare = project(json!({}));
        let scope = ProjectScope {
            repos: vec![],
            clusters: vec![prod_cluster(&["web", "api"])],
        };
        let ours = virtual_project(&bare, &scope);
        assert!(destination_permitted(&ours, &prod("web")));
        assert!(destination_permitted(&ours, &prod("api")));
        assert!(!destination_permitted(&ours, &prod("kube-system")));
    }

    #[test]
    fn scoped_repositories_join_source_repos() {
        let bare = project(json!({"sourceRepos": ["https://git.acme.internal/public/*"]}));
        let url = "https://git.acme.internal/private/app.git";
        assert!(!super::super::source_permitted(&bare, url));
        let scope = ProjectScope {
            repos: vec![url.into()],
            clusters: vec![],
        };
        assert!(super::super::source_permitted(
            &virtual_project(&bare, &scope),
            url
        ));
        assert!(super::super::source_permitted(
            &virtual_project(&bare, &scope),
            "https://GIT.acme.internal/private/app"
        ));
    }

    #[test]
    fn permit_only_project_scoped_clusters_refuses_other_clusters_with_argos_message() {
        let p = project(json!({
            "destinations": [{"server": "*", "namespace": "*"}],
            "permitOnlyProjectScopedClusters": true
        }));
        let local = Destination {
            server: "https://kubernetes.default.svc",
            name: "in-cluster",
            namespace: "web",
        };
        let none = ProjectScope::default();
        let refused = scoped_cluster_refusal(&p, &none, &local, local.server).unwrap();
        assert_eq!(refused.rule, Rule::PermitOnlyProjectScopedClusters);
        assert_eq!(
            refused.to_string(),
            "application destination server 'https://kubernetes.default.svc' and namespace 'web' do not match any of the allowed destinations in project 'team-a' (permitOnlyProjectScopedClusters)"
        );
        // By name, Argo shows the name.
        let by_name = scoped_cluster_refusal(&p, &none, &local, "in-cluster").unwrap();
        assert!(
            by_name
                .message
                .starts_with("application destination server 'in-cluster' ")
        );
        // The project's own cluster passes, matched by name or by server.
        let scope = ProjectScope {
            repos: vec![],
            clusters: vec![prod_cluster(&[])],
        };
        assert_eq!(scoped_cluster_refusal(&p, &scope, &prod("web"), PROD), None);
        let renamed = Destination {
            name: "prod-renamed",
            ..prod("web")
        };
        assert_eq!(scoped_cluster_refusal(&p, &scope, &renamed, PROD), None);
        let moved = Destination {
            server: "https://elsewhere",
            ..prod("web")
        };
        assert_eq!(scoped_cluster_refusal(&p, &scope, &moved, "prod"), None);
        assert!(scoped_cluster_refusal(&p, &scope, &local, local.server).is_some());
    }

    #[test]
    fn permit_only_is_checked_only_where_the_destinations_permit() {
        // Refused by the destinations already: one violation (the destinations'), not two.
        let p = project(json!({
            "destinations": [{"server": PROD, "namespace": "web"}],
            "permitOnlyProjectScopedClusters": true
        }));
        assert_eq!(
            scoped_cluster_refusal(&p, &ProjectScope::default(), &prod("db"), PROD),
            None
        );
        // Unset or false: nothing more is checked.
        for flag in [json!(false), json!(null)] {
            let p = project(json!({
                "destinations": [{"server": "*", "namespace": "*"}],
                "permitOnlyProjectScopedClusters": flag
            }));
            assert_eq!(
                scoped_cluster_refusal(&p, &ProjectScope::default(), &prod("web"), PROD),
                None
            );
        }
    }
}
