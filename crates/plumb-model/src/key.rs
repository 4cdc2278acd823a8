//! Object identity: [`GroupKind`] and [`ResourceKey`].

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An API group and kind; the core group is the empty string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct GroupKind {
    /// API group (`apps`, `networking.k8s.io`, or `""` for core; may be left out when written,
    /// as in an AppProject's `{kind: Namespace}`).
    #[serde(default)]
    pub group: String,
    /// Kind (`Deployment`).
    pub kind: String,
}

impl GroupKind {
    /// Builds a group/kind pair.
    pub fn new(group: impl Into<String>, kind: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
        }
    }

    /// Reads the group and kind of an object from its `apiVersion` and `kind`.
    pub fn of(obj: &Value) -> Self {
        let api_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
        Self::new(group_of(api_version), kind)
    }
}

impl fmt::Display for GroupKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.group, self.kind)
    }
}

/// The group part of an `apiVersion` (`apps/v1` → `apps`, `v1` → `""`).
pub fn group_of(api_version: &str) -> &str {
    match api_version.split_once('/') {
        Some((group, _)) => group,
        None => "",
    }
}

/// The identity of one object: group, kind, namespace (empty when cluster-scoped) and name.
///
/// Ordering is by group, kind, namespace, then name, which is the order Plumb prints objects in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub struct ResourceKey {
    /// API group (`""` for core).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace, `""` for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ResourceKey {
    /// Builds a key from its four parts.
    pub fn new(
        group: impl Into<String>,
        kind: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// Reads the key of an object as written (no namespace defaulting).
    pub fn of(obj: &Value) -> Self {
        let gk = GroupKind::of(obj);
        let meta = obj.get("metadata");
        let field = |f: &str| {
            meta.and_then(|m| m.get(f))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Self {
            group: gk.group,
            kind: gk.kind,
            namespace: field("namespace"),
            name: field("name"),
        }
    }

    /// The group/kind part of the key.
    pub fn group_kind(&self) -> GroupKind {
        GroupKind::new(self.group.clone(), self.kind.clone())
    }
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}",
            self.group, self.kind, self.namespace, self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_of_core_and_grouped_objects() {
        let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a", "namespace": "n"}});
        assert_eq!(ResourceKey::of(&svc).to_string(), "/Service/n/a");
        let crb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"}});
        assert_eq!(
            ResourceKey::of(&crb).to_string(),
            "rbac.authorization.k8s.io/ClusterRoleBinding//b"
        );
    }

    #[test]
    fn keys_sort_by_group_kind_namespace_name() {
        let mut keys = [
            ResourceKey::new("apps", "Deployment", "b", "x"),
            ResourceKey::new("", "Service", "a", "x"),
            ResourceKey::new("apps", "Deployment", "a", "y"),
        ];
        keys.sort();
        let printed: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(
            printed,
            ["/Service/a/x", "apps/Deployment/a/y", "apps/Deployment/b/x"]
        );
    }
}
