//! The state the controller's tasks share ([`Shared`]), split by what each part holds: the
//! configuration and engines (here), the destination clusters ([`clusters`]), the operations
//! running in this process ([`operations`]), what is remembered of each Application
//! ([`memory`]) and the work queue ([`queue`]); and the Application writes every step makes
//! through it (status, `.operation`).

mod clusters;
mod memory;
mod operations;
mod queue;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use plumb_model::application::Application;
use plumb_model::settings::{RECONCILIATION_JITTER, RECONCILIATION_TIMEOUT};
use plumb_source::Renderer;
use serde_json::{Value, json};

pub(crate) use clusters::{
    Clusters, InClusterWant, RemoteCluster, in_cluster_enabled, names_in_cluster,
};
pub(crate) use memory::AppMemory;
pub(crate) use operations::Operations;
pub(crate) use queue::Queue;

use crate::config::{ControllerConfig, parse_duration};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::watched::Watched;
use plumb_app::Engines;
use plumb_app::application_resource;
use plumb_app::status::StatusPatch;
use plumb_app::{Error, Result};

/// State shared by the watchers and workers.
pub(crate) struct Shared {
    /// How this controller was started.
    pub(crate) config: ControllerConfig,
    pub(crate) client: kube::Client,
    pub(crate) renderer: Arc<Renderer>,
    pub(crate) events: Events,
    pub(crate) metrics: Arc<Metrics>,
    /// The engines the settings configure, replaced when the settings change.
    pub(crate) engines: RwLock<Arc<Engines>>,
    /// The namespaces besides the control namespace whose Applications are reconciled (patterns,
    /// resolved from the configuration or `argocd-cmd-params-cm` at start).
    pub(crate) app_namespaces: Vec<String>,
    /// This replica's part when several share the work (`None`: one replica does everything).
    pub(crate) sharding: Option<Arc<crate::sharding::Sharding>>,
    pub(crate) clusters: Clusters,
    pub(crate) operations: Operations,
    pub(crate) memory: AppMemory,
    pub(crate) queue: Queue,
    /// Applications and AppProjects as the watches last saw them.
    pub(crate) watched: Watched,
}

impl Shared {
    /// What belongs to `project` (Argo CD's project-scoped repositories and clusters): the URLs
    /// of repository Secrets and the cluster Secrets whose `project` key names it.
    pub(crate) fn project_scope(
        &self,
        project: &str,
    ) -> plumb_policy::project::scoped::ProjectScope {
        let secrets = self
            .clusters
            .secrets
            .read()
            .unwrap_or_else(|e| e.into_inner());
        plumb_app::project_scope::scope(
            project,
            self.renderer.scoped_repositories(project),
            &secrets,
        )
    }

    /// The Applications of `namespace` (an Application's own namespace: every read and write
    /// of an Application goes there).
    pub(crate) fn apps_api_in(&self, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), namespace, &application_resource())
    }

    /// What the Application watcher lists: the control namespace alone, or every namespace
    /// when others are permitted (filtered by [`Shared::namespace_enabled`]). One cluster-wide
    /// watch rather than one per namespace, as Argo CD does: the patterns may be globs or
    /// regular expressions matching namespaces created later, which per-namespace watches would
    /// miss without a second watch on Namespaces.
    pub(crate) fn apps_watch_api(&self) -> Api<DynamicObject> {
        if self.app_namespaces.is_empty() {
            self.apps_api_in(&self.config.control_namespace)
        } else {
            Api::all_with(self.client.clone(), &application_resource())
        }
    }

    /// Whether Applications in `namespace` are reconciled: the control namespace, or one the
    /// configured patterns match (Argo's `IsNamespaceEnabled`). Others are never touched.
    pub(crate) fn namespace_enabled(&self, namespace: &str) -> bool {
        namespace == self.config.control_namespace
            || plumb_policy::project::namespace_in_list(&self.app_namespaces, namespace)
    }

    /// The queue key of the Application that tracks objects under `instance` (its instance
    /// name: `name` in the control namespace, `namespace_name` elsewhere; neither a namespace
    /// nor a name can contain `_`).
    pub(crate) fn key_of_instance(&self, instance: &str) -> String {
        match instance.split_once('_') {
            Some((ns, name)) => format!("{ns}/{name}"),
            None => format!("{}/{instance}", self.config.control_namespace),
        }
    }

    pub(crate) fn engines(&self) -> Arc<Engines> {
        self.engines
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether this replica reconciles the Application `key` (always, with one replica).
    pub(crate) fn owns(&self, key: &str) -> bool {
        self.sharding.as_ref().is_none_or(|s| s.owns(key))
    }

    /// Drops what is remembered of a deleted Application, and its pending wake-up.
    pub(crate) fn forget(&self, name: &str) {
        self.memory.forget_automation(name);
        self.queue.forget(name);
    }

    pub(crate) fn poll_interval(&self) -> Duration {
        parse_duration(self.engines().settings.get(RECONCILIATION_TIMEOUT))
            .unwrap_or(Duration::from_secs(120))
    }

    pub(crate) fn jitter(&self) -> Duration {
        parse_duration(self.engines().settings.get(RECONCILIATION_JITTER))
            .unwrap_or(Duration::from_secs(60))
    }
}

/// The key of an Application in the work queue and in the controller's memory: `namespace/name`.
pub(crate) fn app_key(app: &Application) -> String {
    format!("{}/{}", app.namespace(), app.name())
}

/// The writes every step makes to an Application: its status (a merge patch on the status
/// subresource), its `.operation` (cleared when an operation ends or is refused) and other merge
/// patches. Each answer's resourceVersion is remembered until the watch shows it.
impl Shared {
    pub(crate) async fn write_status(&self, app: &Application, fields: StatusPatch) -> Result<()> {
        let patch = json!({"status": fields});
        let written = self
            .apps_api_in(app.namespace())
            .patch_status(app.name(), &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| Error::Api {
                what: format!("writing the status of Application {}", app_key(app)),
                source: Box::new(source),
            })?;
        self.watched
            .wrote(&app_key(app), written.metadata.resource_version.as_deref());
        Ok(())
    }

    /// The Application as the watch last saw it (the API server's copy when the watch cannot
    /// tell); `None` once it is gone.
    pub(crate) async fn read_app(&self, key: &str) -> Result<Option<Application>> {
        let namespace = key.split_once('/').map(|(ns, _)| ns).unwrap_or_default();
        crate::watched::read_app(&self.watched, self.apps_api_in(namespace), key).await
    }

    pub(crate) async fn clear_operation(&self, app: &Application) -> Result<()> {
        self.patch_app(
            app,
            &json!({"operation": null}),
            "clearing the operation of Application",
        )
        .await
    }

    /// A merge patch of the Application; `what` names the write in an error (`... <key>`).
    pub(crate) async fn patch_app(
        &self,
        app: &Application,
        patch: &Value,
        what: &str,
    ) -> Result<()> {
        self.try_patch_app(app, patch)
            .await
            .map(|_| ())
            .map_err(|source| Error::Api {
                what: format!("{what} {}", app_key(app)),
                source: Box::new(source),
            })
    }

    /// [`Shared::patch_app`] with the API server's error as it came (a caller handles 409).
    pub(crate) async fn try_patch_app(
        &self,
        app: &Application,
        patch: &Value,
    ) -> std::result::Result<DynamicObject, kube::Error> {
        let written = self
            .apps_api_in(app.namespace())
            .patch(app.name(), &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        self.watched
            .wrote(&app_key(app), written.metadata.resource_version.as_deref());
        Ok(written)
    }
}
