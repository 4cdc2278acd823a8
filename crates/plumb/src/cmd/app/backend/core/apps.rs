//! The core backend: Applications, AppProjects and argocd-cm read, patched, created, deleted
//! and watched with the user's kubeconfig.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use plumb_model::Settings;
use plumb_model::application::{AppProject, Application};
use serde_json::Value;

use super::{clusters, compare, diff, requests, tree};
use crate::cmd::app::backend::objects::{
    SETTINGS_CONFIGMAP, is_conflict, is_not_found, resource, to_application,
};
use crate::cmd::app::client::{
    AppClient, AppStream, Backend, ProjectRead, RollbackRequest, username,
};
use crate::cmd::app::diff_view::DiffView;
use crate::cmd::app::flags::conn::ConnArgs;
use crate::output::rows::ResourceRow;

/// The kubeconfig's cluster.
struct Core {
    client: kube::Client,
    kubeconfig: Option<PathBuf>,
}

/// Connects with the kubeconfig flags (no request is made yet).
pub(crate) async fn connect(args: &ConnArgs) -> Result<AppClient> {
    let source = plumb_kube::KubeconfigSource::from_option(args.kubeconfig.as_deref());
    let client = plumb_kube::connect(&source)
        .await
        .context("connecting to the cluster")?;
    let core = Core {
        client,
        kubeconfig: args.kubeconfig.clone(),
    };
    Ok(AppClient::new(
        args.control_namespace().to_string(),
        args.app_namespace.clone(),
        Arc::new(core),
    ))
}

