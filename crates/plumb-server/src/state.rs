//! What every request handler shares: the Kubernetes client, the control namespace, the source
//! renderer, the connection to the in-cluster destination (discovered on first use), and the
//! shutdown signal that ends watch streams.

use std::sync::Arc;

use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use plumb_app::{
    Cluster, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER, application_resource, appproject_resource,
};
use plumb_model::Settings;
use plumb_model::application::Application;
use plumb_source::Renderer;
use tokio::sync::{OnceCell, watch};

use crate::error::{Error, Result};

/// The settings ConfigMap of the control namespace.
pub(crate) const SETTINGS_CONFIGMAP: &str = "argocd-cm";

/// Shared by every handler.
#[derive(Clone)]
pub(crate) struct AppState(pub(crate) Arc<Inner>);

pub(crate) struct Inner {
    pub(crate) client: kube::Client,
    pub(crate) namespace: String,
    /// Namespaces besides the control namespace whose Applications are served (patterns of
    /// `--application-namespaces`; empty: the control namespace only).
    pub(crate) app_namespaces: Vec<String>,
    pub(crate) renderer: Arc<Renderer>,
    /// The render limits and `--plugin-dir` the server was started with, which argocd-cm
    /// refines before each render as the controller's settings do
    /// ([`plumb_app::render_settings`]).
    pub(crate) render_defaults: plumb_app::render_settings::RenderDefaults,
    /// `--customizations`: Lua health and action directories in Argo's layout.
    pub(crate) customizations: Vec<std::path::PathBuf>,
    /// What the binary was built from (`GET /api/version`).
    pub(crate) build: crate::config::BuildInfo,
    /// `(helm, kustomize)` versions as `GET /api/version` prints them: asked once (that route
    /// is public, so a missing binary must not cost a process per request).
    pub(crate) tool_versions: OnceCell<(String, String)>,
    cluster: OnceCell<Arc<Cluster>>,
    /// Clusters of Argo CD cluster Secrets, by server URL, with the Secret's resourceVersion
    /// they were connected with (a changed Secret connects again).
    remote_clusters: std::sync::Mutex<std::collections::HashMap<String, (String, Arc<Cluster>)>>,
    pub(crate) shutdown: watch::Receiver<bool>,
    /// `None` with `--disable-auth`.
    pub(crate) auth: Option<Arc<crate::auth::Auth>>,
    /// The served Applications, kept current by a watch (the list and get routes read it).
    pub(crate) app_cache: Arc<crate::app_cache::AppCache>,
    /// Where ApplicationSet previews keep their Git cache (`None`: the temporary directory).
    pub(crate) appset_cache: Option<std::path::PathBuf>,
    /// The generators' context of previews, built on first use.
    pub(crate) appset_context: OnceCell<plumb_appset::Context>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    pub(crate) fn new(
        client: kube::Client,
        namespace: String,
        renderer: Arc<Renderer>,
        shutdown: watch::Receiver<bool>,
        auth: Option<Arc<crate::auth::Auth>>,
    ) -> Self {
        Self(Arc::new(Inner {
            client,
            app_namespaces: Vec::new(),
            customizations: Vec::new(),
            build: crate::config::BuildInfo::unstamped(),
            tool_versions: OnceCell::new(),
            render_defaults: plumb_app::render_settings::RenderDefaults {
                limits: renderer.limits(),
                plugins_dir: renderer.plugins_dir(),
            },
            renderer,
            cluster: OnceCell::new(),
            remote_clusters: std::sync::Mutex::new(std::collections::HashMap::new()),
            app_cache: Arc::new(crate::app_cache::AppCache::new(
                namespace.clone(),
                Vec::new(),
            )),
            namespace,
            shutdown,
            auth,
            appset_cache: None,
            appset_context: OnceCell::new(),
        }))
    }
}

