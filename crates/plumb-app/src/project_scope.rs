//! The AppProject as Argo CD evaluates it (`util/argo/argo.go` `GetAppProjectByName`): the
//! stored project with the repositories and clusters scoped to it (Secrets whose `project` key
//! names it) added to its lists, and that scope kept for `permitOnlyProjectScopedClusters`.
//!
//! The controller builds it from what its watches hold ([`scope`] with the renderer's scoped
//! repositories and the cluster Secrets it knows); the API server and the CLI's core mode read
//! the Secrets when asked ([`read`]). Both end in [`ScopedProject::new`], so the three judge an
//! Application with the same project. Renders and repository reads for an Application run in
//! its project's credential scope ([`in_scope_of`]): a scoped repository Secret lends its
//! credentials to that project's Applications only.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use plumb_model::application::{AppProject, Application};
use plumb_policy::project::scoped::{ProjectScope, virtual_project};
use plumb_source::RepoCredentials;

use crate::clusters::{CLUSTER_SECRET_LABEL, ClusterSecret};
use crate::error::{Error, Result};

/// Label selector of repository Secrets (not credential templates: those scope credentials,
/// never a repository, as in Argo's `GetProjectRepositories`).
const REPOSITORY_SECRET_LABEL: &str = "argocd.argoproj.io/secret-type=repository";

/// A project as every check reads it.
#[derive(Debug, Clone)]
pub struct ScopedProject {
    /// The project with its scoped repositories in `sourceRepos` and its scoped clusters in
    /// `destinations` ([`virtual_project`]).
    pub project: AppProject,
    /// What is scoped to it.
    pub scope: ProjectScope,
}

impl ScopedProject {
    /// `project` as Argo evaluates it, given what is scoped to it.
    pub fn new(project: &AppProject, scope: ProjectScope) -> Self {
        Self {
            project: virtual_project(project, &scope),
            scope,
        }
    }
}

/// The project an Application belongs to: `spec.project`, `default` when empty (Argo's
/// `Spec.GetProject`).
pub fn project_name(app: &Application) -> &str {
    match app.spec.project.as_str() {
        "" => "default",
        p => p,
    }
}

/// Runs `f` (fetches, ref listings, revision reads) with the credentials of `app`'s project:
/// its own scoped repository Secrets and the unscoped ones, never another project's.
pub fn in_scope_of<T>(app: &Application, f: impl FnOnce() -> T) -> T {
    plumb_source::in_project(project_name(app), f)
}

/// What is scoped to `project`: the URLs of the scoped repository Secrets (`repositories`, as
/// the renderer or [`scoped_repositories`] lists them) and the cluster Secrets among `clusters`
/// whose `project` names it.
pub fn scope(project: &str, repositories: Vec<String>, clusters: &[ClusterSecret]) -> ProjectScope {
    ProjectScope {
        repos: repositories,
        clusters: clusters
            .iter()
            .filter(|c| c.project.as_deref() == Some(project))
            .map(ClusterSecret::scoped)
            .collect(),
    }
}

/// The URLs of the repository Secrets among `all` scoped to `project`, in their order.
pub fn scoped_repositories(all: &[RepoCredentials], project: &str) -> Vec<String> {
    all.iter()
        .filter_map(RepoCredentials::scoped_repository)
        .filter(|(p, _)| *p == project)
        .map(|(_, url)| url.to_string())
        .collect()
}

/// Reads what is scoped to `project` from the repository and cluster Secrets of `namespace`.
/// A Secret that is not in Argo's format scopes nothing (it is reported where it is used).
pub async fn read_scope(
    client: &kube::Client,
    namespace: &str,
    project: &str,
) -> Result<ProjectScope> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let list = |label: &'static str| {
        let secrets = secrets.clone();
        async move {
            secrets
                .list(&ListParams::default().labels(label))
                .await
                .map_err(|source| Error::Api {
                    what: format!("listing Secrets {label} in namespace {namespace}"),
                    source: Box::new(source),
                })
        }
    };
    let repositories: Vec<RepoCredentials> = list(REPOSITORY_SECRET_LABEL)
        .await?
        .items
        .iter()
        .filter_map(|s| serde_json::to_value(s).ok())
        .filter_map(|v| RepoCredentials::from_secret(&v).ok())
        .collect();
    let clusters: Vec<ClusterSecret> = list(CLUSTER_SECRET_LABEL)
        .await?
        .items
        .iter()
        .filter_map(ClusterSecret::from_secret)
        .collect();
    Ok(scope(
        project,
        scoped_repositories(&repositories, project),
        &clusters,
    ))
}

/// The AppProject `name` of `namespace` with what is scoped to it; `None` when it does not
/// exist. `Err` when it cannot be read, or is not a valid AppProject (the message names it).
pub async fn read(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Option<ScopedProject>> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &crate::appproject_resource());
    let Some(obj) = api.get_opt(name).await.map_err(|source| Error::Api {
        what: format!("reading AppProject {namespace}/{name}"),
        source: Box::new(source),
    })?
    else {
        return Ok(None);
    };
    let project: AppProject = serde_json::to_value(&obj)
        .and_then(serde_json::from_value)
        .map_err(|e| Error::InvalidProject {
            name: format!("{namespace}/{name}"),
            message: e.to_string(),
        })?;
    let scope = read_scope(client, namespace, name).await?;
    Ok(Some(ScopedProject::new(&project, scope)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repo(url: &str, project: Option<&str>, template: bool) -> RepoCredentials {
        let kind = if template { "repo-creds" } else { "repository" };
        let mut data = json!({"url": url});
        if let Some(p) = project {
            data["project"] = json!(p);
        }
        RepoCredentials::from_secret(&json!({
            "metadata": {"name": "r", "labels": {"argocd.argoproj.io/secret-type": kind}},
            "stringData": data
        }))
        .unwrap()
    }

    #[test]
    fn only_the_projects_own_repositories_and_clusters_are_its_scope() {
        let all = [
            repo("https://git.corp/a.git", Some("team-a"), false),
            repo("https://git.corp/b.git", Some("team-b"), false),
            repo("https://git.corp/shared.git", None, false),
            repo("https://git.corp/team-a", Some("team-a"), true),
        ];
        assert_eq!(
            scoped_repositories(&all, "team-a"),
            vec!["https://git.corp/a.git".to_string()]
        );
        assert!(scoped_repositories(&all, "team-c").is_empty());
        let project: AppProject = serde_json::from_value(json!({
            "metadata": {"name": "team-a"}, "spec": {"sourceRepos": []}
        }))
        .unwrap();
        let scoped = ScopedProject::new(
            &project,
            scope("team-a", scoped_repositories(&all, "team-a"), &[]),
        );
        assert_eq!(
            scoped.project.spec.source_repos,
            Some(vec!["https://git.corp/a.git".to_string()])
        );
    }

    #[test]
    fn an_empty_project_is_default() {
        let mut app: Application = serde_json::from_value(json!({
            "metadata": {"name": "a"},
            "spec": {"project": "", "destination": {}}
        }))
        .unwrap();
        assert_eq!(project_name(&app), "default");
        app.spec.project = "team-a".into();
        assert_eq!(project_name(&app), "team-a");
    }
}
