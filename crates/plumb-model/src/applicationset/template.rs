//! The Application template of an ApplicationSet (also each generator's override).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The Application template (also the per-generator override).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetTemplate {
    /// Metadata of generated Applications.
    #[serde(default)]
    pub metadata: ApplicationSetTemplateMeta,
    /// `spec` of generated Applications, as JSON until rendered.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::preserve_unknown_object")
    )]
    pub spec: Value,
}

/// Template metadata: the fields Argo lets a template set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetTemplateMeta {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Finalizers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
}