impl AppState {
    /// The same state serving Applications of `patterns` namespaces too (before it is shared).
    pub(crate) fn with_app_namespaces(mut self, patterns: Vec<String>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.0) {
            inner.app_cache = Arc::new(crate::app_cache::AppCache::new(
                inner.namespace.clone(),
                patterns.clone(),
            ));
            inner.app_namespaces = patterns;
        }
        self
    }

    /// The same state reading Lua health and actions from `dirs` too (before it is shared).
    pub(crate) fn with_customizations(mut self, dirs: Vec<std::path::PathBuf>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.0) {
            inner.customizations = dirs;
        }
        self
    }

    /// The same state keeping ApplicationSet previews' Git cache in `dir` (before it is shared).
    pub(crate) fn with_appset_cache(mut self, dir: std::path::PathBuf) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.0) {
            inner.appset_cache = Some(dir);
        }
        self
    }

    /// The same state answering `GET /api/version` with `build` (before it is shared).
    pub(crate) fn with_build(mut self, build: crate::config::BuildInfo) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.0) {
            inner.build = build;
        }
        self
    }
}

impl Inner {
    /// Whether Applications of `namespace` are served: the control namespace, or one
    /// `--application-namespaces` permits (Argo's `IsNamespaceEnabled`).
    pub(crate) fn namespace_enabled(&self, namespace: &str) -> bool {
        namespace == self.namespace
            || plumb_policy::project::namespace_in_list(&self.app_namespaces, namespace)
    }

    /// The key handlers pass around for the Application `name` of `app_namespace` (Argo's
    /// `appNamespace` request field; absent or empty: the control namespace): `name` in the
    /// control namespace, `namespace/name` elsewhere. A namespace the server does not serve is
    /// refused as Argo refuses it.
    pub(crate) fn app_key(&self, name: &str, app_namespace: Option<&str>) -> Result<String> {
        check_name("Application", name)?;
        match app_namespace.filter(|ns| !ns.is_empty() && *ns != self.namespace) {
            None => Ok(name.to_string()),
            Some(ns) => {
                check_name("namespace", ns)?;
                if !self.namespace_enabled(ns) {
                    return Err(Error::PermissionDenied(format!(
                        "namespace '{ns}' is not permitted"
                    )));
                }
                Ok(format!("{ns}/{name}"))
            }
        }
    }

