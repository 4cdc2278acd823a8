//! Where an Application's manifests come from: `spec.source` / `spec.sources[]` and the per-tool
//! options (Helm, Kustomize, directory/Jsonnet, config management plugin).
//!
//! Field names and optionality follow Argo CD's `ApplicationSource*` types
//! (`pkg/apis/application/v1alpha1/types.go`). Optional fields are `Option` so that a manifest
//! read and written back keeps exactly the fields it had (an explicit `skipCrds: false` stays, an
//! absent one is not added); the source engine decides what an absent field means.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One source of manifests (`spec.source`, or an item of `spec.sources`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSource {
    /// URL of the Git repository, Helm repository or OCI registry.
    #[serde(rename = "repoURL")]
    pub repo_url: String,
    /// Directory inside the repository (Git sources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Branch, tag, commit SHA or (Helm) chart version constraint; absent means `HEAD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_revision: Option<String>,
    /// Helm options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helm: Option<HelmSource>,
    /// Kustomize options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kustomize: Option<KustomizeSource>,
    /// Plain directory (YAML/JSON/Jsonnet) options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<DirectorySource>,
    /// Config management plugin options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginSource>,
    /// Helm chart name, for sources in a Helm repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<String>,
    /// Reference name other sources use as `$<ref>/path` (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// Display name of this source (multi-source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `source.helm`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HelmSource {
    /// Values files, relative to the chart (or `$ref/...` in multi-source apps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_files: Option<Vec<String>>,
    /// `--set` style parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<HelmParameter>>,
    /// Release name (defaults to the Application name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_name: Option<String>,
    /// Inline values as a YAML string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<String>,
    /// `--set-file` style parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_parameters: Option<Vec<HelmFileParameter>>,
    /// Helm major version (`v3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Pass repository credentials to every domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_credentials: Option<bool>,
    /// Do not fail on missing values files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_missing_value_files: Option<bool>,
    /// Do not render the chart's CRDs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_crds: Option<bool>,
    /// Inline values as a structured object (free form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::preserve_unknown")
    )]
    pub values_object: Option<Value>,
    /// Namespace passed to `helm template --namespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Skip the chart's values schema validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_schema_validation: Option<bool>,
    /// `--api-versions` passed to Helm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_versions: Option<Vec<String>>,
    /// `--kube-version` passed to Helm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_version: Option<String>,
    /// Do not render the chart's test hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_tests: Option<bool>,
}

/// One Helm `--set` parameter.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HelmParameter {
    /// Parameter name (dotted path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Parameter value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Use `--set-string` instead of `--set`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_string: Option<bool>,
}

/// One Helm `--set-file` parameter.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct HelmFileParameter {
    /// Parameter name (dotted path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Path of the file whose content becomes the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `source.kustomize`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct KustomizeSource {
    /// Prefix added to resource names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_prefix: Option<String>,
    /// Suffix added to resource names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_suffix: Option<String>,
    /// Image overrides (`kustomize edit set image` syntax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    /// Labels added to every resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_labels: Option<BTreeMap<String, String>>,
    /// Kustomize version name (from argocd-cm `kustomize.version.<v>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Annotations added to every resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_annotations: Option<BTreeMap<String, String>>,
    /// Overwrite existing labels with `commonLabels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_common_labels: Option<bool>,
    /// Overwrite existing annotations with `commonAnnotations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_common_annotations: Option<bool>,
    /// Namespace set on every namespaced resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Substitute environment variables in `commonAnnotations` values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_annotations_envsubst: Option<bool>,
    /// Replica count overrides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Vec<KustomizeReplica>>,
    /// Patches added to the kustomization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patches: Option<Vec<KustomizePatch>>,
    /// Components added to the kustomization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub components: Option<Vec<String>>,
    /// Apply `commonLabels` without touching selectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_without_selector: Option<bool>,
    /// `--kube-version` for Helm charts inflated by Kustomize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kube_version: Option<String>,
    /// `--api-versions` for Helm charts inflated by Kustomize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_versions: Option<Vec<String>>,
    /// Do not fail on missing components.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_missing_components: Option<bool>,
    /// Apply `commonLabels` to pod templates too (with `labelWithoutSelector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_include_templates: Option<bool>,
}

/// One Kustomize replica override.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct KustomizeReplica {
    /// Name of the Deployment or StatefulSet.
    pub name: String,
    /// Replica count: an integer or a string holding one (Kubernetes int-or-string).
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::int_or_string")
    )]
    pub count: Value,
}

/// One Kustomize patch.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct KustomizePatch {
    /// Patch file path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Inline patch (strategic merge or JSON 6902).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// Objects the patch applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<KustomizeSelector>,
    /// Patch options (`allowNameChange`, `allowKindChange`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<BTreeMap<String, bool>>,
}

/// The objects a Kustomize patch targets.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct KustomizeSelector {
    /// API group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name (regular expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace (regular expression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Label selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// Annotation selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_selector: Option<String>,
}

/// `source.directory`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DirectorySource {
    /// Read subdirectories too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurse: Option<bool>,
    /// Jsonnet options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonnet: Option<JsonnetSource>,
    /// Glob of files to leave out (`{a,b}` alternatives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<String>,
    /// Glob of files to read (`{a,b}` alternatives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<String>,
}

/// `source.directory.jsonnet`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct JsonnetSource {
    /// External variables (`std.extVar`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_vars: Option<Vec<JsonnetVar>>,
    /// Top-level arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlas: Option<Vec<JsonnetVar>>,
    /// Library search paths (`-J`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libs: Option<Vec<String>>,
}

/// A Jsonnet external variable or top-level argument.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct JsonnetVar {
    /// Variable name.
    pub name: String,
    /// Value (a string, or Jsonnet code when `code` is true).
    pub value: String,
    /// Treat `value` as Jsonnet code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<bool>,
}

/// `source.plugin`: a config management plugin.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PluginSource {
    /// Plugin name (absent: discovered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Environment passed to the plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<EnvEntry>>,
    /// Parameters passed to the plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<PluginParameter>>,
}

/// One environment variable for a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EnvEntry {
    /// Variable name.
    pub name: String,
    /// Variable value.
    pub value: String,
}

/// One plugin parameter: a string, an array or a map.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PluginParameter {
    /// Parameter name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// String value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string: Option<String>,
    /// Array value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<Vec<String>>,
    /// Map value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<BTreeMap<String, String>>,
}

impl ApplicationSource {
    /// The revision to render: `targetRevision`, or `HEAD` when absent or empty.
    pub fn target_revision_or_head(&self) -> &str {
        match self.target_revision.as_deref() {
            Some(rev) if !rev.is_empty() => rev,
            _ => "HEAD",
        }
    }

    /// Whether this source is a Helm chart from a Helm repository (not a Git path).
    pub fn is_helm_chart(&self) -> bool {
        self.chart.as_deref().is_some_and(|c| !c.is_empty())
    }
}
