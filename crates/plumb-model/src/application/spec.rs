//! `Application.spec`: what to deploy, where, and how to keep it in sync.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::source::ApplicationSource;

/// The desired state of an Application.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSpec {
    /// The single source of manifests (exclusive with `sources`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ApplicationSource>,
    /// The cluster and namespace to deploy to.
    pub destination: ApplicationDestination,
    /// The AppProject this Application belongs to.
    pub project: String,
    /// When and how to sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_policy: Option<SyncPolicy>,
    /// Differences to leave out of the comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[doc(alias = "ignoreDifferences")]
    pub ignore_differences: Option<Vec<ResourceIgnoreDifferences>>,
    /// Free-form information shown to users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info: Option<Vec<Info>>,
    /// How many entries `status.history` keeps (Argo's default is 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i64>,
    /// Several sources whose manifests are combined (exclusive with `source`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<ApplicationSource>>,
    /// Source hydrator settings (Argo's newer rendered-manifests feature; kept, not acted on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_hydrator: Option<SourceHydrator>,
}

/// Where an Application deploys to: a cluster by `server` URL or by `name`, and a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationDestination {
    /// Cluster API URL (`https://kubernetes.default.svc` is the local cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Namespace for namespaced objects that do not name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Cluster name (`in-cluster` is the local cluster); exclusive with `server`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `spec.syncPolicy`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SyncPolicy {
    /// Automated sync; absent means manual.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub automated: Option<SyncPolicyAutomated>,
    /// Sync options (`CreateNamespace=true`, `ServerSideApply=true`, `PruneLast=true`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_options: Option<Vec<String>>,
    /// How failed syncs are retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryStrategy>,
    /// Labels and annotations for the namespace created by `CreateNamespace=true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_namespace_metadata: Option<ManagedNamespaceMetadata>,
}

/// `spec.syncPolicy.automated`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SyncPolicyAutomated {
    /// Delete tracked objects Git no longer declares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prune: Option<bool>,
    /// Sync again when live state drifts without a Git change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_heal: Option<bool>,
    /// Allow a sync that would leave the Application with no resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_empty: Option<bool>,
    /// Switch automation off without removing the block (absent means on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Retry of a failed sync: `limit` attempts with exponential backoff.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RetryStrategy {
    /// Maximum attempts (negative: unlimited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Wait between attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff: Option<Backoff>,
    /// Refresh the target revision before each retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh: Option<bool>,
}

/// Backoff between retries: `duration * factor^attempt`, capped at `maxDuration`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Backoff {
    /// First wait (`5s`, `2m`, or plain seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Multiplier per attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<i64>,
    /// Longest wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration: Option<String>,
}

/// `spec.syncPolicy.managedNamespaceMetadata`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ManagedNamespaceMetadata {
    /// Labels for the namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations for the namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// One `spec.ignoreDifferences` rule: which objects (group/kind globs, optional name and namespace)
/// and which fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResourceIgnoreDifferences {
    /// API group (glob).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind (glob).
    pub kind: String,
    /// Object name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Object namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// RFC 6901 pointers of ignored fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_pointers: Option<Vec<String>>,
    /// jq path expressions of ignored fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jq_path_expressions: Option<Vec<String>>,
    /// Field managers whose fields are ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields_managers: Option<Vec<String>>,
}

/// A name/value pair (`spec.info`, `operation.info`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Info {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

/// `spec.sourceHydrator`: where dry manifests come from and where hydrated ones go.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SourceHydrator {
    /// The source of dry (unrendered) manifests.
    pub dry_source: DrySource,
    /// Where the hydrated manifests are synced from.
    pub sync_source: SyncSource,
    /// Branch hydrated manifests are pushed to before promotion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hydrate_to: Option<HydrateTo>,
}

/// `sourceHydrator.drySource`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DrySource {
    /// Repository URL.
    #[serde(rename = "repoURL")]
    pub repo_url: String,
    /// Revision.
    pub target_revision: String,
    /// Path in the repository.
    pub path: String,
}

/// `sourceHydrator.syncSource`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SyncSource {
    /// Branch holding hydrated manifests.
    pub target_branch: String,
    /// Path in that branch.
    pub path: String,
}

/// `sourceHydrator.hydrateTo`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HydrateTo {
    /// Staging branch.
    pub target_branch: String,
}

impl SyncPolicy {
    /// Whether automated sync is on (an `automated` block whose `enabled` is not false).
    pub fn is_automated(&self) -> bool {
        self.automated
            .as_ref()
            .is_some_and(|a| a.enabled != Some(false))
    }

    /// Whether a sync option (`CreateNamespace=true`) is set, compared case-sensitively as Argo does.
    pub fn has_option(&self, option: &str) -> bool {
        self.sync_options.iter().flatten().any(|o| o == option)
    }
}
