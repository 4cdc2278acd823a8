//! Local manifests sent to the API (`ApplicationSyncRequest.manifests`, what `argocd app sync
//! --local` / `plumb app sync --local` rendered on the user's machine, and the same list for
//! `plumb app diff --local` through the server): hostile input. They are read as the controller
//! reads `operation.sync.manifests` (`plumb_source::local_manifests`: the YAML reader's limits,
//! Kubernetes objects only), and every object is checked against the Application's project
//! (resource lists, destinations) before anything is written or compared, so they can neither
//! reach nor reveal a namespace the project forbids. Errors name the entry (`manifests[i]`) and
//! the rule, never the text: it may hold Secrets.

use plumb_model::application::{AppProject, Application};
use plumb_policy::project::{Destination, check_resource};

use crate::error::{Error, Result};
use crate::state::AppState;

/// Argo's rules on who may send local manifests for `name`: `override` on the Application as
/// well as the route's own action (`server/application/application.go`, `Sync`).
pub(crate) async fn authorize(
    s: &AppState,
    caller: &crate::auth::Caller,
    name: &str,
) -> Result<()> {
    s.authorize_app(caller, name, "override").await
}

/// Reads `manifests` and checks every object against the project of `app`; the objects'
/// count on success.
pub(crate) async fn check(
    s: &AppState,
    app: &Application,
    project: &AppProject,
    manifests: &[String],
) -> Result<usize> {
    let objects = plumb_source::local_manifests(manifests).map_err(|e| {
        Error::InvalidArgument(format!("manifests: {}", plumb_controller::chain(&e)))
    })?;
    let cluster = s.cluster_of(&app.spec.destination).await?;
    let catalog = cluster.discovery.catalog();
    let dest_ns = app.spec.destination.namespace.clone().unwrap_or_default();
    let dest = Destination {
        server: &cluster.server,
        name: &cluster.name,
        namespace: &dest_ns,
    };
    for m in &objects {
        let key = m.key();
        let namespaced = catalog
            .is_namespaced(&key.group_kind())
            .unwrap_or(!key.namespace.is_empty());
        // An object without a namespace goes to the destination's, as the sync applies it.
        let namespace = if key.namespace.is_empty() {
            dest_ns.as_str()
        } else {
            key.namespace.as_str()
        };
        check_resource(project, &key.group, &key.kind, namespaced, namespace, &dest)
            .map_err(|v| Error::InvalidArgument(format!("manifests: {} ({}): {v}", m.file, key)))?;
    }
    Ok(objects.len())
}