impl Core {
    /// The Applications API of `namespace`.
    fn apps_in(&self, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            namespace,
            &resource(Application::KIND, "applications"),
        )
    }

    async fn get_opt(&self, c: &AppClient, qualified: &str) -> Result<Option<Application>> {
        let (ns, name) = c.locate(qualified);
        match self.apps_in(ns).get(name).await {
            Ok(obj) => to_application(obj).map(Some),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading Application {ns}/{name}")),
        }
    }

    async fn list(&self, c: &AppClient, selector: Option<&str>) -> Result<Vec<Application>> {
        let mut params = ListParams::default();
        if let Some(s) = selector {
            params = params.labels(s);
        }
        let permitted = if c.app_namespace_only() {
            Vec::new()
        } else {
            self.application_namespaces(c).await?
        };
        let (api, namespace) = if c.app_namespace_only() {
            (self.apps_in(c.app_namespace()), c.app_namespace())
        } else if permitted.is_empty() {
            (self.apps_in(c.namespace()), c.namespace())
        } else {
            (
                Api::all_with(
                    self.client.clone(),
                    &resource(Application::KIND, "applications"),
                ),
                "",
            )
        };
        let list = api.list(&params).await.with_context(|| {
            if namespace.is_empty() {
                "listing Applications in all namespaces (application.namespaces is set)".to_string()
            } else {
                format!("listing Applications in namespace '{namespace}'")
            }
        })?;
        let mut apps = list
            .items
            .into_iter()
            .map(to_application)
            .collect::<Result<Vec<_>>>()?;
        apps.retain(|a| {
            a.namespace() == c.namespace()
                || !namespace.is_empty()
                || plumb_policy::project::namespace_in_list(&permitted, a.namespace())
        });
        apps.sort_by(|a, b| {
            (a.namespace() != c.namespace(), a.namespace(), a.name()).cmp(&(
                b.namespace() != c.namespace(),
                b.namespace(),
                b.name(),
            ))
        });
        Ok(apps)
    }

    /// `application.namespaces` of `argocd-cmd-params-cm` in the control namespace (none when
    /// the ConfigMap or the key is absent, or the caller may not read it).
    async fn application_namespaces(&self, c: &AppClient) -> Result<Vec<String>> {
        let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(self.client.clone(), c.namespace());
        let cm = match api.get(plumb_app::CMD_PARAMS_CONFIGMAP).await {
            Ok(cm) => cm,
            Err(e) if is_not_found(&e) => return Ok(Vec::new()),
            // Someone who may list Applications but not read ConfigMaps lists the control
            // namespace, as before.
            Err(kube::Error::Api(status)) if status.code == 403 => {
                tracing::debug!(
                    "cannot read {}: listing the control namespace only",
                    plumb_app::CMD_PARAMS_CONFIGMAP
                );
                return Ok(Vec::new());
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "reading ConfigMap {}/{}",
                        c.namespace(),
                        plumb_app::CMD_PARAMS_CONFIGMAP
                    )
                });
            }
        };
        Ok(cm
            .data
            .and_then(|d| d.get(plumb_app::APPLICATION_NAMESPACES_KEY).cloned())
            .map(|v| plumb_app::parse_namespace_list(&v))
            .unwrap_or_default())
    }

    async fn merge_patch(
        &self,
        c: &AppClient,
        qualified: &str,
        patch: &Value,
    ) -> Result<Application> {
        let (ns, name) = c.locate(qualified);
        match self
            .apps_in(ns)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(obj) => to_application(obj),
            Err(e) if is_not_found(&e) => Err(c.not_found(qualified)),
            Err(e) => Err(e).with_context(|| format!("patching Application {ns}/{name}")),
        }
    }

    async fn merge_patch_at(
        &self,
        c: &AppClient,
        qualified: &str,
        patch: Value,
    ) -> Result<Option<Application>> {
        let (ns, name) = c.locate(qualified);
        match self
            .apps_in(ns)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(obj) => to_application(obj).map(Some),
            Err(e) if is_conflict(&e) => Ok(None),
            Err(e) if is_not_found(&e) => Err(c.not_found(qualified)),
            Err(e) => Err(e).with_context(|| format!("patching Application {ns}/{name}")),
        }
    }

    async fn patch_status(
        &self,
        c: &AppClient,
        qualified: &str,
        patch: &Value,
    ) -> Result<Application> {
        let (ns, name) = c.locate(qualified);
        match self
            .apps_in(ns)
            .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(obj) => to_application(obj),
            Err(e) if is_not_found(&e) => Err(c.not_found(qualified)),
            Err(e) => {
                Err(e).with_context(|| format!("patching the status of Application {ns}/{name}"))
            }
        }
    }

    /// Without a server there is no repository check (`validate` is the server's): a source
    /// that does not answer shows as the controller's ComparisonError condition.
    async fn create(
        &self,
        c: &AppClient,
        app: &Application,
        _validate: bool,
    ) -> Result<Application> {
        let obj: DynamicObject = serde_json::from_value(serde_json::to_value(app)?)
            .context("encoding the Application")?;
        let ns = c.namespace_of(app);
        let created = self
            .apps_in(ns)
            .create(&PostParams::default(), &obj)
            .await
            .with_context(|| format!("creating Application {ns}/{}", app.name()))?;
        to_application(created)
    }

    async fn replace(&self, c: &AppClient, app: &Application) -> Result<Application> {
        let obj: DynamicObject = serde_json::from_value(serde_json::to_value(app)?)
            .context("encoding the Application")?;
        let ns = c.namespace_of(app);
        let replaced = self
            .apps_in(ns)
            .replace(app.name(), &PostParams::default(), &obj)
            .await
            .with_context(|| format!("updating Application {ns}/{}", app.name()))?;
        to_application(replaced)
    }

    async fn delete(&self, c: &AppClient, qualified: &str) -> Result<bool> {
        let (ns, name) = c.locate(qualified);
        match self
            .apps_in(ns)
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if is_not_found(&e) => Ok(false),
            Err(e) => Err(e).with_context(|| format!("deleting Application {ns}/{name}")),
        }
    }

    fn watch(&self, c: &AppClient, qualified: &str) -> AppStream {
        let (ns, name) = c.locate(qualified);
        kube::runtime::watcher::watch_object(self.apps_in(ns), name)
            .map(|event| match event {
                Ok(Some(obj)) => to_application(obj).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(anyhow::Error::new(e).context("watching the Application")),
            })
            .boxed()
    }

    async fn settings(&self, c: &AppClient) -> Result<Settings> {
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            c.namespace(),
            &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
        );
        match api.get(SETTINGS_CONFIGMAP).await {
            Ok(cm) => Ok(Settings::from_config_map(&serde_json::to_value(cm)?)),
            Err(e) if is_not_found(&e) => Ok(Settings::default()),
            Err(e) => Err(e).with_context(|| {
                format!("reading ConfigMap {}/{SETTINGS_CONFIGMAP}", c.namespace())
            }),
        }
    }

    /// The AppProject as the controller evaluates it: with the repositories and clusters
    /// scoped to it ([`plumb_app::project_scope`]). Where the kubeconfig may not list those
    /// Secrets, the project alone (narrower: nothing scoped is added), with a warning.
    async fn project(&self, c: &AppClient, name: &str) -> Result<Option<AppProject>> {
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            c.namespace(),
            &resource(AppProject::KIND, "appprojects"),
        );
        let project: AppProject = match api.get(name).await {
            Ok(obj) => {
                let value = serde_json::to_value(obj)?;
                serde_json::from_value(value)
                    .with_context(|| format!("reading AppProject {}/{name}", c.namespace()))?
            }
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("reading AppProject {}/{name}", c.namespace()));
            }
        };
        let scope = plumb_app::project_scope::read_scope(&self.client, c.namespace(), name)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(
                    "AppProject {name}: its project-scoped repositories and clusters are left out: {}",
                    plumb_app::chain(&e)
                );
                Default::default()
            });
        Ok(Some(plumb_app::ScopedProject::new(&project, scope).project))
    }
}

