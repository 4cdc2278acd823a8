//! The destination clusters: the in-cluster one, those of Argo cluster Secrets with the task
//! driving each one's live cache, and the signal that runs discovery again.

use std::sync::{Arc, RwLock};

use plumb_app::clusters::ClusterSecret;
use plumb_app::{Cluster, IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use plumb_model::application::Application;

/// A cluster from a cluster Secret: the Secret as read, the connection, its live cache task.
pub(crate) type RemoteCluster = (ClusterSecret, Arc<Cluster>, tokio::task::JoinHandle<()>);

/// Whether a cluster Secret names the in-cluster URL (Argo's `KubernetesInternalAPIServerAddr`):
/// such a Secret configures the controller's own connection (its `namespaces` narrow what is
/// watched and managed) instead of adding a cluster.
pub(crate) fn names_in_cluster(s: &ClusterSecret) -> bool {
    s.server.trim_end_matches('/') == IN_CLUSTER_SERVER
}

/// What the settings and the cluster Secrets make of the in-cluster destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InClusterWant {
    /// `cluster.inClusterEnabled: "false"` in argocd-cm: no in-cluster destination at all.
    Disabled,
    /// Watched and managed within this scope (the whole cluster without a Secret's
    /// `namespaces`).
    Scoped(plumb_kube::ClusterScope),
    /// The Secrets for the in-cluster URL cannot be honoured (why): fail closed, nothing is
    /// watched or managed there.
    Unusable(String),
}

impl InClusterWant {
    /// From `cluster.inClusterEnabled` and the cluster Secrets (sorted by Secret name). Several
    /// Secrets for the in-cluster URL that disagree on the scope are refused rather than one
    /// picked (Argo's informer would take whichever it indexed last).
    pub(crate) fn of(enabled: bool, secrets: &[ClusterSecret]) -> Self {
        if !enabled {
            return Self::Disabled;
        }
        let mut scopes = Vec::new();
        for s in secrets.iter().filter(|s| names_in_cluster(s)) {
            match s.cluster_scope() {
                Ok(scope) => scopes.push(scope),
                Err(e) => return Self::Unusable(plumb_app::chain(&e)),
            }
        }
        scopes.dedup();
        match scopes.as_slice() {
            [] => Self::Scoped(plumb_kube::ClusterScope::whole_cluster()),
            [one] => Self::Scoped(one.clone()),
            _ => Self::Unusable(format!(
                "cluster {IN_CLUSTER_SERVER}: several cluster Secrets name it with different namespaces or clusterResources"
            )),
        }
    }
}

/// Whether `cluster.inClusterEnabled` in argocd-cm leaves the in-cluster destination on
/// (Argo's `IsInClusterEnabled`: anything but the exact text "false").
pub(crate) fn in_cluster_enabled(settings: &plumb_model::Settings) -> bool {
    settings.get("cluster.inClusterEnabled") != Some("false")
}

/// The in-cluster destination as it is now: what was asked for, and the connection with its
/// live cache when there is one.
pub(crate) struct InCluster {
    pub(crate) want: InClusterWant,
    pub(crate) cluster: Option<Arc<Cluster>>,
    /// Drives the live cache's events; aborted when the destination is rebuilt.
    pub(crate) task: Option<tokio::task::JoinHandle<()>>,
}

/// Every destination this controller reaches.
pub(crate) struct Clusters {
    /// Rebuilt when the Secrets for the in-cluster URL or `cluster.inClusterEnabled` change.
    pub(crate) in_cluster: RwLock<InCluster>,
    /// Clusters from Argo cluster Secrets, with the task driving each one's live cache.
    pub(crate) remote: RwLock<Vec<RemoteCluster>>,
    /// Woken when a watch fails: discovery runs again (a group may have gone).
    pub(crate) rediscover: tokio::sync::Notify,
    /// Woken when the settings change: the cluster watcher decides the in-cluster destination
    /// again (`cluster.inClusterEnabled`).
    pub(crate) settings_changed: tokio::sync::Notify,
    /// Every valid cluster Secret, attached or not (a project-scoped one names its project's
    /// clusters even while it cannot be reached, or for the in-cluster destination).
    pub(crate) secrets: RwLock<Vec<ClusterSecret>>,
    /// Clusters whose Secret cannot be used now, with why (tried again periodically).
    pub(crate) failed: RwLock<Vec<(ClusterSecret, String)>>,
}

/// Whether an Application destination names the in-cluster destination.
fn is_in_cluster_destination(server: Option<&str>, name: Option<&str>) -> bool {
    match (
        server.filter(|s| !s.is_empty()),
        name.filter(|n| !n.is_empty()),
    ) {
        (Some(s), _) => s.trim_end_matches('/') == IN_CLUSTER_SERVER,
        (None, Some(n)) => n == IN_CLUSTER_NAME,
        (None, None) => false,
    }
}

