//! What the `plumb app` verbs call: [`AppClient`], the Applications of one control namespace,
//! over one of two backends ([`Backend`]): core mode (the user's kubeconfig and plumb-app's
//! comparison, like `argocd --core`; `backend::core`) or `plumb server`'s REST API
//! (`backend::server`). A verb never asks which one it has.
//!
//! Applications may live outside the control namespace (Argo CD's "applications in any
//! namespace"): every method taking a name accepts Argo's qualified form `namespace/name`; a
//! bare name is looked up in the `-N/--app-namespace` namespace.

use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use futures::Stream;
use futures::future::BoxFuture;
use plumb_model::Settings;
use plumb_model::application::{AppProject, Application};
use serde_json::Value;

use super::diff_view::DiffView;
use crate::output::rows::ResourceRow;

/// An Application event seen while watching one Application.
pub type AppStream = Pin<Box<dyn Stream<Item = Result<Option<Application>>> + Send>>;

/// Splits Argo's qualified Application name (`namespace/name`); a bare name is in
/// `default_namespace` (Argo's `argo.ParseFromQualifiedName`).
pub fn split_qualified<'a>(name: &'a str, default_namespace: &'a str) -> (&'a str, &'a str) {
    match name.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (ns, n),
        Some((_, n)) => (default_namespace, n),
        None => (default_namespace, name),
    }
}

/// What a project check reads of the Application's project.
pub(crate) enum ProjectRead {
    /// The project (`None`: it does not exist).
    Read(Option<Box<AppProject>>),
    /// It could not be read, and the server checks it when it writes the Application.
    LeftToServer,
}

/// Argo's rollback request: the history entry (default: the previous one) and the sync flags.
pub(crate) struct RollbackRequest<'a> {
    pub name: &'a str,
    pub id: Option<i64>,
    pub prune: bool,
    pub dry_run: bool,
}

/// One backend of [`AppClient`]. An enum would do for two backends, but the core backend
/// reuses helpers that take an [`AppClient`] (the project check, the comparison), and a trait
/// lets it do so without the client naming the backends back.
pub(crate) trait Backend: Send + Sync {
    /// The Kubernetes client of the kubeconfig (core mode only).
    fn kube(&self) -> Result<&kube::Client>;
    /// Who is asking, for `operation.initiatedBy.username`.
    fn username(&self) -> String;
    /// One Application, `None` when it does not exist.
    fn get_opt<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
    ) -> BoxFuture<'a, Result<Option<Application>>>;
    /// Applications matching a label selector (see [`AppClient::list`]).
    fn list<'a>(
        &'a self,
        c: &'a AppClient,
        selector: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Application>>>;
    /// A JSON merge patch on the Application.
    fn merge_patch<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Application>>;
    /// A merge patch carrying `metadata.resourceVersion`; `None` on a write conflict.
    fn merge_patch_at<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        patch: Value,
    ) -> BoxFuture<'a, Result<Option<Application>>>;
    /// A merge patch of the status subresource.
    fn patch_status<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Application>>;
    /// Creates an Application; with `validate` the server first checks that its repositories
    /// answer (Argo's `ApplicationCreateRequest.validate`).
    fn create<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        validate: bool,
    ) -> BoxFuture<'a, Result<Application>>;
    /// Replaces an Application.
    fn replace<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
    ) -> BoxFuture<'a, Result<Application>>;
    /// Deletes an Application; `false` when it was already gone.
    fn delete<'a>(&'a self, c: &'a AppClient, qualified: &'a str) -> BoxFuture<'a, Result<bool>>;
    /// `app delete` of `app`: with cascade its resources go first.
    fn delete_app<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        app: &'a Application,
        cascade: bool,
        background: bool,
    ) -> BoxFuture<'a, Result<()>>;
    /// Watches one Application (see [`AppClient::watch`]).
    fn watch(&self, c: &AppClient, qualified: &str) -> AppStream;
    /// The settings (argocd-cm) the CLI reads.
    fn settings<'a>(&'a self, c: &'a AppClient) -> BoxFuture<'a, Result<Settings>>;
    /// An AppProject, `None` when it does not exist.
    fn project<'a>(
        &'a self,
        c: &'a AppClient,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<AppProject>>>;
    /// The project a project check reads.
    fn project_for_check<'a>(
        &'a self,
        c: &'a AppClient,
        name: &'a str,
    ) -> BoxFuture<'a, Result<ProjectRead>>;
    /// `(server, name)` of a destination that is not the local cluster.
    fn find_cluster<'a>(
        &'a self,
        c: &'a AppClient,
        server: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(String, String)>>;
    /// Asks the controller to stop the running operation.
    fn terminate_operation<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
    ) -> BoxFuture<'a, Result<()>>;
    /// Writes a rollback operation; returns the Application as written.
    fn request_rollback<'a>(
        &'a self,
        c: &'a AppClient,
        req: &'a RollbackRequest<'a>,
    ) -> BoxFuture<'a, Result<Application>>;
    /// The nodes of the `-o tree` view of `app`.
    fn tree_nodes<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        rows: &'a [ResourceRow],
    ) -> BoxFuture<'a, Result<Vec<Value>>>;
    /// The objects `local` renders to with the Application's source settings.
    fn render_local<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        local: &'a plumb_source::LocalSource,
    ) -> BoxFuture<'a, Result<Vec<Value>>>;
    /// Writes the `app diff` text of `app` to `out`; returns how many objects differ.
    fn print_diff<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        view: &'a DiffView,
        out: &'a mut (dyn Write + Send),
    ) -> BoxFuture<'a, Result<usize>>;
}

