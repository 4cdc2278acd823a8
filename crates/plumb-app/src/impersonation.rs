//! Syncs that write as the AppProject's ServiceAccount (argocd-cm
//! `application.sync.impersonation.enabled`, [docs/projects.md](../../../docs/projects.md)).
//! [`sync_applier`] is the one place a sync's writer comes from: the applies, their server-side
//! dry runs, hooks, prunes and the cascade deletion of an Application's objects all go through
//! the [`Applier`] it returns, so none of them can write with the controller's own rights while
//! the project names an account. Reads for the comparison (the live cache, discovery) keep the
//! controller's credentials, as in Argo CD.

use axum::http::{HeaderName, HeaderValue, Request};
use kube::client::Body;
use plumb_kube::Applier;
use plumb_model::Settings;
use plumb_model::application::{AppProject, Application};
use plumb_policy::impersonation::{Mode, sync_identity};

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
