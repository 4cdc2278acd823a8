//! The destination clusters: the in-cluster one, those of Argo cluster Secrets with the task
//! driving each one's live cache, and the signal that runs discovery again.

use std::sync::{Arc, RwLock};

use plumb_app::Cluster;
use plumb_model::application::Application;

/// A cluster from a cluster Secret: the Secret as read, the connection, its live cache task.
pub(crate) type RemoteCluster = (
    plumb_app::clusters::ClusterSecret,
    Arc<Cluster>,
    tokio::task::JoinHandle<()>,
);

/// Whether a cluster Secret narrows the in-cluster destination (Argo's namespaced install),
/// which Plumb does not support.
pub(crate) fn is_in_cluster_narrowed(s: &plumb_app::clusters::ClusterSecret) -> bool {
    s.server.trim_end_matches('/') == plumb_app::IN_CLUSTER_SERVER && !s.namespaces.is_empty()
}

/// Every destination this controller reaches.
pub(crate) struct Clusters {
    pub(crate) in_cluster: Arc<Cluster>,
    /// Clusters from Argo cluster Secrets, with the task driving each one's live cache.
    pub(crate) remote: RwLock<Vec<RemoteCluster>>,
    /// Woken when a watch fails: discovery runs again (a group may have gone).
    pub(crate) rediscover: tokio::sync::Notify,
    /// Every valid cluster Secret, attached or not (a project-scoped one names its project's
    /// clusters even while it cannot be reached, or for the in-cluster destination).
    pub(crate) secrets: RwLock<Vec<plumb_app::clusters::ClusterSecret>>,
    /// Clusters whose Secret cannot be used now, with why (tried again periodically).
    pub(crate) failed: RwLock<Vec<(plumb_app::clusters::ClusterSecret, String)>>,
}

impl Clusters {
    /// The in-cluster destination alone (cluster Secrets are attached as the watcher sees them).
    pub(crate) fn new(in_cluster: Cluster) -> Self {
        Self {
            in_cluster: Arc::new(in_cluster),
            remote: RwLock::new(Vec::new()),
            rediscover: tokio::sync::Notify::new(),
            secrets: RwLock::new(Vec::new()),
            failed: RwLock::new(Vec::new()),
        }
    }

    /// The Application's destination cluster, if configured.
    pub(crate) fn of(&self, app: &Application) -> Option<Arc<Cluster>> {
        let d = &app.spec.destination;
        let (server, name) = (d.server.as_deref(), d.name.as_deref());
        if self.in_cluster.is_destination(server, name) {
            // Fail closed: the in-cluster destination is the controller's own connection,
            // watched whole; a Secret that narrows it to namespaces cannot be honoured, so its
            // Applications are refused (`failure_of` says why) rather than managed wider.
            return (!self.in_cluster_narrowed()).then(|| self.in_cluster.clone());
        }
        self.remote
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(_, c, _)| c.is_destination(server, name))
            .map(|(_, c, _)| c.clone())
    }

    /// Whether a cluster Secret names the in-cluster URL with `namespaces`.
    fn in_cluster_narrowed(&self) -> bool {
        self.secrets
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(is_in_cluster_narrowed)
    }

    /// Why the Application's destination cluster cannot be used, when its Secret is known but
    /// the connection failed (a malformed `config`, an exec plugin that failed, ...).
    pub(crate) fn failure_of(&self, app: &Application) -> Option<String> {
        let d = &app.spec.destination;
        let (server, name) = (
            d.server.as_deref().filter(|s| !s.is_empty()),
            d.name.as_deref().filter(|n| !n.is_empty()),
        );
        self.failed
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(s, _)| match (server, name) {
                (Some(v), _) => v.trim_end_matches('/') == s.server.trim_end_matches('/'),
                (None, Some(n)) => n == s.name,
                (None, None) => false,
            })
            .map(|(_, why)| why.clone())
    }
}