impl Backend for Core {
    fn kube(&self) -> Result<&kube::Client> {
        Ok(&self.client)
    }

    fn username(&self) -> String {
        username(self.kubeconfig.as_deref())
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
        c: &'a AppClient,
        selector: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<Application>>> {
        self.list(c, selector).boxed()
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
        self.merge_patch_at(c, qualified, patch).boxed()
    }

    fn patch_status<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        patch: &'a Value,
    ) -> BoxFuture<'a, Result<Application>> {
        self.patch_status(c, qualified, patch).boxed()
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
        self.delete(c, qualified).boxed()
    }

    fn delete_app<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
        app: &'a Application,
        cascade: bool,
        background: bool,
    ) -> BoxFuture<'a, Result<()>> {
        requests::delete_app(c, qualified, app, cascade, background).boxed()
    }

    fn watch(&self, c: &AppClient, qualified: &str) -> AppStream {
        self.watch(c, qualified)
    }

    fn settings<'a>(&'a self, c: &'a AppClient) -> BoxFuture<'a, Result<Settings>> {
        self.settings(c).boxed()
    }

    fn project<'a>(
        &'a self,
        c: &'a AppClient,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<AppProject>>> {
        self.project(c, name).boxed()
    }

    fn project_for_check<'a>(
        &'a self,
        c: &'a AppClient,
        name: &'a str,
    ) -> BoxFuture<'a, Result<ProjectRead>> {
        async move {
            Ok(ProjectRead::Read(
                self.project(c, name).await?.map(Box::new),
            ))
        }
        .boxed()
    }

    fn find_cluster<'a>(
        &'a self,
        c: &'a AppClient,
        server: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<(String, String)>> {
        clusters::find_cluster(&self.client, c.namespace(), server, name).boxed()
    }

    fn terminate_operation<'a>(
        &'a self,
        c: &'a AppClient,
        qualified: &'a str,
    ) -> BoxFuture<'a, Result<()>> {
        requests::terminate_operation(c, qualified).boxed()
    }

    fn request_rollback<'a>(
        &'a self,
        c: &'a AppClient,
        req: &'a RollbackRequest<'a>,
    ) -> BoxFuture<'a, Result<Application>> {
        requests::request_rollback(c, req).boxed()
    }

    fn tree_nodes<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        rows: &'a [ResourceRow],
    ) -> BoxFuture<'a, Result<Vec<Value>>> {
        tree::nodes(c, &self.client, app, rows).boxed()
    }

    fn render_local<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        local: &'a plumb_source::LocalSource,
    ) -> BoxFuture<'a, Result<Vec<Value>>> {
        compare::render_local(c, app, local).boxed()
    }

    fn print_diff<'a>(
        &'a self,
        c: &'a AppClient,
        app: &'a Application,
        view: &'a DiffView,
        out: &'a mut (dyn Write + Send),
    ) -> BoxFuture<'a, Result<usize>> {
        diff::print_diff(c, app, view, out).boxed()
    }
}
