//! The `ApplicationSet` object and its spec (everything but the generators).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::generators::ApplicationSetGenerator;
use super::status::ApplicationSetStatus;
use super::template::ApplicationSetTemplate;
use crate::application::ObjectMeta;

/// Kind name of ApplicationSets.
pub const KIND: &str = "ApplicationSet";

/// An `argoproj.io/v1alpha1` ApplicationSet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSet {
    /// `argoproj.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `ApplicationSet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Object metadata.
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::object_meta")
    )]
    pub metadata: ObjectMeta,
    /// Desired state: generators and the Application template.
    pub spec: ApplicationSetSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ApplicationSetStatus>,
}

impl ApplicationSet {
    /// The name (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The namespace (empty if unset).
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}

/// `spec` of an ApplicationSet.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetSpec {
    /// Render the template with Go's text/template instead of `{{param}}` substitution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub go_template: Option<bool>,
    /// Go template options (`missingkey=error`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub go_template_options: Option<Vec<String>>,
    /// The generators; the Applications are the union of what each produces.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::appset_generators")
    )]
    pub generators: Vec<ApplicationSetGenerator>,
    /// The Application template.
    #[serde(default)]
    pub template: ApplicationSetTemplate,
    /// Policies for creating, updating and deleting the generated Applications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_policy: Option<ApplicationSetSyncPolicy>,
    /// Progressive syncs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ApplicationSetStrategy>,
    /// Annotations and labels of generated Applications kept when the controller updates them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserved_fields: Option<ApplicationPreservedFields>,
    /// Apply `selector`s of nested generators too (Argo's deprecated switch, always on in v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_nested_selectors: Option<bool>,
    /// Fields of generated Applications the controller leaves as they are in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_application_differences: Option<Vec<ApplicationSetResourceIgnoreDifferences>>,
    /// A Go template rendered per parameter set and applied to the Application as a patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_patch: Option<String>,
}

impl ApplicationSetSpec {
    /// Whether templates are Go templates.
    pub fn go_template(&self) -> bool {
        self.go_template.unwrap_or(false)
    }
}

/// Annotations and labels kept on update.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationPreservedFields {
    /// Annotation keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Vec<String>>,
    /// Label keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
}

/// `spec.strategy`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetStrategy {
    /// `AllAtOnce` (default) or `RollingSync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// Steps of a `RollingSync`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_sync: Option<ApplicationSetRolloutStrategy>,
    /// `AllAtOnce` (default) or `Reverse` (the steps backwards) when the set is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_order: Option<String>,
}

/// `spec.strategy.rollingSync`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetRolloutStrategy {
    /// The steps, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<ApplicationSetRolloutStep>>,
}

/// One step of a rolling sync.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetRolloutStep {
    /// Label expressions choosing the step's Applications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<ApplicationMatchExpression>>,
    /// How many Applications of the step sync at once: a count or a percentage (`"25%"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::int_or_string")
    )]
    pub max_update: Option<Value>,
}

/// A label expression of a rollout step.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationMatchExpression {
    /// Label key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `In` or `NotIn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

/// `spec.syncPolicy.applicationsSync`: what the controller may do to generated Applications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ApplicationsSyncPolicy {
    /// Create only.
    #[serde(rename = "create-only")]
    CreateOnly,
    /// Create and update, never delete.
    #[serde(rename = "create-update")]
    CreateUpdate,
    /// Create and delete, never update.
    #[serde(rename = "create-delete")]
    CreateDelete,
    /// Create, update and delete (the default).
    #[serde(rename = "sync")]
    Sync,
}

impl ApplicationsSyncPolicy {
    /// Whether existing Applications are updated.
    pub fn allow_update(self) -> bool {
        matches!(self, Self::CreateUpdate | Self::Sync)
    }

    /// Whether Applications no longer generated are deleted.
    pub fn allow_delete(self) -> bool {
        matches!(self, Self::CreateDelete | Self::Sync)
    }
}

/// `spec.syncPolicy`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetSyncPolicy {
    /// Delete generated Applications without deleting their resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
    /// The applications sync policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applications_sync: Option<ApplicationsSyncPolicy>,
}

/// One entry of `spec.ignoreApplicationDifferences`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetResourceIgnoreDifferences {
    /// Only the Application of this name (all when empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// JSON pointers into the Application.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_pointers: Option<Vec<String>>,
    /// jq path expressions into the Application.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jq_path_expressions: Option<Vec<String>>,
}
