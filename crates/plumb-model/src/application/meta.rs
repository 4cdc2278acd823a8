//! The `metadata` of Application and AppProject objects.
//!
//! plumb-model stays free of k8s-openapi, so this is a small stand-in for `ObjectMeta`: the fields
//! Plumb reads are named, everything else the API server sets (uid, resourceVersion, managedFields,
//! ...) is kept as it came in `other`, so reading and writing an object back loses nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Object metadata.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
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
    /// Finalizers (`resources-finalizer.argocd.argoproj.io` requests cascading deletion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers: Option<Vec<String>>,
    /// Every other metadata field, as the API server returned it.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

impl ObjectMeta {
    /// Metadata with a name and namespace.
    pub fn named(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            ..Self::default()
        }
    }

    /// The value of an annotation.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }

    /// The value of a label.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.as_ref()?.get(key).map(String::as_str)
    }
}
