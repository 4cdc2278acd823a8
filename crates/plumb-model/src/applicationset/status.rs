//! `status` of an ApplicationSet: conditions, progressive sync state, generated resources.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::application::HealthStatus;

/// `status` of an ApplicationSet.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetStatus {
    /// Conditions (one per type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<ApplicationSetCondition>>,
    /// Progressive sync state of each generated Application.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_status: Option<Vec<ApplicationSetApplicationStatus>>,
    /// The generated Applications with their sync and health status (Argo's `ResourceStatus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::preserve_unknown_objects")
    )]
    pub resources: Option<Vec<Value>>,
    /// Number of generated Applications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_count: Option<i64>,
    /// Health of the set, from its conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthStatus>,
}

/// A condition of an ApplicationSet.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetCondition {
    /// One of the [`condition`] types.
    pub r#type: String,
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
    /// When `status` last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// One of the [`condition`] reasons.
    #[serde(default)]
    pub reason: String,
}

/// Progressive sync state of one generated Application.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetApplicationStatus {
    /// Application name.
    pub application: String,
    /// When `status` last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
    /// `Waiting`, `Pending`, `Progressing` or `Healthy`.
    pub status: String,
    /// The rollout step (1-based, as a string).
    #[serde(default)]
    pub step: String,
    /// Revisions the Application targets.
    #[serde(default)]
    pub target_revisions: Vec<String>,
}

/// Condition types, statuses and reasons, as Argo CD spells them.
pub mod condition {
    /// An error stopped the reconcile.
    pub const ERROR_OCCURRED: &str = "ErrorOccurred";
    /// The generators produced their parameters.
    pub const PARAMETERS_GENERATED: &str = "ParametersGenerated";
    /// The generated Applications are as the template says.
    pub const RESOURCES_UP_TO_DATE: &str = "ResourcesUpToDate";
    /// A rolling sync is in progress.
    pub const ROLLOUT_PROGRESSING: &str = "RolloutProgressing";
    /// The rolling sync configuration is invalid.
    pub const INVALID_ROLLOUT_CONFIG: &str = "InvalidRolloutConfig";
    /// Plumb's brake: deletions held back until confirmed (beyond Argo).
    pub const DELETION_HELD: &str = "DeletionHeld";

    /// Condition status `True`.
    pub const TRUE: &str = "True";
    /// Condition status `False`.
    pub const FALSE: &str = "False";
    /// Condition status `Unknown`.
    pub const UNKNOWN: &str = "Unknown";

    /// Reasons (Argo's `ApplicationSetReason*`).
    pub mod reason {
        /// An error occurred.
        pub const ERROR_OCCURRED: &str = "ErrorOccurred";
        /// All generated Applications are up to date.
        pub const APPLICATION_SET_UP_TO_DATE: &str = "ApplicationSetUpToDate";
        /// Parameters were generated.
        pub const PARAMETERS_GENERATED: &str = "ParametersGenerated";
        /// Updating an Application failed.
        pub const UPDATE_APPLICATION_ERROR: &str = "UpdateApplicationError";
        /// A generator failed.
        pub const APPLICATION_PARAMS_GENERATION_ERROR: &str =
            "ApplicationGenerationFromParamsError";
        /// Rendering the template failed.
        pub const RENDER_TEMPLATE_PARAMS_ERROR: &str = "RenderTemplateParamsError";
        /// Creating an Application failed.
        pub const CREATE_APPLICATION_ERROR: &str = "CreateApplicationError";
        /// Deleting an Application failed.
        pub const DELETE_APPLICATION_ERROR: &str = "DeleteApplicationError";
        /// Refreshing an Application failed.
        pub const REFRESH_APPLICATION_ERROR: &str = "RefreshApplicationError";
        /// A generated Application is invalid.
        pub const APPLICATION_VALIDATION_ERROR: &str = "ApplicationValidationError";
        /// The set was modified.
        pub const APPLICATION_SET_MODIFIED: &str = "ApplicationSetModified";
        /// The rolling sync completed.
        pub const ROLLOUT_COMPLETE: &str = "ApplicationSetRolloutComplete";
        /// The rolling sync failed.
        pub const ROLLOUT_ERROR: &str = "ApplicationSetRolloutError";
        /// The rollout configuration is invalid.
        pub const INVALID_ROLLOUT_CONFIG: &str = "ApplicationSetInvalidRolloutConfig";
        /// The rollout configuration is valid.
        pub const VALID_ROLLOUT_CONFIG: &str = "ApplicationSetValidRolloutConfig";
        /// Plumb's brake held deletions back.
        pub const DELETION_HELD: &str = "DeletionHeld";
    }
}
