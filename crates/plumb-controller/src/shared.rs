//! The state the controller's tasks share ([`Shared`]: configuration, engines, clusters, running
//! operations, automation memory, the work queue) and the Application writes every step makes
//! through it (status, `.operation`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use plumb_model::application::Application;
use plumb_model::settings::{RECONCILIATION_JITTER, RECONCILIATION_TIMEOUT};
use plumb_source::Renderer;
use plumb_sync::Control;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::config::{ControllerConfig, parse_duration};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::watched::Watched;
use plumb_app::application_resource;
use plumb_app::status::StatusPatch;
use plumb_app::{Cluster, Engines};
use plumb_app::{Error, Result};

/// A cluster from a cluster Secret: the Secret as read, the connection, its live cache task.
pub(crate) type RemoteCluster = (
    plumb_app::clusters::ClusterSecret,
    Arc<Cluster>,
    tokio::task::JoinHandle<()>,
);

/// The least time between two status writes by reconciles while this process runs the
/// Application's operation ([`Shared::pace_status`]).
pub(crate) const STATUS_PACE: Duration = Duration::from_secs(5);

/// State shared by the watchers and workers.
pub(crate) struct Shared {
    pub(crate) config: ControllerConfig,
    pub(crate) client: kube::Client,
    pub(crate) renderer: Arc<Renderer>,
    pub(crate) events: Events,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) engines: RwLock<Arc<Engines>>,
    pub(crate) in_cluster: Arc<Cluster>,
    /// Clusters from Argo cluster Secrets, with the task driving each one's live cache.
    pub(crate) remote: RwLock<Vec<RemoteCluster>>,
    /// Operations running in this process, with the channel that tells each one to stop.
    pub(crate) running_ops: Mutex<HashMap<String, watch::Sender<Control>>>,
    /// While this process runs an Application's operation: when its status was last written by
    /// a reconcile (or the operation began applying). See [`Shared::pace_status`].
    pub(crate) status_paced: Mutex<HashMap<String, Instant>>,
    /// When the watcher last saw a refresh requested for each Application (the refresh
    /// annotation set or changed): a Git listing begun since answers it.
    pub(crate) refresh_seen: Mutex<HashMap<String, Instant>>,
    /// One permit per operation processor: an operation holds one while it runs.
    pub(crate) operation_slots: Arc<tokio::sync::Semaphore>,
    /// Automated attempts started again after a failure: Application → (revision, count).
    pub(crate) auto_failures: Mutex<HashMap<String, (String, u32)>>,
    /// The pending delayed reconcile of each Application.
    pub(crate) wakes: Mutex<HashMap<String, Instant>>,
    /// The last automation skip reported per Application (so each is said once).
    pub(crate) last_skip: Mutex<HashMap<String, String>>,
    /// Keys (`namespace/name`) of the Applications reconciled, kept by the Application watcher.
    pub(crate) known_apps: Mutex<std::collections::BTreeSet<String>>,
    /// The namespaces besides the control namespace whose Applications are reconciled (patterns,
    /// resolved from the configuration or `argocd-cmd-params-cm` at start).
    pub(crate) app_namespaces: Vec<String>,
    pub(crate) queue: Queue,
    /// This replica's part when several share the work (`None`: one replica does everything).
    pub(crate) sharding: Option<Arc<crate::sharding::Sharding>>,
    /// Applications and AppProjects as the watches last saw them.
    pub(crate) watched: Watched,
    /// Woken when a watch fails: discovery runs again (a group may have gone).
    pub(crate) rediscover: tokio::sync::Notify,
}

impl Shared {
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

