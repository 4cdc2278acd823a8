//! The project's rules on an Application the API is about to write (create, update, patch), as
//! Argo CD's API server applies them before storing it (`validateAndNormalizeApp` →
//! `ValidatePermissions`): every source repository in `sourceRepos`, the destination (resolved to
//! its server URL and cluster name) in `destinations`, the Application's namespace in
//! `sourceNamespaces`, and `permitOnlyProjectScopedClusters`; the project read as Argo's
//! `GetAppProject` reads it, with the repositories and clusters scoped to it
//! ([`plumb_app::project_scope`]). The check is plumb-policy's `check_application`, the one the controller
//! applies before it compares or syncs, so the API refuses what the controller would refuse.
//! The rules on each object (cluster and namespace resource lists) need the rendered objects:
//! the controller applies them at compare and sync time, as Argo does.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use plumb_app::{CLUSTER_SECRET_LABEL, ClusterSecret, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_model::application::Application;
use plumb_policy::project::scoped::scoped_cluster_refusal;
use plumb_policy::project::{Destination, check_application};

use crate::error::{Error, Result};
use crate::state::AppState;

/// Refuses an Application its project does not permit, with Argo's InvalidArgument text:
/// `application spec for NAME is invalid: InvalidSpecError: MSG;InvalidSpecError: MSG`. A
/// project that does not exist is left to the caller's own check (Argo's `application references
/// project X which does not exist`).
pub(crate) async fn check(s: &AppState, app: &Application) -> Result<()> {
    let name = plumb_app::project_scope::project_name(app);
    // As Argo's `GetAppProject` reads it: with the repositories and clusters scoped to it.
    let Some(scoped) = s.scoped_project(name).await? else {
        return Ok(());
    };
    let project = &scoped.project;
    let mut messages = Vec::new();
    let d = &app.spec.destination;
    match resolve_destination(s, d.server.as_deref(), d.name.as_deref()).await? {
        Ok((server, cluster_name)) => {
            let dest = Destination {
                server: &server,
                name: &cluster_name,
                namespace: d.namespace.as_deref().unwrap_or_default(),
            };
            let by_name = d.name.as_deref().is_some_and(|n| !n.is_empty());
            let shown = if by_name { dest.name } else { dest.server };
            messages.extend(
                check_application(project, app, &s.namespace, &dest)
                    .into_iter()
                    .chain(scoped_cluster_refusal(project, &scoped.scope, &dest, shown))
                    .map(|v| v.to_string()),
            );
        }
        Err(unknown) => messages.push(unknown),
    }
    if messages.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "application spec for {} is invalid: {}",
        app.name(),
        messages
            .iter()
            .map(|m| format!("InvalidSpecError: {m}"))
            .collect::<Vec<_>>()
            .join(";")
    )))
}

/// `(server, name)` of a destination: the local cluster under both its aliases, another cluster
/// from the Argo CD cluster Secrets of the control namespace. The inner `Err` is Argo's message
/// for a name no cluster has; a server no Secret describes keeps an empty name (a project may
/// still list its URL).
async fn resolve_destination(
    s: &AppState,
    server: Option<&str>,
    name: Option<&str>,
) -> Result<std::result::Result<(String, String), String>> {
    let server = server.unwrap_or_default();
    let name = name.unwrap_or_default();
    let local = (server == IN_CLUSTER_SERVER && (name.is_empty() || name == IN_CLUSTER_NAME))
        || (server.is_empty() && name == IN_CLUSTER_NAME);
    if local {
        return Ok(Ok((IN_CLUSTER_SERVER.into(), IN_CLUSTER_NAME.into())));
    }
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), &s.namespace);
    let list = secrets
        .list(&ListParams::default().labels(CLUSTER_SECRET_LABEL))
        .await
        .map_err(|e| {
            Error::kube(
                format!("listing cluster Secrets in namespace {}", s.namespace),
                e,
            )
        })?;
    let found = list
        .items
        .iter()
        .filter_map(ClusterSecret::from_secret)
        .find(|c| {
            if server.is_empty() {
                c.name == name
            } else {
                c.server == server
            }
        });
    Ok(match found {
        Some(c) => Ok((c.server, c.name)),
        None if server.is_empty() => Err(format!(
            "unable to find destination server: there are no clusters with this name: {name}"
        )),
        None => Ok((server.to_string(), String::new())),
    })
}
