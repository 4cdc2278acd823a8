//! The `Application` object.

use serde::{Deserialize, Serialize};

use super::meta::ObjectMeta;
use super::operation::Operation;
use super::spec::ApplicationSpec;
use super::status::ApplicationStatus;

/// API group of Argo CD's objects.
pub const GROUP: &str = "argoproj.io";
/// API version of Argo CD's objects.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of Argo CD's objects.
pub const API_VERSION: &str = "argoproj.io/v1alpha1";
/// Finalizer that makes deleting an Application delete its resources (foreground).
pub const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

/// An `argoproj.io/v1alpha1` Application.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Application {
    /// `argoproj.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Application`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Object metadata.
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::object_meta")
    )]
    pub metadata: ObjectMeta,
    /// Desired state.
    pub spec: ApplicationSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ApplicationStatus>,
    /// A requested operation, cleared when it finishes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
}

impl Application {
    /// Kind name.
    pub const KIND: &'static str = "Application";

    /// An Application with `apiVersion`/`kind` set.
    pub fn new(metadata: ObjectMeta, spec: ApplicationSpec) -> Self {
        Self {
            api_version: Some(API_VERSION.to_string()),
            kind: Some(Self::KIND.to_string()),
            metadata,
            spec,
            status: None,
            operation: None,
        }
    }

    /// The name (empty if unset).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The namespace (empty if unset).
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// The sources in order: `spec.sources` when non-empty, else `spec.source`.
    pub fn sources(&self) -> Vec<&super::ApplicationSource> {
        match &self.spec.sources {
            Some(sources) if !sources.is_empty() => sources.iter().collect(),
            _ => self.spec.source.iter().collect(),
        }
    }

    /// The name resource tracking uses: `<name>` when the Application lives in the control
    /// namespace, else `<namespace>_<name>` (Argo's `util/argo/resource_tracking.go`).
    pub fn instance_name(&self, control_namespace: &str) -> String {
        let namespace = self.namespace();
        if namespace.is_empty() || namespace == control_namespace {
            self.name().to_string()
        } else {
            format!("{namespace}_{}", self.name())
        }
    }
}
