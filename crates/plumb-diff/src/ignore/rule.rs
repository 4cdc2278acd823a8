//! An ignore rule as Argo CD writes it, and what the guard rails report about one.

use serde::Deserialize;

/// One ignore rule, with Argo's field names.
#[doc(alias = "ignoreDifferences")]
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IgnoreRule {
    /// API group glob (`""` = core, `*` = any).
    pub group: String,
    /// Kind glob.
    pub kind: String,
    /// Exact object name, empty for any.
    pub name: String,
    /// Exact namespace, empty for any.
    pub namespace: String,
    /// RFC 6901 pointers to remove.
    pub json_pointers: Vec<String>,
    /// jq path expressions to remove (as Argo's `del(<expr>)`).
    pub jq_path_expressions: Vec<String>,
    /// Fields owned by these managers are removed from both sides.
    pub managed_fields_managers: Vec<String>,
    /// Where the rule came from, for messages (`Application spec.ignoreDifferences[0]`,
    /// `argocd-cm resource.customizations.ignoreDifferences.apps_Deployment`).
    #[serde(skip)]
    pub origin: String,
}

/// A sensitive field an ignore rule would hide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensitiveFinding {
    /// Where the rule came from.
    pub origin: String,
    /// The rule's pointer, jq expression or manager list that hides the field.
    pub expression: String,
    /// The kind whose field is hidden (`apps/Deployment`).
    pub kind: String,
    /// The sensitive field (`spec.template.spec.containers.*.image`).
    pub field: String,
}

impl std::fmt::Display for SensitiveFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} would hide {} {}",
            self.origin, self.expression, self.kind, self.field
        )
    }
}
