//! Pairing desired and live objects by (group, kind, namespace, name).
//!
//! Desired objects without a namespace get the destination namespace when their kind is
//! namespaced (the namespace is also written into the object, as Argo does) and none when it
//! is cluster-scoped. Two desired objects with the same key are an error naming both sources.
//! Live objects are taken as the server returned them.

use std::collections::{BTreeMap, BTreeSet};

use plumb_model::{GroupKind, ResourceKey};
use serde_json::Value;

use crate::error::{Error, Result};

/// A desired object and where it came from (`overlays/prod/deploy.yaml`, document 2).
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedObject {
    /// The object.
    pub value: Value,
    /// Where it came from, for messages.
    pub source: String,
}

/// A desired object and its live counterpart; either may be missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The object's identity.
    pub key: ResourceKey,
    /// What Git declares (namespace defaulted).
    pub desired: Option<Value>,
    /// What the cluster holds.
    pub live: Option<Value>,
    /// Where the desired object came from.
    pub desired_source: Option<String>,
}

/// Cluster-scoped built-in kinds (everything else is assumed namespaced unless the caller
/// says otherwise, e.g. from API discovery).
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "ComponentStatus"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("networking.k8s.io", "IngressClass"),
    ("node.k8s.io", "RuntimeClass"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("gateway.networking.k8s.io", "GatewayClass"),
];

/// How to pair.
#[derive(Debug, Clone, Default)]
pub struct PairOptions {
    /// Namespace for namespaced desired objects that have none (the destination namespace).
    pub default_namespace: String,
    /// Further cluster-scoped kinds (CRDs' kinds with `scope: Cluster`, from discovery).
    pub cluster_scoped: BTreeSet<GroupKind>,
}

impl PairOptions {
    /// Whether objects of `gk` live outside namespaces.
    pub fn is_cluster_scoped(&self, gk: &GroupKind) -> bool {
        self.cluster_scoped.contains(gk)
            || CLUSTER_SCOPED
                .iter()
                .any(|(g, k)| gk.group == *g && gk.kind == *k)
    }
}

/// Pairs desired with live objects, sorted by key.
pub fn pair(
    desired: Vec<SourcedObject>,
    live: Vec<Value>,
    opts: &PairOptions,
) -> Result<Vec<Pair>> {
    let mut by_key: BTreeMap<ResourceKey, Pair> = BTreeMap::new();
    for SourcedObject { mut value, source } in desired {
        check_identity(&value, &source)?;
        let gk = GroupKind::of(&value);
        let mut key = ResourceKey::of(&value);
        if opts.is_cluster_scoped(&gk) {
            key.namespace.clear();
        } else if key.namespace.is_empty() && !opts.default_namespace.is_empty() {
            key.namespace = opts.default_namespace.clone();
            if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("namespace".into(), Value::String(key.namespace.clone()));
            }
        }
        if let Some(existing) = by_key.get(&key) {
            return Err(Error::DuplicateDesired {
                key: Box::new(key),
                first: existing.desired_source.clone().unwrap_or_default(),
                second: source,
            });
        }
        by_key.insert(
            key.clone(),
            Pair {
                key,
                desired: Some(value),
                live: None,
                desired_source: Some(source),
            },
        );
    }
    for value in live {
        let key = ResourceKey::of(&value);
        match by_key.get_mut(&key) {
            Some(p) => p.live = Some(value),
            None => {
                by_key.insert(
                    key.clone(),
                    Pair {
                        key,
                        desired: None,
                        live: Some(value),
                        desired_source: None,
                    },
                );
            }
        }
    }
    Ok(by_key.into_values().collect())
}

fn check_identity(v: &Value, source: &str) -> Result<()> {
    let missing = if v
        .get("kind")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        Some("kind")
    } else if v
        .get("apiVersion")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        Some("apiVersion")
    } else if v
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        Some("metadata.name")
    } else {
        None
    };
    match missing {
        Some(missing) => Err(Error::UnidentifiedObject {
            source_name: source.to_string(),
            missing,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(api: &str, kind: &str, ns: Option<&str>, name: &str) -> Value {
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        json!({"apiVersion": api, "kind": kind, "metadata": meta})
    }

    fn src(v: Value, s: &str) -> SourcedObject {
        SourcedObject {
            value: v,
            source: s.into(),
        }
    }

    #[test]
    fn namespace_defaulting_and_pairing() {
        let opts = PairOptions {
            default_namespace: "payments".into(),
            ..Default::default()
        };
        let desired = vec![
            src(obj("apps/v1", "Deployment", None, "api"), "a.yaml"),
            src(
                obj(
                    "rbac.authorization.k8s.io/v1",
                    "ClusterRole",
                    None,
                    "reader",
                ),
                "b.yaml",
            ),
            src(obj("v1", "ConfigMap", Some("other"), "cfg"), "c.yaml"),
        ];
        let live = vec![
            obj("apps/v1", "Deployment", Some("payments"), "api"),
            obj("v1", "Secret", Some("payments"), "extra"),
        ];
        let pairs = pair(desired, live, &opts).unwrap();
        let keys: Vec<String> = pairs.iter().map(|p| p.key.to_string()).collect();
        assert_eq!(
            keys,
            [
                "/ConfigMap/other/cfg",
                "/Secret/payments/extra",
                "apps/Deployment/payments/api",
                "rbac.authorization.k8s.io/ClusterRole//reader"
            ]
        );
        assert!(pairs[2].desired.is_some() && pairs[2].live.is_some());
        assert_eq!(
            pairs[2].desired.as_ref().unwrap()["metadata"]["namespace"],
            "payments"
        );
        assert!(pairs[1].desired.is_none());
    }

    #[test]
    fn duplicates_name_both_sources() {
        let opts = PairOptions {
            default_namespace: "ns".into(),
            ..Default::default()
        };
        let desired = vec![
            src(obj("v1", "ConfigMap", None, "cfg"), "base/cm.yaml"),
            src(obj("v1", "ConfigMap", Some("ns"), "cfg"), "overlay/cm.yaml"),
        ];
        let err = pair(desired, vec![], &opts).unwrap_err().to_string();
        assert_eq!(
            err,
            "/ConfigMap/ns/cfg: defined twice, in base/cm.yaml and in overlay/cm.yaml"
        );
    }

    #[test]
    fn objects_need_identity() {
        let err = pair(
            vec![src(
                json!({"kind": "ConfigMap", "apiVersion": "v1"}),
                "x.yaml",
            )],
            vec![],
            &PairOptions::default(),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "x.yaml: object has no metadata.name"
        );
    }
}
