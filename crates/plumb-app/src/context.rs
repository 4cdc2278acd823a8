//! What a reconcile works with: the engines built from the settings ConfigMap, and a connection to
//! a destination cluster.

use std::path::PathBuf;
use std::sync::Arc;

use plumb_diff::DiffSettings;
use plumb_health::{Assessor, ClusterFacts, Config as HealthConfig, UnknownKindHealth};
use plumb_kube::{
    ApiCatalog, ApiDiscovery, Applier, ExclusionRule, LiveCacheReader, Tracking, TrackingMethod,
};
use plumb_model::annotations::DEFAULT_INSTANCE_LABEL;
use plumb_model::settings::{EXCLUSIONS, INSTANCE_LABEL_KEY, TRACKING_METHOD, UNKNOWN_KIND_HEALTH};
use plumb_model::{GroupKind, Settings};

use crate::diff_cache::{AppliedAnswers, DiffCache};
use crate::error::{Error, Result};

/// The default control namespace (Argo CD's).
pub const DEFAULT_CONTROL_NAMESPACE: &str = "argocd";
/// The destination server that means "the cluster Plumb's own client points at".
pub const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
/// The destination name of that cluster.
pub const IN_CLUSTER_NAME: &str = "in-cluster";

/// Health, diff and tracking configuration derived from one version of the settings ConfigMap.
pub struct Engines {
    /// The raw settings.
    pub settings: Settings,
    /// Health assessment (built-in rules, Lua customizations, generic rule).
    pub assessor: Assessor,
    /// System-level ignore rules and compare options.
    pub diff: DiffSettings,
    /// How objects are attributed to Applications.
    pub tracking: Tracking,
    /// `resource.exclusions`: kinds the live cache does not watch.
    pub exclusions: Vec<ExclusionRule>,
    /// The namespace holding Applications, AppProjects and settings.
    pub control_namespace: String,
}

impl Engines {
    /// Builds the engines; `customizations` are Argo-layout Lua directories (`--customizations`).
    pub fn new(
        settings: Settings,
        control_namespace: &str,
        customizations: &[PathBuf],
    ) -> Result<Self> {
        let mut health = HealthConfig::default().settings(settings.clone());
        for dir in customizations {
            health = health.customizations_dir(dir.clone());
        }
        if let Some(mode) = settings.get(UNKNOWN_KIND_HEALTH) {
            let mode = match mode.trim() {
                "none" => UnknownKindHealth::None,
                _ => UnknownKindHealth::Generic,
            };
            health = health.unknown_kinds(mode);
        }
        let assessor = Assessor::new(health).map_err(|e| Error::Settings(Box::new(e)))?;
        // The render limits apply to the renderer (`Shared::apply_render_limits`); a bad value
        // rejects the ConfigMap like any other.
        plumb_source::Limits::default()
            .with_settings(&settings)
            .map_err(|e| Error::Settings(Box::new(e)))?;
        let diff =
            DiffSettings::from_settings(&settings).map_err(|e| Error::Settings(Box::new(e)))?;
        let method = settings
            .get(TRACKING_METHOD)
            .and_then(TrackingMethod::parse)
            .unwrap_or_default();
        let tracking = Tracking {
            method,
            instance_label: settings
                .get(INSTANCE_LABEL_KEY)
                .unwrap_or(DEFAULT_INSTANCE_LABEL)
                .to_string(),
        };
        let exclusions = match settings.get(EXCLUSIONS) {
            None => Vec::new(),
            Some(text) => {
                let docs = plumb_yaml::read_documents(text, EXCLUSIONS)
                    .map_err(|e| Error::Settings(Box::new(e)))?;
                match docs.into_iter().next() {
                    None => Vec::new(),
                    Some(d) => serde_json::from_value(d.value).map_err(|e| {
                        Error::Settings(format!("{EXCLUSIONS}: expected a list of {{apiGroups, kinds, clusters}}: {e}").into())
                    })?,
                }
            }
        };
        Ok(Self {
            settings,
            assessor,
            diff,
            tracking,
            exclusions,
            control_namespace: control_namespace.to_string(),
        })
    }
}

/// One destination cluster.
pub struct Cluster {
    /// The server URL Applications name it by.
    pub server: String,
    /// The name Applications name it by.
    pub name: String,
    /// What the API server serves.
    pub discovery: Arc<ApiDiscovery>,
    /// Server-side apply, dry run, get, delete.
    pub applier: Applier,
    /// The live cache, when one runs (the controller); the CLI reads objects directly.
    pub live: Option<LiveCacheReader>,
    /// Server-side diff results, reused until the desired or the live object changes (bounded).
    pub diff_cache: DiffCache,
    /// Answers of this controller's recent applies, which serve as dry runs' answers.
    pub applied: AppliedAnswers,
    /// The namespaces managed (a namespaced cluster's `namespaces` and `clusterResources`):
    /// a comparison refuses objects outside them.
    pub scope: plumb_kube::ClusterScope,
}

/// What the health engine learns about a cluster from its discovery: which kinds have a status
/// subresource (for custom resources whose controller never wrote a status).
pub struct HealthFacts {
    catalog: Arc<ApiCatalog>,
}

impl ClusterFacts for HealthFacts {
    fn status_subresource(&self, group: &str, kind: &str) -> Option<bool> {
        self.catalog
            .resolve(&GroupKind::new(group, kind), None)
            .map(|k| k.status_subresource)
    }
}

/// [`HealthFacts`] that follow discovery as it learns new kinds: a sync reads them while it runs,
/// and a CRD applied by an earlier wave is served by the time its custom resources are judged.
pub struct LiveHealthFacts {
    discovery: Arc<ApiDiscovery>,
}

impl ClusterFacts for LiveHealthFacts {
    fn status_subresource(&self, group: &str, kind: &str) -> Option<bool> {
        self.discovery
            .catalog()
            .resolve(&GroupKind::new(group, kind), None)
            .map(|k| k.status_subresource)
    }
}

impl Cluster {
    /// The facts health assessment needs, from the discovery catalog as it is when a sync runs.
    pub fn live_health_facts(&self) -> LiveHealthFacts {
        LiveHealthFacts {
            discovery: self.discovery.clone(),
        }
    }

    /// The facts health assessment needs, from the current discovery catalog.
    pub fn health_facts(&self) -> HealthFacts {
        HealthFacts {
            catalog: self.discovery.catalog(),
        }
    }

    /// A cluster reached through `client`, without a live cache.
    pub async fn connect(server: &str, name: &str, client: kube::Client) -> Result<Self> {
        let discovery = Arc::new(ApiDiscovery::new(client).await?);
        Ok(Self {
            server: server.to_string(),
            name: name.to_string(),
            applier: Applier::new(discovery.clone()),
            discovery,
            live: None,
            diff_cache: DiffCache::default(),
            applied: AppliedAnswers::default(),
            scope: plumb_kube::ClusterScope::whole_cluster(),
        })
    }

    /// The kube client.
    pub fn client(&self) -> &kube::Client {
        self.discovery.client()
    }

    /// Whether an Application destination names this cluster.
    pub fn is_destination(&self, server: Option<&str>, name: Option<&str>) -> bool {
        match (
            server.filter(|s| !s.is_empty()),
            name.filter(|n| !n.is_empty()),
        ) {
            (Some(s), _) => s.trim_end_matches('/') == self.server.trim_end_matches('/'),
            (None, Some(n)) => n == self.name,
            (None, None) => false,
        }
    }
}