    /// The Applications API, namespace and name of a key from [`Inner::app_key`].
    pub(crate) fn apps_for<'a>(
        &'a self,
        key: &'a str,
    ) -> Result<(Api<DynamicObject>, &'a str, &'a str)> {
        let (ns, name) = key.split_once('/').unwrap_or((&self.namespace, key));
        check_name("Application", name)?;
        if !self.namespace_enabled(ns) {
            return Err(Error::PermissionDenied(format!(
                "namespace '{ns}' is not permitted"
            )));
        }
        let api = Api::namespaced_with(self.client.clone(), ns, &application_resource());
        Ok((api, ns, name))
    }

    /// Applications of the control namespace.
    pub(crate) fn apps(&self) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            &self.namespace,
            &application_resource(),
        )
    }

    /// AppProjects of the control namespace.
    pub(crate) fn projects(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), &self.namespace, &appproject_resource())
    }

    /// The AppProject `name` as Argo's `GetAppProjectByName` builds it (the repositories and
    /// clusters scoped to it added, [`plumb_app::project_scope`]); `None` when it does not exist.
    pub(crate) async fn scoped_project(
        &self,
        name: &str,
    ) -> Result<Option<plumb_app::ScopedProject>> {
        match plumb_app::project_scope::read(&self.client, &self.namespace, name).await {
            Ok(found) => Ok(found),
            Err(plumb_app::Error::Api { what, source }) => Err(Error::kube(what, *source)),
            Err(e) => Err(Error::FailedPrecondition(plumb_app::chain(&e))),
        }
    }

    /// The raw Application object, as the API server returns it (`key`: [`Inner::app_key`]).
    pub(crate) async fn app_object(&self, key: &str) -> Result<DynamicObject> {
        let (api, ns, name) = self.apps_for(key)?;
        api.get(name).await.map_err(|e| {
            not_found_or(
                e,
                &format!("applications.argoproj.io \"{name}\" not found"),
                || format!("reading Application {ns}/{name}"),
            )
        })
    }

    /// The typed Application.
    pub(crate) async fn app(&self, name: &str) -> Result<(DynamicObject, Application)> {
        let obj = self.app_object(name).await?;
        let app = to_application(&obj)?;
        Ok((obj, app))
    }

    /// The settings ConfigMap's data; empty settings when it does not exist.
    pub(crate) async fn settings(&self) -> Result<Settings> {
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.client.clone(),
            &self.namespace,
            &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
        );
        match api.get_opt(SETTINGS_CONFIGMAP).await {
            Ok(Some(cm)) => Ok(Settings::from_config_map(&to_value(&cm)?)),
            Ok(None) => Ok(Settings::default()),
            Err(e) => Err(Error::kube(
                format!("reading ConfigMap {}/{SETTINGS_CONFIGMAP}", self.namespace),
                e,
            )),
        }
    }

    /// The engines (health, diff, tracking) of the current settings.
    pub(crate) async fn engines(&self) -> Result<Engines> {
        let settings = self.settings().await?;
        Engines::new(settings, &self.namespace, &self.customizations).map_err(|e| {
            Error::Internal(format!(
                "reading ConfigMap {}/{SETTINGS_CONFIGMAP}: {}",
                self.namespace,
                plumb_app::chain(&e)
            ))
        })
    }

    /// The in-cluster destination, discovered once.
    pub(crate) async fn cluster(&self) -> Result<Arc<Cluster>> {
        self.cluster
            .get_or_try_init(|| async {
                Cluster::connect(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, self.client.clone())
                    .await
                    .map(Arc::new)
                    .map_err(|e| {
                        Error::Internal(format!(
                            "discovering the cluster's API: {}",
                            plumb_app::chain(&e)
                        ))
                    })
            })
            .await
            .cloned()
    }
}

impl AppState {
    /// The cluster `destination` names: this server's own, or one an Argo CD cluster Secret of
    /// the control namespace describes (by server URL, else by name), reached with the
    /// Secret's credentials as the controller reaches it. FailedPrecondition when no cluster
    /// matches.
    pub(crate) async fn cluster_of(
        &self,
        destination: &plumb_model::application::ApplicationDestination,
    ) -> Result<Arc<Cluster>> {
        let own = self.cluster().await?;
        let (server, name) = (
            destination.server.as_deref().filter(|s| !s.is_empty()),
            destination.name.as_deref().filter(|n| !n.is_empty()),
        );
        if own.is_destination(server, name) {
            return Ok(own);
        }
        let secrets: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(self.client.clone(), &self.namespace);
        let list = secrets
            .list(&kube::api::ListParams::default().labels(plumb_app::CLUSTER_SECRET_LABEL))
            .await
            .map_err(|e| {
                Error::kube(
                    format!("listing cluster Secrets in namespace {}", self.namespace),
                    e,
                )
            })?;
        let found = list
            .items
            .iter()
            .filter_map(plumb_app::ClusterSecret::from_secret)
            .find(|c| match server {
                Some(s) => c.server.trim_end_matches('/') == s.trim_end_matches('/'),
                None => Some(c.name.as_str()) == name,
            });
        let Some(secret) = found else {
            return Err(Error::FailedPrecondition(format!(
                "no cluster Secret in namespace {} describes the destination {}",
                self.namespace,
                server.or(name).unwrap_or_default()
            )));
        };
        let known = self
            .remote_clusters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&secret.server)
            .filter(|(version, _)| *version == secret.version)
            .map(|(_, c)| c.clone());
        if let Some(cluster) = known {
            return Ok(cluster);
        }
        let unreachable = |e: plumb_app::Error| {
            Error::FailedPrecondition(format!(
                "cluster {} ({}): {}",
                secret.name,
                secret.server,
                plumb_app::chain(&e)
            ))
        };
        let scope = secret.cluster_scope().map_err(unreachable)?;
        let client = secret.client().await.map_err(unreachable)?;
        let mut cluster = Cluster::connect(&secret.server, &secret.name, client)
            .await
            .map_err(unreachable)?;
        cluster.scope = scope;
        let cluster = Arc::new(cluster);
        self.remote_clusters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                secret.server.clone(),
                (secret.version.clone(), cluster.clone()),
            );
        Ok(cluster)
    }
}

