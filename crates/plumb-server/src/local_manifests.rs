//! Local manifests sent to the API (`ApplicationSyncRequest.manifests`, what `argocd app sync
//! --local` / `plumb app sync --local` rendered on the user's machine, and the same list for
//! `plumb app diff --local` through the server): hostile input. They are read as the controller
//! reads `operation.sync.manifests` (`plumb_source::local_manifests`: the YAML reader's limits,
//! Kubernetes objects only), and every object is checked against the Application's project
//! (resource lists, destinations) before anything is written or compared, so they can neither
//! reach nor reveal a namespace the project forbids. Errors name the entry (`manifests[i]`) and
//! the rule, never the text: it may hold Secrets.

use std::collections::BTreeSet;

use plumb_model::ResourceKey;
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

/// Reads `manifests` and checks every object against the project of `app`; on success the
/// objects' keys, each with the namespace the sync would write it to.
pub(crate) async fn check(
    s: &AppState,
    app: &Application,
    project: &AppProject,
    manifests: &[String],
) -> Result<Vec<ResourceKey>> {
    let objects = plumb_source::local_manifests(manifests)
        .map_err(|e| Error::InvalidArgument(format!("manifests: {}", plumb_app::chain(&e))))?;
    let cluster = s.cluster_of(&app.spec.destination).await?;
    let catalog = cluster.discovery.catalog();
    let dest_ns = app.spec.destination.namespace.clone().unwrap_or_default();
    let dest = Destination {
        server: &cluster.server,
        name: &cluster.name,
        namespace: &dest_ns,
    };
    let mut keys = Vec::with_capacity(objects.len());
    for m in &objects {
        let mut key = m.key();
        let namespaced = catalog
            .is_namespaced(&key.group_kind())
            .unwrap_or(!key.namespace.is_empty());
        // An object without a namespace goes to the destination's, as the sync applies it.
        let namespace = if key.namespace.is_empty() {
            dest_ns.as_str()
        } else {
            key.namespace.as_str()
        };
        check_resource(
            project, &key.group, &key.kind, &key.name, namespaced, namespace, &dest,
        )
        .map_err(|v| Error::InvalidArgument(format!("manifests: {} ({}): {v}", m.file, key)))?;
        if namespaced {
            key.namespace = namespace.to_string();
        }
        keys.push(key);
    }
    Ok(keys)
}

/// A local diff reads the live state of every object it names (the server-side dry run answers
/// with the merged live object), so a caller who may only read the Application sees only the
/// Application's own resources (`status.resources`), as Argo limits `ServerSideDiff` after
/// GHSA-3v3m-wc6v-x4x3; naming anything else needs `override`, the right to sync local
/// manifests, which could write those objects anyway.
pub(crate) async fn check_own_resources(
    s: &AppState,
    caller: &crate::auth::Caller,
    app_key: &str,
    app: &Application,
    keys: &[ResourceKey],
) -> Result<()> {
    let own: BTreeSet<ResourceKey> = app
        .status
        .as_ref()
        .and_then(|st| st.resources.as_ref())
        .map(|rs| rs.iter().map(status_key).collect())
        .unwrap_or_default();
    let Some(outside) = keys.iter().find(|k| !own.contains(*k)) else {
        return Ok(());
    };
    authorize(s, caller, app_key).await.map_err(|e| match e {
        Error::PermissionDenied(_) => Error::PermissionDenied(format!(
            "manifests: {} is not a resource of application {}: a local diff without \
             `override` on the application compares only its own resources",
            describe(outside),
            app.name()
        )),
        other => other,
    })
}

/// `Kind namespace/name`, the group before the kind when it has one (`apps/Deployment`).
fn describe(k: &ResourceKey) -> String {
    let kind = if k.group.is_empty() {
        k.kind.clone()
    } else {
        format!("{}/{}", k.group, k.kind)
    };
    if k.namespace.is_empty() {
        format!("{kind} {}", k.name)
    } else {
        format!("{kind} {}/{}", k.namespace, k.name)
    }
}

fn status_key(r: &plumb_model::application::ResourceStatus) -> ResourceKey {
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    ResourceKey {
        group: s(&r.group),
        kind: s(&r.kind),
        namespace: s(&r.namespace),
        name: s(&r.name),
    }
}
