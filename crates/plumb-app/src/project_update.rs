//! Whether a project update would leave Applications invalid (Argo's `ProjectService.Update`
//! check, `plumb_policy::project::update`): the project's Applications of the control namespace
//! and the cluster Secrets read from the API server, each destination resolved as Argo's
//! `GetDestinationCluster` does. The API server's update route and the CLI's core mode both ask
//! here before writing.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject, ListParams};
use plumb_model::application::{AppProject, Application};
use plumb_policy::project::Destination;
use plumb_policy::project::scoped::ProjectScope;
use plumb_policy::project::update::{AppUnderUpdate, ResolvedDestination, update_refusal};

use crate::clusters::{CLUSTER_SECRET_LABEL, ClusterSecret};
use crate::context::{IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use crate::error::{Error, Result};

fn api_error(what: String) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Api {
        what,
        source: Box::new(source),
    }
}

/// Argo's refusal of updating `old` to `new` in `namespace`, if the update would make some of
/// the project's Applications invalid.
pub async fn refusal(
    client: &kube::Client,
    namespace: &str,
    old: &AppProject,
    new: &AppProject,
) -> Result<Option<String>> {
    let name = old.metadata.name.as_deref().unwrap_or_default();
    let ours = project_apps(client, namespace, name).await?;
    let clusters = cluster_secrets(client, namespace).await?;
    let scope = ProjectScope {
        repos: Vec::new(),
        clusters: clusters
            .iter()
            .filter(|c| c.project.as_deref() == Some(name))
            .map(ClusterSecret::scoped)
            .collect(),
    };
    let resolved: Vec<(String, Resolved)> = ours
        .iter()
        .map(|a| (first_repo(a), resolve(a, &clusters)))
        .collect();
    let under: Vec<AppUnderUpdate> = resolved
        .iter()
        .zip(&ours)
        .map(|((repo, r), app)| AppUnderUpdate {
            repo_url: repo,
            destination: r.as_destination(
                app.spec
                    .destination
                    .namespace
                    .as_deref()
                    .unwrap_or_default(),
            ),
        })
        .collect();
    Ok(update_refusal(old, new, &scope, &under))
}

/// The Applications of `namespace` in project `name` (an empty project is `default`).
async fn project_apps(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Vec<Application>> {
    let apps: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &crate::application_resource());
    let listed = apps
        .list(&ListParams::default())
        .await
        .map_err(api_error(format!(
            "listing Applications in namespace {namespace}"
        )))?;
    let mut ours = Vec::new();
    for obj in listed.items {
        // An object that is not a valid Application is in error already: Argo's typed list
        // would not have it either.
        let Some(app) = serde_json::to_value(obj)
            .ok()
            .and_then(|v| serde_json::from_value::<Application>(v).ok())
        else {
            continue;
        };
        let project = match app.spec.project.as_str() {
            "" => "default",
            p => p,
        };
        if project == name {
            ours.push(app);
        }
    }
    Ok(ours)
}

/// The cluster Secrets of `namespace`; none when the caller may not list Secrets.
async fn cluster_secrets(client: &kube::Client, namespace: &str) -> Result<Vec<ClusterSecret>> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let listed = match secrets
        .list(&ListParams::default().labels(CLUSTER_SECRET_LABEL))
        .await
    {
        Ok(list) => list.items,
        // A core-mode user may edit projects without reading Secrets: the destinations are
        // then resolved as with no cluster Secret (the local cluster only), as Argo would
        // resolve them with none; the controller still refuses what the project no longer
        // permits.
        Err(kube::Error::Api(st)) if st.code == 403 => {
            tracing::warn!(
                namespace,
                "cannot list cluster Secrets: Applications on other clusters are left out of the project update check"
            );
            Vec::new()
        }
        Err(e) => {
            return Err(api_error(format!(
                "listing cluster Secrets in namespace {namespace}"
            ))(e));
        }
    };
    Ok(listed
        .iter()
        .filter_map(ClusterSecret::from_secret)
        .collect())
}

/// Argo's `Spec.GetSource()`: the first source of a multi-source Application.
fn first_repo(app: &Application) -> String {
    app.sources()
        .first()
        .map(|s| s.repo_url.clone())
        .unwrap_or_default()
}

/// A destination's cluster as Argo's `GetDestinationCluster` finds it.
enum Resolved {
    Missing,
    Unknown,
    Cluster { server: String, name: String },
}

impl Resolved {
    fn as_destination<'a>(&'a self, namespace: &'a str) -> ResolvedDestination<'a> {
        match self {
            Resolved::Missing => ResolvedDestination::Missing,
            Resolved::Unknown => ResolvedDestination::Unknown,
            Resolved::Cluster { server, name } => ResolvedDestination::Cluster(Destination {
                server,
                name,
                namespace,
            }),
        }
    }
}

fn resolve(app: &Application, clusters: &[ClusterSecret]) -> Resolved {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let (server, name) = (
        text(&app.spec.destination.server),
        text(&app.spec.destination.name),
    );
    let found = match (server.is_empty(), name.is_empty()) {
        (true, true) => return Resolved::Missing,
        (false, false) => None,
        (false, true) => {
            let server = server.trim_end_matches('/');
            clusters
                .iter()
                .find(|c| c.server.trim_end_matches('/') == server)
                .map(|c| (c.server.clone(), c.name.clone()))
                .or_else(|| {
                    (server == IN_CLUSTER_SERVER)
                        .then(|| (IN_CLUSTER_SERVER.to_string(), IN_CLUSTER_NAME.to_string()))
                })
        }
        (true, false) => {
            let named: Vec<&ClusterSecret> = clusters.iter().filter(|c| c.name == name).collect();
            match named.as_slice() {
                [one] => Some((one.server.clone(), one.name.clone())),
                [] if name == IN_CLUSTER_NAME => {
                    Some((IN_CLUSTER_SERVER.to_string(), IN_CLUSTER_NAME.to_string()))
                }
                _ => None,
            }
        }
    };
    match found {
        Some((server, name)) => Resolved::Cluster { server, name },
        None => Resolved::Unknown,
    }
}