/// A state for unit tests of the routing: its Kubernetes client fails every call, and nothing
/// is read at construction.
#[cfg(test)]
pub(crate) fn test_state(
    cache_dir: &std::path::Path,
    auth: Option<Arc<crate::auth::Auth>>,
) -> AppState {
    use kube::client::Body;
    let unreachable = tower::service_fn(|_: axum::http::Request<Body>| async {
        Err::<axum::http::Response<Body>, _>(std::io::Error::other("no cluster in unit tests"))
    });
    let client = kube::Client::new(unreachable, "argocd");
    let renderer = Renderer::new(plumb_source::Config::new(cache_dir)).expect("renderer");
    let (_, shutdown) = watch::channel(false);
    AppState::new(client, "argocd".into(), Arc::new(renderer), shutdown, auth)
}

/// Refuses anything but a Kubernetes object name (a DNS subdomain: lower-case letters, digits,
/// `-` and `.`, at most 253): a name goes into the API server's URL path, and `../` or `/` in
/// it would reach other resources with the server's own rights.
pub(crate) fn check_name(kind: &str, name: &str) -> Result<()> {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
    let ok_end = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !name.is_empty()
        && name.len() <= 253
        && name.chars().all(ok_char)
        && ok_end(name.chars().next())
        && ok_end(name.chars().last())
    {
        return Ok(());
    }
    let shown: String = name
        .chars()
        .take(64)
        .collect::<String>()
        .escape_debug()
        .to_string();
    Err(Error::InvalidArgument(format!(
        "{kind} name \"{shown}\" is not a valid Kubernetes object name (lower-case letters, digits, '-' and '.', at most 253)"
    )))
}

/// A 404 as NotFound with Argo's message, anything else as a Kubernetes error with `context`.
pub(crate) fn not_found_or(
    e: kube::Error,
    not_found: &str,
    context: impl FnOnce() -> String,
) -> Error {
    match &e {
        kube::Error::Api(s) if s.code == 404 => Error::NotFound(not_found.to_string()),
        _ => Error::kube(context(), e),
    }
}

/// Any serializable object as JSON.
pub(crate) fn to_value(obj: &impl serde::Serialize) -> Result<serde_json::Value> {
    serde_json::to_value(obj).map_err(|e| Error::Internal(format!("encoding an object: {e}")))
}

/// The typed Application of an API object.
pub(crate) fn to_application(obj: &DynamicObject) -> Result<Application> {
    let name = obj.metadata.name.clone().unwrap_or_default();
    serde_json::from_value(to_value(obj)?)
        .map_err(|e| Error::Internal(format!("reading Application {name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::check_name;

    #[test]
    fn names_that_could_leave_the_url_path_are_refused() {
        for ok in ["payments-api", "a", "app.v2", "x1"] {
            assert!(check_name("Application", ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../secrets",
            "a/b",
            "..",
            "A",
            "-a",
            "a-",
            "a b",
            "a%2Fb",
            "a?x=1",
            &"a".repeat(254),
        ] {
            assert!(check_name("Application", bad).is_err(), "{bad}");
        }
    }
}
