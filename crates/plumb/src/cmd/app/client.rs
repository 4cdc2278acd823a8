//! The Kubernetes side of the `plumb app` commands: Applications in the control namespace read,
//! patched, created, deleted and watched with the user's kubeconfig (Plumb's CLI works like
//! `argocd --core`), plus the AppProject and the settings ConfigMap the layouts need.

use std::path::PathBuf;
use std::pin::Pin;

use anyhow::{Context, Result, anyhow};
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
    /// Namespace holding the Applications (the control namespace).
    #[arg(
        short = 'N',
        long = "app-namespace",
        global = true,
        env = "PLUMB_NAMESPACE",
        default_value = "argocd",
        value_name = "NAMESPACE"
    )]
    pub app_namespace: String,
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

/// Applications of one control namespace.
#[derive(Clone)]
pub struct AppClient {
    client: kube::Client,
    namespace: String,
    apps: Api<DynamicObject>,
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
        let apps = Api::namespaced_with(
            client.clone(),
            &args.app_namespace,
            &resource(Application::KIND, "applications"),
        );
        Ok(Self {
            client,
            namespace: args.app_namespace.clone(),
            apps,
            kubeconfig: args.kubeconfig.clone(),
        })
    }

    /// The control namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The underlying client.
    pub fn kube(&self) -> &kube::Client {
        &self.client
    }

    fn not_found(&self, name: &str) -> anyhow::Error {
        anyhow!(
            "application '{name}' not found in namespace '{}'",
            self.namespace
        )
    }

    /// One Application, or an error naming it when it does not exist.
    pub async fn get(&self, name: &str) -> Result<Application> {
        self.get_opt(name)
            .await?
            .ok_or_else(|| self.not_found(name))
    }

    /// One Application, `None` when it does not exist.
    pub async fn get_opt(&self, name: &str) -> Result<Option<Application>> {
        match self.apps.get(name).await {
            Ok(obj) => to_application(obj).map(Some),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => {
                Err(e).with_context(|| format!("reading Application {}/{name}", self.namespace))
            }
        }
    }

    /// Applications matching a label selector, sorted by name.
    pub async fn list(&self, selector: Option<&str>) -> Result<Vec<Application>> {
        let mut params = ListParams::default();
        if let Some(s) = selector {
            params = params.labels(s);
        }
        let list =
            self.apps.list(&params).await.with_context(|| {
                format!("listing Applications in namespace '{}'", self.namespace)
            })?;
        let mut apps = list
            .items
            .into_iter()
            .map(to_application)
            .collect::<Result<Vec<_>>>()?;
        apps.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(apps)
    }

    /// A JSON merge patch on the Application.
    pub async fn merge_patch(&self, name: &str, patch: &Value) -> Result<Application> {
        match self
            .apps
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(obj) => to_application(obj),
            Err(e) if is_not_found(&e) => Err(self.not_found(name)),
            Err(e) => {
                Err(e).with_context(|| format!("patching Application {}/{name}", self.namespace))
            }
        }
    }

    /// A merge patch guarded by `resourceVersion`; `Ok(None)` when someone wrote the object in
    /// between (the caller re-reads and decides again).
    pub async fn merge_patch_at(
        &self,
        name: &str,
        resource_version: &str,
        mut patch: Value,
    ) -> Result<Option<Application>> {
        patch["metadata"]["resourceVersion"] = Value::from(resource_version);
        match self
            .apps
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(obj) => to_application(obj).map(Some),
            Err(e) if is_conflict(&e) => Ok(None),
            Err(e) if is_not_found(&e) => Err(self.not_found(name)),
            Err(e) => {
                Err(e).with_context(|| format!("patching Application {}/{name}", self.namespace))
            }
        }
    }

    /// A merge patch of the status subresource.
    pub async fn patch_status(&self, name: &str, patch: &Value) -> Result<Application> {
        match self
            .apps
            .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(obj) => to_application(obj),
            Err(e) if is_not_found(&e) => Err(self.not_found(name)),
            Err(e) => Err(e).with_context(|| {
                format!(
                    "patching the status of Application {}/{name}",
                    self.namespace
                )
            }),
        }
    }

    /// Creates an Application.
    pub async fn create(&self, app: &Application) -> Result<Application> {
        let obj: DynamicObject = serde_json::from_value(serde_json::to_value(app)?)
            .context("encoding the Application")?;
        let created = self
            .apps
            .create(&PostParams::default(), &obj)
            .await
            .with_context(|| format!("creating Application {}/{}", self.namespace, app.name()))?;
        to_application(created)
    }

    /// Replaces an Application (its `metadata.resourceVersion` guards the write).
    pub async fn replace(&self, app: &Application) -> Result<Application> {
        let obj: DynamicObject = serde_json::from_value(serde_json::to_value(app)?)
            .context("encoding the Application")?;
        let replaced = self
            .apps
            .replace(app.name(), &PostParams::default(), &obj)
            .await
            .with_context(|| format!("updating Application {}/{}", self.namespace, app.name()))?;
        to_application(replaced)
    }

    /// Deletes an Application (finalizers decide what happens to its resources); `false` when
    /// it was already gone.
    pub async fn delete(&self, name: &str) -> Result<bool> {
        match self.apps.delete(name, &DeleteParams::default()).await {
            Ok(_) => Ok(true),
            Err(e) if is_not_found(&e) => Ok(false),
            Err(e) => {
                Err(e).with_context(|| format!("deleting Application {}/{name}", self.namespace))
            }
        }
    }

    /// Watches one Application: the current object first, then every change; `None` when it
    /// does not exist (or was deleted). The watch restarts by itself after API errors, which
    /// are passed through.
    pub fn watch(&self, name: &str) -> AppStream {
        kube::runtime::watcher::watch_object(self.apps.clone(), name)
            .map(|event| match event {
                Ok(Some(obj)) => to_application(obj).map(Some),
                Ok(None) => Ok(None),
                Err(e) => Err(anyhow::Error::new(e).context("watching the Application")),
            })
            .boxed()
    }

    /// The settings ConfigMap's data; empty settings when it does not exist.
    pub async fn settings(&self) -> Result<Settings> {
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
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
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
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
