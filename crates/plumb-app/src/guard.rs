//! Enforcing the AppProject (plumb-policy's checks) wherever an Application is observed or synced: an Application the
//! project does not permit is not compared or synced (InvalidSpecError); an object the project
//! does not permit is shown `Unknown` with the rule that refused it, and the sync engine refuses
//! to apply or prune it.

use std::sync::Arc;

use plumb_health::{HealthCode, HealthStatus};
use plumb_model::ResourceKey;
use plumb_model::application::{AppProject, Application, SyncStatusCode, condition};
use plumb_policy::project::scoped::{ProjectScope, scoped_cluster_refusal};
use plumb_policy::project::{Destination, Violation, check_application, check_resource};
use plumb_sync::PermissionCheck;

use crate::compare::{Comparison, app_sync};
use crate::context::{Cluster, Engines};

/// What the Application's project refuses about the Application itself, one message each.
/// `project` is the project with what is scoped to it added
/// ([`plumb_policy::project::scoped::virtual_project`]); `scope` what is scoped to it, for
/// `permitOnlyProjectScopedClusters`.
pub fn application_violations(
    project: &AppProject,
    app: &Application,
    control_namespace: &str,
    cluster: &Cluster,
    scope: &ProjectScope,
) -> Vec<String> {
    let dest = destination(app, cluster);
    let mut violations = check_application(project, app, control_namespace, &dest);
    // Argo prints the cluster's name when the Application names its destination by name.
    let by_name = app
        .spec
        .destination
        .name
        .as_deref()
        .is_some_and(|n| !n.is_empty());
    let shown = if by_name { dest.name } else { dest.server };
    violations.extend(scoped_cluster_refusal(project, scope, &dest, shown));
    violations.into_iter().map(|v| v.to_string()).collect()
}

/// The project's verdicts on a comparison: forbidden objects marked ([`mark_forbidden`]), the
/// orphaned-resources warning when the project asks for it, and a warning per argocd-cm key
/// Plumb reads but does not enforce ([`crate::unenforced`]).
pub fn apply_project(
    cmp: &mut Comparison,
    project: &AppProject,
    app: &Application,
    cluster: &Cluster,
    engines: &Engines,
) {
    mark_forbidden(cmp, project, app, cluster);
    if let Some(w) = crate::orphans::warning(app, project, cluster, engines) {
        cmp.warnings.push(w);
    }
    let unenforced = crate::unenforced::in_settings(&engines.settings);
    cmp.warnings
        .extend(crate::unenforced::conditions(&unenforced));
}

/// Marks the compared objects the project forbids: sync and health `Unknown`, the health message
/// naming the rule, and one InvalidSpecError condition listing them. They no longer count for
/// the Application's sync status (they can never be synced).
pub fn mark_forbidden(
    cmp: &mut Comparison,
    project: &AppProject,
    app: &Application,
    cluster: &Cluster,
) {
    let mut refused = Vec::new();
    for r in &mut cmp.resources {
        if let Err(v) = object_refusal(project, app, cluster, &r.key) {
            r.status = Some(SyncStatusCode::Unknown);
            r.health = Some(HealthStatus::new(HealthCode::Unknown, v.to_string()));
            refused.push(v.to_string());
        }
    }
    if !refused.is_empty() {
        refused.sort();
        refused.dedup();
        cmp.warnings.push((
            condition::INVALID_SPEC_ERROR.to_string(),
            refused.join("; "),
        ));
        cmp.sync = app_sync(&cmp.resources);
    }
}

/// Why the project refuses the compared object `key` (its kind, or its namespace on this
/// destination), if it does: what the controller marks `Unknown` and the API never reads out.
pub fn object_refusal(
    project: &AppProject,
    app: &Application,
    cluster: &Cluster,
    key: &ResourceKey,
) -> Result<(), Violation> {
    let namespaced = cluster.discovery.catalog().is_namespaced(&key.group_kind());
    check_object(project, key, namespaced, &destination(app, cluster))
}

/// The sync engine's per-object check for this project and destination.
pub fn permission_check(
    project: &AppProject,
    app: &Application,
    cluster: &Cluster,
) -> PermissionCheck {
    let project = project.clone();
    let server = cluster.server.clone();
    let name = cluster.name.clone();
    let namespace = app.spec.destination.namespace.clone().unwrap_or_default();
    Arc::new(move |key, namespaced| {
        let dest = Destination {
            server: &server,
            name: &name,
            namespace: &namespace,
        };
        check_object(&project, key, namespaced, &dest).map_err(|v| v.to_string())
    })
}

/// The Application's destination as the project rules see it: the cluster's server and name.
fn destination<'a>(app: &'a Application, cluster: &'a Cluster) -> Destination<'a> {
    Destination {
        server: &cluster.server,
        name: &cluster.name,
        namespace: app
            .spec
            .destination
            .namespace
            .as_deref()
            .unwrap_or_default(),
    }
}

/// One object against the project; a kind discovery does not know is judged by whether the
/// object names a namespace.
fn check_object(
    project: &AppProject,
    key: &ResourceKey,
    namespaced: Option<bool>,
    dest: &Destination,
) -> Result<(), Violation> {
    check_resource(
        project,
        &key.group,
        &key.kind,
        &key.name,
        namespaced.unwrap_or(!key.namespace.is_empty()),
        &key.namespace,
        dest,
    )
}
