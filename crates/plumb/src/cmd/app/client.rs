//! The Kubernetes side of the `plumb app` commands: Applications read, patched, created, deleted
//! and watched with the user's kubeconfig (Plumb's CLI works like `argocd --core`), plus the
//! AppProject and the settings ConfigMap the layouts need.
//!
//! Applications may live outside the control namespace (Argo CD's "applications in any
//! namespace"): every method taking a name accepts Argo's qualified form `namespace/name`; a
//! bare name is looked up in the `-N/--app-namespace` namespace.

use std::path::PathBuf;
use std::pin::Pin;

use anyhow::{Context, Result, anyhow, bail};

use crate::cmd::remote::ServerClient;
use futures::{Stream, StreamExt};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use plumb_model::Settings;
use plumb_model::application::{AppProject, Application};
use serde_json::Value;

/// The name of the settings ConfigMap in the control namespace.
pub const SETTINGS_CONFIGMAP: &str = "argocd-cm";

/// The argocd-cm key with the UI's base URL (`url`); Plumb has no UI, so the `URL:` header line
/// only appears when an operator set it (for links to an Argo CD UI reading the same objects).
pub const URL_KEY: &str = "url";

/// Connection flags shared by every `plumb app` command.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnArgs {
    /// Kubeconfig file to use (default: $KUBECONFIG, ~/.kube/config, then in-cluster).
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Namespace of the Applications named without one (`ns/name` names its own); also the
    /// control namespace unless --control-namespace is given.
    #[arg(
        short = 'N',
        long = "app-namespace",
        global = true,
        env = "PLUMB_NAMESPACE",
        default_value = "argocd",
        value_name = "NAMESPACE"
    )]
    pub app_namespace: String,
    /// The control namespace (AppProjects, argocd-cm, repository Secrets) when it differs from
    /// --app-namespace.
    #[arg(
        long = "control-namespace",
        global = true,
        env = "PLUMB_CONTROL_NAMESPACE",
        value_name = "NAMESPACE"
    )]
    pub control_namespace: Option<String>,
}

impl ConnArgs {
    /// The control namespace: `--control-namespace`, else `-N/--app-namespace`.
    pub fn control_namespace(&self) -> &str {
        self.control_namespace
            .as_deref()
            .unwrap_or(&self.app_namespace)
    }
}

/// Splits Argo's qualified Application name (`namespace/name`); a bare name is in
/// `default_namespace` (Argo's `argo.ParseFromQualifiedName`).
pub fn split_qualified<'a>(name: &'a str, default_namespace: &'a str) -> (&'a str, &'a str) {
    match name.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (ns, n),
        Some((_, n)) => (default_namespace, n),
        None => (default_namespace, name),
    }
}

/// The API resource of an `argoproj.io/v1alpha1` kind (`Application`/`applications`,
/// `AppProject`/`appprojects`).
pub(crate) fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: plumb_model::application::GROUP.to_string(),
        version: plumb_model::application::VERSION.to_string(),
        api_version: plumb_model::application::API_VERSION.to_string(),
        kind: kind.to_string(),
        plural: plural.to_string(),
    }
}

/// An Application event seen while watching one Application.
pub type AppStream = Pin<Box<dyn Stream<Item = Result<Option<Application>>> + Send>>;

/// Applications, with the control namespace they belong to.
#[derive(Clone)]
pub struct AppClient {
    /// The kubeconfig's cluster (core mode); `None` through `plumb server`.
    client: Option<kube::Client>,
    /// `plumb server` (when a context is set or `--server` given, unless `--core`).
    server: Option<ServerClient>,
    /// The control namespace.
    namespace: String,
    /// Where a bare Application name is looked up.
    app_namespace: String,
    /// Whether `-N` was set apart from the control namespace (`app list` then lists it alone).
    app_namespace_only: bool,
    kubeconfig: Option<PathBuf>,
}

impl std::fmt::Debug for AppClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppClient")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

/// Converts what the API server returned into the typed Application.
pub fn to_application(obj: DynamicObject) -> Result<Application> {
    let name = obj.metadata.name.clone().unwrap_or_default();
    let namespace = obj.metadata.namespace.clone().unwrap_or_default();
    let value = serde_json::to_value(obj).context("encoding the Application")?;
    serde_json::from_value(value).with_context(|| format!("reading Application {namespace}/{name}"))
}

pub(crate) fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404)
}

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}

impl AppClient {
    /// Connects with the kubeconfig flags (no request is made yet).
    pub async fn connect(args: &ConnArgs) -> Result<Self> {
        let source = plumb_kube::KubeconfigSource::from_option(args.kubeconfig.as_deref());
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        Ok(Self {
            client: Some(client),
            server: None,
            namespace: args.control_namespace().to_string(),
            app_namespace: args.app_namespace.clone(),
            app_namespace_only: args.control_namespace() != args.app_namespace,
            kubeconfig: args.kubeconfig.clone(),
        })
    }