    pub(crate) fn cluster_for(&self, app: &Application) -> Option<Arc<Cluster>> {
        let d = &app.spec.destination;
        let (server, name) = (d.server.as_deref(), d.name.as_deref());
        if self.in_cluster.is_destination(server, name) {
            return Some(self.in_cluster.clone());
        }
        self.remote
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(_, c, _)| c.is_destination(server, name))
            .map(|(_, c, _)| c.clone())
    }

    pub(crate) fn is_running(&self, name: &str) -> bool {
        self.running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(name)
    }

    /// Registers a starting operation; its control follows the Application from now on.
    pub(crate) fn refresh_asked(&self, name: &str) {
        self.refresh_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), Instant::now());
    }

    /// When a refresh of `name` was asked for, if the watcher saw one.
    pub(crate) fn refresh_asked_at(&self, name: &str) -> Option<Instant> {
        self.refresh_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied()
    }

    pub(crate) fn start_operation(&self, name: &str) -> watch::Receiver<Control> {
        let (tx, rx) = watch::channel(Control::default());
        self.running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), tx);
        rx
    }

    pub(crate) fn end_operation(&self, name: &str) {
        self.running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.status_paced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// The operation of `name` begins (or began again) to apply: reconciles' status writes are
    /// paced from now on.
    pub(crate) fn operation_applying(&self, name: &str) {
        self.status_paced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), Instant::now());
    }

    /// How long a reconcile of `name`, whose operation this process runs, should wait before it
    /// compares at all (`None`: now). While the sync applies, each object it writes wakes a
    /// reconcile; comparing then would only find a status it may not write yet, and would
    /// dry-run objects whose apply answer has not arrived (the watch is often faster).
    pub(crate) fn status_wait(&self, name: &str) -> Option<Duration> {
        let now = Instant::now();
        self.status_paced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(|last| *last + STATUS_PACE)
            .filter(|at| *at > now)
            .map(|at| at - now)
    }

    /// Whether a reconcile may write the status of `name`, whose operation this process runs,
    /// now (`None`, and the write is counted) or only after the returned wait. While a sync
    /// applies, every object it writes wakes a reconcile whose status differs from the last by
    /// one object; the operation writes its own progress and, at its end, the status with its
    /// result, so the reconciles' intermediate states are written at most once per
    /// [`STATUS_PACE`] (issue #17: about four Application writes per app of a cold start).
    pub(crate) fn pace_status(&self, name: &str) -> Option<Duration> {
        let now = Instant::now();
        let mut paced = self.status_paced.lock().unwrap_or_else(|e| e.into_inner());
        match paced.get(name) {
            Some(last) if now < *last + STATUS_PACE => Some(*last + STATUS_PACE - now),
            _ => {
                paced.insert(name.to_string(), now);
                None
            }
        }
    }

    /// Passes terminate requests and deletion approvals to a running operation.
    pub(crate) fn update_control(&self, name: &str, c: Control) {
        if let Some(tx) = self
            .running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            tx.send_if_modified(|cur| {
                let changed = *cur != c;
                *cur = c;
                changed
            });
        }
    }

    /// Stops every operation running here (this replica lost its Lease: another one now
    /// counts it dead and fails them as interrupted, so they must not go on writing).
    pub(crate) fn terminate_all(&self) {
        for tx in self
            .running_ops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            tx.send_if_modified(|c| !std::mem::replace(&mut c.terminate, true));
        }
    }

    /// Whether this replica reconciles the Application `key` (always, with one replica).
    pub(crate) fn owns(&self, key: &str) -> bool {
        self.sharding.as_ref().is_none_or(|s| s.owns(key))
    }

    pub(crate) fn requeue(&self, name: &str) {
        self.queue.push(name);
    }

    /// Reconciles the Application again after `after`. One wake-up per Application is kept
    /// (the earliest): a blocked Application reconciled often does not pile up sleeping tasks.
    pub(crate) fn requeue_after(&self, name: &str, after: Duration) {
        let at = Instant::now() + after;
        {
            let mut wakes = self.wakes.lock().unwrap_or_else(|e| e.into_inner());
            if wakes
                .get(name)
                .is_some_and(|t| *t <= at && *t > Instant::now())
            {
                return;
            }
            wakes.insert(name.to_string(), at);
        }
        let queue = self.queue.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            queue.push(&name);
        });
    }

    /// Failed automated attempts started again for `revision` (0 after a revision change).
    pub(crate) fn auto_failures(&self, name: &str, revision: &str) -> u32 {
        let mut m = self.auto_failures.lock().unwrap_or_else(|e| e.into_inner());
        match m.get(name) {
            Some((rev, n)) if rev == revision => *n,
            _ => {
                m.insert(name.to_string(), (revision.to_string(), 0));
                0
            }
        }
    }

    pub(crate) fn count_auto_failure(&self, name: &str) {
        if let Some((_, n)) = self
            .auto_failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(name)
        {
            *n += 1;
        }
    }

    /// Drops what automation remembers of a deleted Application.
    pub(crate) fn forget_automation(&self, name: &str) {
        self.auto_failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.last_skip
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.wakes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// Records a skip message; returns whether it is new for this Application.
    pub(crate) fn note_skip(&self, name: &str, message: &str) -> bool {
        let mut m = self.last_skip.lock().unwrap_or_else(|e| e.into_inner());
        if m.get(name).map(String::as_str) == Some(message) {
            return false;
        }
        m.insert(name.to_string(), message.to_string());
        true
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

/// A deduplicating queue: an Application waits at most once; one queued while it is being
/// reconciled is reconciled again afterwards.
#[derive(Clone)]
pub(crate) struct Queue {
    pub(crate) tx: mpsc::UnboundedSender<String>,
    pub(crate) pending: Arc<Mutex<HashSet<String>>>,
}

impl Queue {
    pub(crate) fn push(&self, name: &str) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = p.insert(name.to_string());
        tracing::trace!(app = name, queued = fresh, "push");
        if fresh {
            // The receiver lives as long as the controller; a send error means we are stopping.
            let _ = self.tx.send(name.to_string());
        }
    }

    pub(crate) fn taken(&self, name: &str) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
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