/// Applications, with the control namespace they belong to.
#[derive(Clone)]
pub struct AppClient {
    /// The control namespace.
    namespace: String,
    /// Where a bare Application name is looked up.
    app_namespace: String,
    /// Whether `-N` was set apart from the control namespace (`app list` then lists it alone).
    app_namespace_only: bool,
    backend: Arc<dyn Backend>,
}

impl std::fmt::Debug for AppClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppClient")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl AppClient {
    /// A client of the control namespace `namespace` over `backend`.
    pub(crate) fn new(namespace: String, app_namespace: String, backend: Arc<dyn Backend>) -> Self {
        Self {
            app_namespace_only: app_namespace != namespace,
            namespace,
            app_namespace,
            backend,
        }
    }

    /// The control namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Where a bare Application name is looked up (`-N/--app-namespace`).
    pub fn app_namespace(&self) -> &str {
        &self.app_namespace
    }

    /// Whether `-N` was set apart from the control namespace.
    pub(crate) fn app_namespace_only(&self) -> bool {
        self.app_namespace_only
    }

    /// The namespace and name a (possibly qualified) Application name refers to.
    pub fn locate<'a>(&'a self, name: &'a str) -> (&'a str, &'a str) {
        split_qualified(name, &self.app_namespace)
    }

    /// The namespace an Application object is written to: its own `metadata.namespace`, else
    /// the `-N` namespace.
    pub(crate) fn namespace_of<'a>(&'a self, app: &'a Application) -> &'a str {
        if app.namespace().is_empty() {
            &self.app_namespace
        } else {
            app.namespace()
        }
    }

    /// The underlying Kubernetes client (core mode only: through `plumb server` there is none).
    pub fn kube(&self) -> Result<&kube::Client> {
        self.backend.kube()
    }

    /// The error of an Application that does not exist.
    pub(crate) fn not_found(&self, name: &str) -> anyhow::Error {
        let (ns, name) = self.locate(name);
        anyhow!("application '{name}' not found in namespace '{ns}'")
    }

    /// One Application, or an error naming it when it does not exist.
    pub async fn get(&self, name: &str) -> Result<Application> {
        self.get_opt(name)
            .await?
            .ok_or_else(|| self.not_found(name))
    }

    /// One Application, `None` when it does not exist.
    pub async fn get_opt(&self, name: &str) -> Result<Option<Application>> {
        self.backend.get_opt(self, name).await
    }

    /// Applications matching a label selector, sorted by namespace then name: those of the
    /// `-N` namespace when it was set apart from the control namespace, else those of the
    /// control namespace and of every namespace `application.namespaces` of
    /// `argocd-cmd-params-cm` permits (Argo's `app list` over every enabled namespace).
    pub async fn list(&self, selector: Option<&str>) -> Result<Vec<Application>> {
        self.backend.list(self, selector).await
    }

    /// A JSON merge patch on the Application.
    pub async fn merge_patch(&self, qualified: &str, patch: &Value) -> Result<Application> {
        self.backend.merge_patch(self, qualified, patch).await
    }

    /// A merge patch guarded by `resourceVersion`; `Ok(None)` when someone wrote the object in
    /// between (the caller re-reads and decides again).
    pub async fn merge_patch_at(
        &self,
        qualified: &str,
        resource_version: &str,
        mut patch: Value,
    ) -> Result<Option<Application>> {
        patch["metadata"]["resourceVersion"] = Value::from(resource_version);
        self.backend.merge_patch_at(self, qualified, patch).await
    }

    /// A merge patch of the status subresource.
    pub async fn patch_status(&self, qualified: &str, patch: &Value) -> Result<Application> {
        self.backend.patch_status(self, qualified, patch).await
    }

    /// Creates an Application (in its `metadata.namespace`, else the `-N` namespace); with
    /// `validate` through a server, its repositories must answer first.
    pub async fn create(&self, app: &Application, validate: bool) -> Result<Application> {
        self.backend.create(self, app, validate).await
    }

    /// Replaces an Application (its `metadata.resourceVersion` guards the write).
    pub async fn replace(&self, app: &Application) -> Result<Application> {
        self.backend.replace(self, app).await
    }

    /// Deletes an Application (finalizers decide what happens to its resources); `false` when
    /// it was already gone.
    pub async fn delete(&self, qualified: &str) -> Result<bool> {
        self.backend.delete(self, qualified).await
    }

    /// `app delete`: the Application `app` goes, with its resources when `cascade` (first, or
    /// afterwards when `background`).
    pub(crate) async fn delete_app(
        &self,
        qualified: &str,
        app: &Application,
        cascade: bool,
        background: bool,
    ) -> Result<()> {
        self.backend
            .delete_app(self, qualified, app, cascade, background)
            .await
    }

    /// Watches one Application: the current object first, then every change; `None` when it
    /// does not exist (or was deleted). The watch restarts by itself after API errors, which
    /// are passed through.
    pub fn watch(&self, qualified: &str) -> AppStream {
        self.backend.watch(self, qualified)
    }

    /// The settings ConfigMap's data; empty settings when it does not exist.
    pub async fn settings(&self) -> Result<Settings> {
        self.backend.settings(self).await
    }

    /// An AppProject of the control namespace, `None` when it does not exist.
    pub async fn project(&self, name: &str) -> Result<Option<AppProject>> {
        self.backend.project(self, name).await
    }

    /// The project a project check reads (see [`ProjectRead`]).
    pub(crate) async fn project_for_check(&self, name: &str) -> Result<ProjectRead> {
        self.backend.project_for_check(self, name).await
    }

    /// `(server, name)` of a destination other than the local cluster.
    pub(crate) async fn find_cluster(&self, server: &str, name: &str) -> Result<(String, String)> {
        self.backend.find_cluster(self, server, name).await
    }

    /// Asks the controller to stop the running operation (Argo's `TerminateOperation`).
    pub(crate) async fn terminate_operation(&self, qualified: &str) -> Result<()> {
        self.backend.terminate_operation(self, qualified).await
    }

    /// Writes Argo's rollback operation unless refused; returns the Application as written.
    pub(crate) async fn request_rollback(&self, req: &RollbackRequest<'_>) -> Result<Application> {
        self.backend.request_rollback(self, req).await
    }

    /// The nodes of the `-o tree` view of `app` (its resource rows `rows`).
    pub(crate) async fn tree_nodes(
        &self,
        app: &Application,
        rows: &[ResourceRow],
    ) -> Result<Vec<Value>> {
        self.backend.tree_nodes(self, app, rows).await
    }

    /// The objects `local` renders to with the Application's source settings (see
    /// `backend::core::compare::render_local`).
    pub(crate) async fn render_local(
        &self,
        app: &Application,
        local: &plumb_source::LocalSource,
    ) -> Result<Vec<Value>> {
        self.backend.render_local(self, app, local).await
    }

    /// Compares `app` with the cluster and writes the `app diff` text of every differing
    /// object to `out`; returns how many objects differ.
    pub(crate) async fn print_diff(
        &self,
        app: &Application,
        view: &DiffView,
        out: &mut (dyn Write + Send),
    ) -> Result<usize> {
        self.backend.print_diff(self, app, view, out).await
    }

    /// Who is asking, for `operation.initiatedBy.username`: the kubeconfig's current user name,
    /// else `$USER`.
    pub fn username(&self) -> String {
        self.backend.username()
    }
}

/// The kubeconfig's current user name, else `$USER`.
pub(crate) fn username(kubeconfig: Option<&std::path::Path>) -> String {
    kubeconfig_user(kubeconfig)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".to_string())
}

fn kubeconfig_user(path: Option<&std::path::Path>) -> Option<String> {
    let kc = match path {
        Some(p) => kube::config::Kubeconfig::read_from(p).ok()?,
        None => kube::config::Kubeconfig::read().ok()?,
    };
    let current = kc.current_context.as_deref()?;
    kc.contexts
        .iter()
        .find(|c| c.name == current)
        .and_then(|c| c.context.as_ref())
        .and_then(|c| c.user.clone())
        .filter(|u| !u.is_empty())
}