    /// Through `plumb server`: every call goes to the server's REST API (Argo CD's paths) with
    /// the context's token; no kubeconfig is read. The control namespace is the server's
    /// (`controllerNamespace` of `GET /api/v1/settings`), and so is the namespace of bare
    /// Application names unless `-N` (or `$PLUMB_NAMESPACE`) names another, as `argocd` sends
    /// no namespace without `-N`.
    pub async fn through_server(server: ServerClient, args: &ConnArgs) -> Result<Self> {
        let settings = server.get("/api/v1/settings").await?;
        let control = settings
            .get("controllerNamespace")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| args.control_namespace().to_string());
        let explicit = std::env::var_os("PLUMB_NAMESPACE").is_some()
            || std::env::args().any(|a| {
                a == "-N"
                    || a.starts_with("--app-namespace")
                    || (a.starts_with("-N") && a.len() > 2)
            });
        let app_namespace = if explicit {
            args.app_namespace.clone()
        } else {
            control.clone()
        };
        Ok(Self {
            client: None,
            server: Some(server),
            app_namespace_only: app_namespace != control,
            namespace: control,
            app_namespace,
            kubeconfig: None,
        })
    }

    /// The server, when the commands go through one.
    pub fn server(&self) -> Option<&ServerClient> {
        self.server.as_ref()
    }

    /// The control namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Where a bare Application name is looked up (`-N/--app-namespace`).
    pub fn app_namespace(&self) -> &str {
        &self.app_namespace
    }

    /// The namespace and name a (possibly qualified) Application name refers to.
    pub fn locate<'a>(&'a self, name: &'a str) -> (&'a str, &'a str) {
        split_qualified(name, &self.app_namespace)
    }

    /// The Applications API of `namespace`.
    fn apps_in(&self, namespace: &str) -> Result<Api<DynamicObject>> {
        Ok(Api::namespaced_with(
            self.kube()?.clone(),
            namespace,
            &resource(Application::KIND, "applications"),
        ))
    }

    /// The underlying Kubernetes client (core mode only: through `plumb server` there is none).
    pub fn kube(&self) -> Result<&kube::Client> {
        self.client.as_ref().ok_or_else(|| {
            anyhow!(
                "this needs the Kubernetes API, which plumb server does not offer for it yet: add --core to use your kubeconfig"
            )
        })
    }

    /// `/api/v1/applications/{name}{suffix}` of a possibly qualified name, with `query`.
    pub fn app_path(&self, qualified: &str, suffix: &str, query: &[(&str, &str)]) -> String {
        let (ns, name) = self.locate(qualified);
        super::remote::app_url(&format!("{ns}/{name}"), suffix, query)
    }

    fn not_found(&self, name: &str) -> anyhow::Error {
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
        if let Some(srv) = &self.server {
            let (code, v) = srv
                .call(reqwest::Method::GET, &self.app_path(name, "", &[]), None)
                .await?;
            // With authorization on, the server answers a missing Application with a bare
            // "permission denied" (as Argo, so names cannot be probed); a denial of one that
            // exists names the rule.
            let missing = code == 404
                || (code == 403
                    && v.get("message").and_then(Value::as_str) == Some("permission denied"));
            return match code {
                _ if missing => Ok(None),
                200 => super::remote::application(v).map(Some),
                _ => Err(srv.error(code, &v)),
            };
        }
        let (ns, name) = self.locate(name);
        match self.apps_in(ns)?.get(name).await {
            Ok(obj) => to_application(obj).map(Some),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading Application {ns}/{name}")),
        }
    }

    /// Applications matching a label selector, sorted by namespace then name: those of the
    /// `-N` namespace when it was set apart from the control namespace, else those of the
    /// control namespace and of every namespace `application.namespaces` of
    /// `argocd-cmd-params-cm` permits (Argo's `app list` over every enabled namespace).
    pub async fn list(&self, selector: Option<&str>) -> Result<Vec<Application>> {
        let kube = self.kube()?.clone();
        let mut params = ListParams::default();
        if let Some(s) = selector {
            params = params.labels(s);
        }
        let permitted = if self.app_namespace_only {
            Vec::new()
        } else {
            self.application_namespaces().await?
        };
        let (api, namespace) = if self.app_namespace_only {
            (
                self.apps_in(&self.app_namespace)?,
                self.app_namespace.as_str(),
            )
        } else if permitted.is_empty() {
            (self.apps_in(&self.namespace)?, self.namespace.as_str())
        } else {
            (
                Api::all_with(kube, &resource(Application::KIND, "applications")),
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
            a.namespace() == self.namespace
                || !namespace.is_empty()
                || plumb_policy::project::namespace_in_list(&permitted, a.namespace())
        });
        apps.sort_by(|a, b| {
            (a.namespace() != self.namespace, a.namespace(), a.name()).cmp(&(
                b.namespace() != self.namespace,
                b.namespace(),
                b.name(),
            ))
        });
        Ok(apps)
    }

    /// `application.namespaces` of `argocd-cmd-params-cm` in the control namespace (none when
    /// the ConfigMap or the key is absent, or the caller may not read it).
    pub async fn application_namespaces(&self) -> Result<Vec<String>> {
        let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
            Api::namespaced(self.kube()?.clone(), &self.namespace);
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
                        self.namespace,
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

    /// A JSON merge patch on the Application.
    pub async fn merge_patch(&self, qualified: &str, patch: &Value) -> Result<Application> {
        if self.server.is_some() {
            return match self.server_patch(qualified, patch).await? {
                Some(app) => Ok(app),
                None => bail!("application '{qualified}' changed while patching it"),
            };
        }
        let (ns, name) = self.locate(qualified);
        match self
            .apps_in(ns)?
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(obj) => to_application(obj),
            Err(e) if is_not_found(&e) => Err(self.not_found(qualified)),
            Err(e) => Err(e).with_context(|| format!("patching Application {ns}/{name}")),
        }
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
        if self.server.is_some() {
            return self.server_patch(qualified, &patch).await;
        }
        let (ns, name) = self.locate(qualified);
        match self
            .apps_in(ns)?
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(obj) => to_application(obj).map(Some),
            Err(e) if is_conflict(&e) => Ok(None),
            Err(e) if is_not_found(&e) => Err(self.not_found(qualified)),
            Err(e) => Err(e).with_context(|| format!("patching Application {ns}/{name}")),
        }
    }

    /// A merge patch of the status subresource.
    pub async fn patch_status(&self, qualified: &str, patch: &Value) -> Result<Application> {
        if self.server.is_some() {
            bail!("the status of an Application cannot be written through plumb server");
        }
        let (ns, name) = self.locate(qualified);
        match self
            .apps_in(ns)?
            .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(obj) => to_application(obj),
            Err(e) if is_not_found(&e) => Err(self.not_found(qualified)),
            Err(e) => {
                Err(e).with_context(|| format!("patching the status of Application {ns}/{name}"))
            }
        }
    }

    /// The namespace an Application object is written to: its own `metadata.namespace`, else
    /// the `-N` namespace.
    fn namespace_of<'a>(&'a self, app: &'a Application) -> &'a str {
        if app.namespace().is_empty() {
            &self.app_namespace
        } else {
            app.namespace()
        }
    }

    /// Creates an Application (in its `metadata.namespace`, else the `-N` namespace).
    pub async fn create(&self, app: &Application) -> Result<Application> {
        if let Some(srv) = &self.server {
            let mut body = serde_json::to_value(app)?;
            if app.namespace().is_empty() && self.app_namespace != self.namespace {
                body["metadata"]["namespace"] = Value::from(self.app_namespace.clone());
            }
            return super::remote::application(srv.post("/api/v1/applications", &body).await?);
        }
        let obj: DynamicObject = serde_json::from_value(serde_json::to_value(app)?)
            .context("encoding the Application")?;
        let ns = self.namespace_of(app);
        let created = self
            .apps_in(ns)?
            .create(&PostParams::default(), &obj)
            .await
            .with_context(|| format!("creating Application {ns}/{}", app.name()))?;
        to_application(created)
    }

    /// Replaces an Application (its `metadata.resourceVersion` guards the write).
    pub async fn replace(&self, app: &Application) -> Result<Application> {
        if let Some(srv) = &self.server {
            let mut body = serde_json::to_value(app)?;
            if app.namespace().is_empty() && self.app_namespace != self.namespace {
                body["metadata"]["namespace"] = Value::from(self.app_namespace.clone());
            }
            let path = format!(
                "/api/v1/applications/{}",
                super::super::remote::enc(app.name())
            );
            return super::remote::application(srv.put(&path, &body).await?);
        }
        let obj: DynamicObject = serde_json::from_value(serde_json::to_value(app)?)
            .context("encoding the Application")?;
        let ns = self.namespace_of(app);
        let replaced = self
            .apps_in(ns)?
            .replace(app.name(), &PostParams::default(), &obj)
            .await
            .with_context(|| format!("updating Application {ns}/{}", app.name()))?;
        to_application(replaced)
    }

    /// Deletes an Application (finalizers decide what happens to its resources); `false` when
    /// it was already gone.
    pub async fn delete(&self, qualified: &str) -> Result<bool> {
        if self.server.is_some() {
            return self.delete_through_server(qualified, true, false).await;
        }
        let (ns, name) = self.locate(qualified);
        match self
            .apps_in(ns)?
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if is_not_found(&e) => Ok(false),
            Err(e) => Err(e).with_context(|| format!("deleting Application {ns}/{name}")),
        }
    }

    /// Watches one Application: the current object first, then every change; `None` when it
    /// does not exist (or was deleted). The watch restarts by itself after API errors, which
    /// are passed through.
    pub fn watch(&self, qualified: &str) -> AppStream {
        if self.server.is_some() {
            return super::server_watch::watch(self.clone(), qualified);
        }
        let (ns, name) = self.locate(qualified);
        let api = match self.apps_in(ns) {
            Ok(api) => api,
            Err(e) => return futures::stream::once(async move { Err(e) }).boxed(),
        };
        kube::runtime::watcher::watch_object(api, name)
            .map(|event| match event {
                Ok(Some(obj)) => to_application(obj).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(anyhow::Error::new(e).context("watching the Application")),
            })
            .boxed()
    }

    /// The settings ConfigMap's data; empty settings when it does not exist.
    pub async fn settings(&self) -> Result<Settings> {
        if let Some(srv) = &self.server {
            // The server does not hand out argocd-cm: what the CLI reads of it comes from
            // `GET /api/v1/settings` (the UI's address is the server itself, Argo's `appURL`).
            return super::remote_local::settings(srv).await;
        }
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.kube()?.clone(),
            &self.namespace,
            &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
        );
        match api.get(SETTINGS_CONFIGMAP).await {
            Ok(cm) => Ok(Settings::from_config_map(&serde_json::to_value(cm)?)),
            Err(e) if is_not_found(&e) => Ok(Settings::default()),
            Err(e) => Err(e).with_context(|| {
                format!("reading ConfigMap {}/{SETTINGS_CONFIGMAP}", self.namespace)
            }),
        }
    }

    /// An AppProject of the control namespace, `None` when it does not exist.
    pub async fn project(&self, name: &str) -> Result<Option<AppProject>> {
        if let Some(srv) = &self.server {
            let path = format!("/api/v1/projects/{}", super::super::remote::enc(name));
            let (code, v) = srv.call(reqwest::Method::GET, &path, None).await?;
            return match code {
                404 => Ok(None),
                200 => serde_json::from_value(v)
                    .with_context(|| format!("reading AppProject {name} from the server"))
                    .map(Some),
                _ => Err(srv.error(code, &v)),
            };
        }
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.kube()?.clone(),
            &self.namespace,
            &resource(AppProject::KIND, "appprojects"),
        );
        match api.get(name).await {
            Ok(obj) => {
                let value = serde_json::to_value(obj)?;
                serde_json::from_value(value)
                    .with_context(|| format!("reading AppProject {}/{name}", self.namespace))
                    .map(Some)
            }
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => {
                Err(e).with_context(|| format!("reading AppProject {}/{name}", self.namespace))
            }
        }
    }

    /// `PATCH /api/v1/applications/{name}` with a merge patch (Argo's `ApplicationPatchRequest`);
    /// `None` when a `metadata.resourceVersion` in the patch is stale (409).
    async fn server_patch(&self, qualified: &str, patch: &Value) -> Result<Option<Application>> {
        let srv = self.server.as_ref().ok_or_else(|| anyhow!("no server"))?;
        let (ns, name) = self.locate(qualified);
        let mut body =
            serde_json::json!({"name": name, "patch": patch.to_string(), "patchType": "merge"});
        if !ns.is_empty() {
            body["appNamespace"] = Value::from(ns);
        }
        let path = format!("/api/v1/applications/{}", super::super::remote::enc(name));
        let (code, v) = srv.call(reqwest::Method::PATCH, &path, Some(&body)).await?;
        match code {
            200 => super::remote::application(v).map(Some),
            409 => Ok(None),
            _ => Err(srv.error(code, &v)),
        }
    }

    /// `DELETE /api/v1/applications/{name}?cascade=&propagationPolicy=`: the server sets the
    /// finalizers as `plumb app delete` does; `false` when it was already gone.
    pub async fn delete_through_server(
        &self,
        qualified: &str,
        cascade: bool,
        background: bool,
    ) -> Result<bool> {
        let srv = self.server.as_ref().ok_or_else(|| anyhow!("no server"))?;
        let policy = if background {
            "background"
        } else {
            "foreground"
        };
        let cascade = if cascade { "true" } else { "false" };
        let path = self.app_path(
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

    /// Who is asking, for `operation.initiatedBy.username`: the kubeconfig's current user name,
    /// else `$USER`.
    pub fn username(&self) -> String {
        kubeconfig_user(self.kubeconfig.as_deref())
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "unknown".to_string())
    }
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
