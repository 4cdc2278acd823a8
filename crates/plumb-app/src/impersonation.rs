//! Syncs that write as the AppProject's ServiceAccount (argocd-cm
//! `application.sync.impersonation.enabled`, [docs/projects.md](../../../docs/projects.md)).
//! [`sync_applier`] is the one place a sync's writer comes from: the applies, their server-side
//! dry runs, hooks, prunes and the cascade deletion of an Application's objects all go through
//! the [`Applier`] it returns, so none of them can write with the controller's own rights while
//! the project names an account. Reads for the comparison (the live cache, discovery) keep the
//! controller's credentials, as in Argo CD. [`api_client`] is the same choice for the API
//! server's own reads and writes of an Application's live objects.

use axum::http::{HeaderName, HeaderValue, Request};
use kube::client::Body;
use plumb_kube::Applier;
use plumb_model::Settings;
use plumb_model::application::{AppProject, Application};
use plumb_policy::impersonation::{Mode, derive, sync_identity};

use crate::context::Cluster;

/// The header the API server reads the impersonated user from.
const IMPERSONATE_USER: HeaderName = HeaderName::from_static("impersonate-user");

/// The writer of a sync (or of a cascade deletion) of `app` in `project` on `cluster`: the
/// cluster's own applier with impersonation off, else one whose every request impersonates the
/// ServiceAccount `spec.destinationServiceAccounts` matches. `Err` is the operation's message
/// (Argo's) when the sync must not run: no match while enforced, or an entry that is invalid.
pub fn sync_applier(
    project: &AppProject,
    app: &Application,
    cluster: &Cluster,
    settings: &Settings,
) -> Result<Applier, String> {
    let dest_namespace = app
        .spec
        .destination
        .namespace
        .as_deref()
        .unwrap_or_default();
    let identity = sync_identity(
        Mode::of(settings),
        project,
        app.namespace(),
        dest_namespace,
        &cluster.server,
    )?;
    let Some(user) = identity else {
        return Ok(cluster.applier.clone());
    };
    tracing::debug!(app = %app.name(), %user, "syncing as the project's service account");
    let client = impersonating(cluster.client().clone(), &user)?;
    Ok(cluster.applier.clone().with_client(client))
}

/// The client the API server acts on `app`'s live objects with (Argo's
/// `getApplicationClusterConfig`, `server/application/application.go`): GetResource,
/// PatchResource, DeleteResource, ListResourceActions and RunResourceAction(V2). The cluster's
/// own client with impersonation off; else one impersonating the ServiceAccount the project's
/// `destinationServiceAccounts` matches. With no match, `application.sync.impersonation.enforced`
/// (the default) refuses with Argo's message; turned off, the server falls back to its own
/// identity and says so in the log, as Argo does. `Err` is Argo's message.
pub fn api_client(
    project: &AppProject,
    app: &Application,
    cluster: &Cluster,
    settings: &Settings,
) -> Result<kube::Client, String> {
    let Mode::On { enforced } = Mode::of(settings) else {
        return Ok(cluster.client().clone());
    };
    let dest_namespace = app
        .spec
        .destination
        .namespace
        .as_deref()
        .unwrap_or_default();
    let derived = derive(project, app.namespace(), dest_namespace, &cluster.server)
        .map_err(|e| format!("error deriving service account to impersonate: {e}"))?;
    match derived {
        Some(user) => impersonating(cluster.client().clone(), &user),
        None if enforced => Err(format!(
            "no matching service account found for destination server {} and namespace {dest_namespace}",
            cluster.server
        )),
        None => {
            tracing::info!(
                "no matching service account found for impersonation for app {}/{} (project: {}, server: {}, namespace: {dest_namespace}), falling back to controller service account",
                app.namespace(),
                app.name(),
                project.metadata.name.as_deref().unwrap_or_default(),
                cluster.server
            );
            Ok(cluster.client().clone())
        }
    }
}

/// `client` with every request made as `user` (the `Impersonate-User` header). The API server
/// authorises each request as that user, after checking that the controller may impersonate it.
pub fn impersonating(client: kube::Client, user: &str) -> Result<kube::Client, String> {
    let value = HeaderValue::from_str(user)
        .map_err(|_| format!("cannot impersonate {user:?}: not a valid header value"))?;
    let namespace = client.default_namespace().to_string();
    let svc = tower::service_fn(move |mut req: Request<Body>| {
        // Inserted, not appended: a request carries exactly one user to act as, this one.
        req.headers_mut().insert(IMPERSONATE_USER, value.clone());
        let client = client.clone();
        async move { client.send(req).await }
    });
    Ok(kube::Client::new(svc, namespace))
}
