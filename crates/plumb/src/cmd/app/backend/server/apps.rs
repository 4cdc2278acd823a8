//! The server backend: Applications and AppProjects read and written through `plumb server`'s
//! REST API (Argo CD's paths).

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use futures::FutureExt;
use futures::future::BoxFuture;
use plumb_model::Settings;
use plumb_model::application::{AppProject, Application};
use serde_json::Value;

use super::routes::app_path;
use super::{diff, settings, watch};
use crate::cmd::app::backend::core::compare::{
    project_source_repos, render_manifests, renderer_for,
};
use crate::cmd::app::backend::objects::application;
use crate::cmd::app::client::{
    AppClient, AppStream, Backend, ProjectRead, RollbackRequest, username,
};
use crate::cmd::app::diff_view::DiffView;
use crate::cmd::app::flags::conn::ConnArgs;
use crate::cmd::app::output::tree_live::nodes_of;
use crate::cmd::app::terminate_op::ensure_operation_running;
use crate::cmd::remote::{ServerClient, enc};
use crate::output::rows::ResourceRow;

/// `plumb server`.
struct Server {
    server: ServerClient,
}

/// Through `plumb server`: every call goes to the server's REST API (Argo CD's paths) with
/// the context's token; no kubeconfig is read. The control namespace is the server's
/// (`controllerNamespace` of `GET /api/v1/settings`), and so is the namespace of bare
/// Application names unless `-N` (or `$PLUMB_NAMESPACE`) names another, as `argocd` sends
/// no namespace without `-N`.
pub(crate) async fn connect(server: ServerClient, args: &ConnArgs) -> Result<AppClient> {
    let settings = server.get("/api/v1/settings").await?;
    let control = settings
        .get("controllerNamespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| args.control_namespace().to_string());
    let explicit = std::env::var_os("PLUMB_NAMESPACE").is_some()
        || std::env::args().any(|a| {
            a == "-N" || a.starts_with("--app-namespace") || (a.starts_with("-N") && a.len() > 2)
        });
    let app_namespace = if explicit {
        args.app_namespace.clone()
    } else {
        control.clone()
    };
    Ok(AppClient::new(
        control,
        app_namespace,
        Arc::new(Server { server }),
    ))
}

/// The request body of an Application written through the server: its namespace is the `-N`
/// one when it names none and that differs from the control namespace.
fn app_body(c: &AppClient, app: &Application) -> Result<Value> {
    let mut body = serde_json::to_value(app)?;
    if app.namespace().is_empty() && c.app_namespace() != c.namespace() {
        body["metadata"]["namespace"] = Value::from(c.app_namespace().to_string());
    }
    Ok(body)
}

impl Server {
    async fn get_opt(&self, c: &AppClient, name: &str) -> Result<Option<Application>> {
        let srv = &self.server;
        let (code, v) = srv
            .call(reqwest::Method::GET, &app_path(c, name, "", &[]), None)
            .await?;
        // With authorization on, the server answers a missing Application with a bare
        // "permission denied" (as Argo, so names cannot be probed); a denial of one that
        // exists names the rule.
        let missing = code == 404
            || (code == 403
                && v.get("message").and_then(Value::as_str) == Some("permission denied"));
        match code {
            _ if missing => Ok(None),
            200 => application(v).map(Some),
            _ => Err(srv.error(code, &v)),
        }
    }

    /// `PATCH /api/v1/applications/{name}` with a merge patch (Argo's `ApplicationPatchRequest`);
    /// `None` when a `metadata.resourceVersion` in the patch is stale (409).
    async fn patch(
        &self,
        c: &AppClient,
        qualified: &str,
        patch: &Value,
    ) -> Result<Option<Application>> {
        let srv = &self.server;
        let (ns, name) = c.locate(qualified);
        let mut body =
            serde_json::json!({"name": name, "patch": patch.to_string(), "patchType": "merge"});
        if !ns.is_empty() {
            body["appNamespace"] = Value::from(ns);
        }
        let path = format!("/api/v1/applications/{}", enc(name));
        let (code, v) = srv.call(reqwest::Method::PATCH, &path, Some(&body)).await?;
        match code {
            200 => application(v).map(Some),
            409 => Ok(None),
            _ => Err(srv.error(code, &v)),
        }
    }

    async fn merge_patch(
        &self,
        c: &AppClient,
        qualified: &str,
        patch: &Value,
    ) -> Result<Application> {
        match self.patch(c, qualified, patch).await? {
            Some(app) => Ok(app),
            None => bail!("application '{qualified}' changed while patching it"),
        }
    }

    async fn create(
        &self,
        c: &AppClient,
        app: &Application,
        validate: bool,
    ) -> Result<Application> {
        let body = app_body(c, app)?;
        let path = if validate {
            "/api/v1/applications"
        } else {
            "/api/v1/applications?validate=false"
        };
        application(self.server.post(path, &body).await?)
    }

    async fn replace(&self, c: &AppClient, app: &Application) -> Result<Application> {
        let body = app_body(c, app)?;
        let path = format!("/api/v1/applications/{}", enc(app.name()));
        application(self.server.put(&path, &body).await?)
    }

    /// `DELETE /api/v1/applications/{name}?cascade=&propagationPolicy=`: the server sets the
    /// finalizers as `plumb app delete` does; `false` when it was already gone.
    async fn delete(
        &self,
        c: &AppClient,
        qualified: &str,
        cascade: bool,
        background: bool,
    ) -> Result<bool> {
        let srv = &self.server;
        let policy = if background {
            "background"
        } else {
            "foreground"
        };
        let cascade = if cascade { "true" } else { "false" };
        let path = app_path(
            c,
            qualified,
            "",
            &[("cascade", cascade), ("propagationPolicy", policy)],
        );
        let (code, v) = srv.call(reqwest::Method::DELETE, &path, None).await?;
        match code {
            200 => Ok(true),
            404 => Ok(false),
            _ => Err(srv.error(code, &v)),
        }
    }

    async fn project(&self, name: &str) -> Result<Option<AppProject>> {
        let srv = &self.server;
        let path = format!("/api/v1/projects/{}", enc(name));
        let (code, v) = srv.call(reqwest::Method::GET, &path, None).await?;
        match code {
            404 => Ok(None),
            200 => serde_json::from_value(v)
                .with_context(|| format!("reading AppProject {name} from the server"))
                .map(Some),
            _ => Err(srv.error(code, &v)),
        }
    }

    async fn project_for_check(&self, name: &str) -> Result<ProjectRead> {
        match self.project(name).await {
            Ok(p) => Ok(ProjectRead::Read(p.map(Box::new))),
            Err(e) => {
                tracing::debug!("reading the project through the server: {e:#}");
                Ok(ProjectRead::LeftToServer)
            }
        }
    }

    /// Argo's `TerminateOperation` (`DELETE .../operation`): the server refuses when no
    /// operation runs.
    async fn terminate_operation(&self, c: &AppClient, qualified: &str) -> Result<()> {
        let app = c.get(qualified).await?;
        ensure_operation_running(&app)?;
        self.server
            .delete(&app_path(c, qualified, "/operation", &[]))
            .await?;
        Ok(())
    }

    /// Argo's `Rollback`: the server finds the entry, refuses as the core backend does and
    /// writes the operation (with the caller as its initiator).
    async fn request_rollback(
        &self,
        c: &AppClient,
        req: &RollbackRequest<'_>,
    ) -> Result<Application> {
        let (ns, name) = c.locate(req.name);
        let mut body = serde_json::json!({"name": name, "id": req.id.unwrap_or(-1),
            "prune": req.prune, "dryRun": req.dry_run});
        if !ns.is_empty() {
            body["appNamespace"] = Value::from(ns);
        }
        let path = format!("/api/v1/applications/{}/rollback", enc(name));
        application(self.server.post(&path, &body).await?)
    }

    /// The server's `GET .../resource-tree`.
    async fn tree_nodes(&self, c: &AppClient, app: &Application) -> Result<Vec<Value>> {
        let wide_name = format!("{}/{}", app.namespace(), app.name());
        let path = app_path(c, &wide_name, "/resource-tree", &[]);
        Ok(nodes_of(self.server.get(&path).await?))
    }

    /// As with Argo's CLI: the settings from `GET /api/v1/settings`, the API versions from
    /// `GET /api/v1/clusters/{server}` (the destination's discovery) and no repository
    /// credentials; the render itself is the core backend's, with the local helm and kustomize.
    async fn render_local(
        &self,
        c: &AppClient,
        app: &Application,
        local: &plumb_source::LocalSource,
    ) -> Result<Vec<Value>> {
        let settings = settings::settings(&self.server).await?;
        let api_versions = settings::api_versions(&self.server, app).await?;
        let renderer = renderer_for(c, app, &settings, Some(local), false).await?;
        let source_repos = project_source_repos(c, app).await?;
        render_manifests(renderer, api_versions, source_repos, app, local).await
    }
}

impl Backend for Server {
    fn kube(&self) -> Result<&kube::Client> {
        Err(anyhow!(
            "this needs the Kubernetes API, which plumb server does not offer for it yet: add --core to use your kubeconfig"
        ))
    }

    fn username(&self) -> String {
        username(None)
    }

    fn get_opt<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
    ) -> BoxFuture<'a, Result<Option<Application>>> {
        self.get_opt(c, qualified).boxed()
    }

    fn list<'a>(
        &'a self,
        _: &'a AppClient,
        _: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Application>>> {
        // `app list` through the server is answered whole (`verbs::list`).
        let refused = self.kube().map(|_| Vec::new());
        async move { refused }.boxed()
    }

    fn merge_patch<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Application>> {
        self.merge_patch(c, qualified, patch).boxed()
    }

    fn merge_patch_at<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        patch: Value,
    ) -> BoxFuture<'a, Result<Option<Application>>> {
        async move { self.patch(c, qualified, &patch).await }.boxed()
    }

    fn patch_status<'a>(
        &'a self,
        _: &'a AppClient,
        _: &'a str,
        _: &'a Value,
    ) -> BoxFuture<'a, Result<Application>> {
        async { bail!("the status of an Application cannot be written through plumb server") }
            .boxed()
    }

    fn create<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        validate: bool,
    ) -> BoxFuture<'a, Result<Application>> {
        self.create(c, app, validate).boxed()
    }

    fn replace<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
    ) -> BoxFuture<'a, Result<Application>> {
        self.replace(c, app).boxed()
    }

    fn delete<'a>(&'a self, c: &'a AppClient, qualified: &'a str) -> BoxFuture<'a, Result<bool>> {
        self.delete(c, qualified, true, false).boxed()
    }

    fn delete_app<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        _: &'a Application,
        cascade: bool,
        background: bool,
    ) -> BoxFuture<'a, Result<()>> {
        async move {
            self.delete(c, qualified, cascade, background).await?;
            Ok(())
        }
        .boxed()
    }

    fn watch(&self, c: &AppClient, qualified: &str) -> AppStream {
        watch::watch(self.server.clone(), c.clone(), qualified)
    }

    fn settings<'a>(&'a self, _: &'a AppClient) -> BoxFuture<'a, Result<Settings>> {
        // The server does not hand out argocd-cm: what the CLI reads of it comes from
        // `GET /api/v1/settings` (the UI's address is the server itself, Argo's `appURL`).
        settings::settings(&self.server).boxed()
    }

    fn project<'a>(
        &'a self,
        _: &'a AppClient,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<AppProject>>> {
        self.project(name).boxed()
    }

    fn project_for_check<'a>(
        &'a self,
        _: &'a AppClient,
        name: &'a str,
    ) -> BoxFuture<'a, Result<ProjectRead>> {
        self.project_for_check(name).boxed()
    }

    fn find_cluster<'a>(
        &'a self,
        _: &'a AppClient,
        server: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(String, String)>> {
        // There are no cluster Secrets to read: the destination as given (the server and the
        // controller check it against the project).
        let pair = (server.to_string(), name.to_string());
        async move { Ok(pair) }.boxed()
    }

    fn terminate_operation<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
    ) -> BoxFuture<'a, Result<()>> {
        self.terminate_operation(c, qualified).boxed()
    }

    fn request_rollback<'a>(
        &'a self,
        c: &'a AppClient,
        req: &'a RollbackRequest<'a>,
    ) -> BoxFuture<'a, Result<Application>> {
        self.request_rollback(c, req).boxed()
    }

    fn tree_nodes<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        _: &'a [ResourceRow],
    ) -> BoxFuture<'a, Result<Vec<Value>>> {
        self.tree_nodes(c, app).boxed()
    }

    fn render_local<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        local: &'a plumb_source::LocalSource,
    ) -> BoxFuture<'a, Result<Vec<Value>>> {
        self.render_local(c, app, local).boxed()
    }

    fn print_diff<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        view: &'a DiffView,
        out: &'a mut (dyn Write + Send),
    ) -> BoxFuture<'a, Result<usize>> {
        async move {
            // The server compares, with its tools and the controller's code. With `--local`,
            // the directory is rendered here and the server compares what it renders.
            let qualified = format!("{}/{}", app.namespace(), app.name());
            diff::print_diff(&self.server, c, &qualified, view, out).await
        }
        .boxed()
    }
}