impl Clusters {
    /// No destination yet: start-up sets the in-cluster one once it knows its scope, and
    /// cluster Secrets are attached as the watcher sees them.
    pub(crate) fn new(want: InClusterWant, secrets: Vec<ClusterSecret>) -> Self {
        Self {
            in_cluster: RwLock::new(InCluster {
                want,
                cluster: None,
                task: None,
            }),
            remote: RwLock::new(Vec::new()),
            rediscover: tokio::sync::Notify::new(),
            settings_changed: tokio::sync::Notify::new(),
            secrets: RwLock::new(secrets),
            failed: RwLock::new(Vec::new()),
        }
    }

    /// The in-cluster connection, when it is enabled and usable.
    pub(crate) fn in_cluster(&self) -> Option<Arc<Cluster>> {
        self.in_cluster
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .cluster
            .clone()
    }

    /// The Application's destination cluster, if configured.
    pub(crate) fn of(&self, app: &Application) -> Option<Arc<Cluster>> {
        let d = &app.spec.destination;
        let (server, name) = (d.server.as_deref(), d.name.as_deref());
        if is_in_cluster_destination(server, name) {
            // Fail closed: disabled or unusable, the in-cluster destination has no connection
            // (`in_cluster_refusal` says why) and is never reached through a remote attach.
            return self.in_cluster();
        }
        self.remote
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(_, c, _)| c.is_destination(server, name))
            .map(|(_, c, _)| c.clone())
    }

    /// Why an Application to the in-cluster destination is refused: Argo's `GetCluster` error
    /// when `cluster.inClusterEnabled` is "false" (the whole condition message, as
    /// `ValidatePermissions` writes it), or why the Secrets narrowing it cannot be honoured.
    pub(crate) fn in_cluster_refusal(&self, app: &Application) -> Option<String> {
        let d = &app.spec.destination;
        let server = d.server.as_deref().filter(|s| !s.is_empty());
        if !is_in_cluster_destination(server, d.name.as_deref()) {
            return None;
        }
        let state = self.in_cluster.read().unwrap_or_else(|e| e.into_inner());
        let prefix = match server {
            Some(s) => format!("error getting cluster by server {s:?}"),
            None => "error getting cluster by URL".to_string(),
        };
        match &state.want {
            InClusterWant::Disabled => Some(format!(
                "{prefix}: rpc error: code = NotFound desc = cluster {IN_CLUSTER_SERVER:?} is disabled"
            )),
            InClusterWant::Unusable(why) => Some(format!(
                "application destination cluster {IN_CLUSTER_SERVER:?} cannot be used: {why}"
            )),
            InClusterWant::Scoped(_) => None,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Secret;

    fn secret(name: &str, data: &[(&str, &str)]) -> ClusterSecret {
        let s: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "data": data
                .iter()
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(
                    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, v),
                )))
                .collect::<serde_json::Map<_, _>>(),
        }))
        .expect("secret");
        ClusterSecret::from_secret(&s).expect("cluster secret")
    }

    #[test]
    fn the_in_cluster_secret_decides_the_scope_and_disagreement_fails_closed() {
        let remote = secret("r", &[("server", "https://remote"), ("namespaces", "x")]);
        assert_eq!(
            InClusterWant::of(true, std::slice::from_ref(&remote)),
            InClusterWant::Scoped(plumb_kube::ClusterScope::whole_cluster()),
            "a remote cluster's namespaces do not narrow the in-cluster destination"
        );
        let narrow = secret(
            "a",
            &[
                ("server", "https://kubernetes.default.svc/"),
                ("namespaces", "argocd, ,apps"),
            ],
        );
        let want = InClusterWant::of(true, &[remote.clone(), narrow.clone()]);
        assert_eq!(
            want,
            InClusterWant::Scoped(plumb_kube::ClusterScope::namespaced(
                &["argocd".into(), "apps".into()],
                false
            ))
        );
        assert_eq!(
            InClusterWant::of(false, std::slice::from_ref(&narrow)),
            InClusterWant::Disabled
        );
        let other = secret(
            "b",
            &[
                ("server", "https://kubernetes.default.svc"),
                ("namespaces", "argocd"),
            ],
        );
        assert!(matches!(
            InClusterWant::of(true, &[narrow, other]),
            InClusterWant::Unusable(_)
        ));
        let bad = secret(
            "c",
            &[
                ("server", "https://kubernetes.default.svc"),
                ("namespaces", "../x"),
            ],
        );
        match InClusterWant::of(true, &[bad]) {
            InClusterWant::Unusable(why) => assert!(why.contains("namespaces"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_the_exact_text_false_disables_the_in_cluster_destination() {
        let with = |v: &str| {
            plumb_model::Settings::from_data(
                [("cluster.inClusterEnabled".to_string(), v.to_string())].into(),
            )
        };
        assert!(in_cluster_enabled(&plumb_model::Settings::default()));
        assert!(!in_cluster_enabled(&with("false")));
        assert!(in_cluster_enabled(&with("False")));
        assert!(in_cluster_enabled(&with("true")));
    }
}
