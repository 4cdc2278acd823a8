//! `Application.status`: what the controller observed (sync and health, per-resource state,
//! conditions, summary). Operation progress and history live in [`super::operation`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::codes::SyncStatusCode;
use super::operation::{OperationState, RevisionHistory};
use super::source::ApplicationSource;
use super::spec::{ApplicationDestination, ResourceIgnoreDifferences};

/// The observed state of an Application.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationStatus {
    /// Every resource the Application manages, with its sync and health state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<ResourceStatus>>,
    /// Whether live state matches Git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncStatus>,
    /// Aggregated health.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthStatus>,
    /// Finished syncs, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<RevisionHistory>>,
    /// Errors and warnings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<ApplicationCondition>>,
    /// When the last full comparison finished (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_at: Option<String>,
    /// The current or last operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_state: Option<OperationState>,
    /// When the resource tree was last observed (deprecated in Argo, kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<String>,
    /// Detected source type: `Helm`, `Kustomize`, `Directory` or `Plugin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
    /// Summary for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ApplicationSummary>,
    /// `appTree` when per-resource health is not stored in `resources[]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_health_source: Option<String>,
    /// Detected source types (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_types: Option<Vec<String>>,
    /// Namespace of the controller that reconciles this Application.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_namespace: Option<String>,
    /// Source hydrator progress (free form; Plumb keeps it but does not hydrate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::preserve_unknown")
    )]
    pub source_hydrator: Option<Value>,
}

/// `status.sync`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// Synced, OutOfSync or Unknown.
    pub status: SyncStatusCode,
    /// What the comparison was made against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compared_to: Option<ComparedTo>,
    /// The commit compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The commits compared (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Vec<String>>,
}

/// `status.sync.comparedTo`: the spec parts the last comparison used.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ComparedTo {
    /// Source compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ApplicationSource>,
    /// Destination compared.
    pub destination: ApplicationDestination,
    /// Sources compared (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<ApplicationSource>>,
    /// Ignore rules in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_differences: Option<Vec<ResourceIgnoreDifferences>>,
}

/// A health status and message (`status.health`, `status.resources[].health`).
///
/// `status` holds Argo's health strings (Healthy, Suspended, Progressing, Missing, Degraded,
/// Unknown); plumb-health owns their meaning and ordering.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HealthStatus {
    /// Health code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// When the status last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// One entry of `status.resources`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResourceStatus {
    /// API group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Sync status of this resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SyncStatusCode>,
    /// Health of this resource (absent for kinds without health).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthStatus>,
    /// True for hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<bool>,
    /// Live but no longer in Git.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_pruning: Option<bool>,
    /// Sync wave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_wave: Option<i64>,
    /// Pruning or deletion waits for confirmation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_deletion_confirmation: Option<bool>,
}

/// One entry of `status.conditions`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationCondition {
    /// Condition type (see [`condition`]).
    #[serde(rename = "type")]
    pub type_: String,
    /// Message.
    pub message: String,
    /// When the condition was first seen (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// `status.summary`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSummary {
    /// URLs found on Ingresses and Services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "externalURLs")]
    pub external_urls: Option<Vec<String>>,
    /// Container images in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
}

/// Application condition types (`status.conditions[].type`).
pub mod condition {
    /// Deleting the Application's resources failed.
    pub const DELETION_ERROR: &str = "DeletionError";
    /// The spec is invalid (unknown project, destination not permitted, ...).
    pub const INVALID_SPEC_ERROR: &str = "InvalidSpecError";
    /// Rendering or comparing failed.
    pub const COMPARISON_ERROR: &str = "ComparisonError";
    /// The last sync failed.
    pub const SYNC_ERROR: &str = "SyncError";
    /// Any other error.
    pub const UNKNOWN_ERROR: &str = "UnknownError";
    /// A resource is tracked by another Application too.
    pub const SHARED_RESOURCE_WARNING: &str = "SharedResourceWarning";
    /// Git declares the same resource twice.
    pub const REPEATED_RESOURCE_WARNING: &str = "RepeatedResourceWarning";
    /// Git declares a resource kind excluded by settings.
    pub const EXCLUDED_RESOURCE_WARNING: &str = "ExcludedResourceWarning";
    /// The namespace holds resources no Application tracks.
    pub const ORPHANED_RESOURCE_WARNING: &str = "OrphanedResourceWarning";
}
