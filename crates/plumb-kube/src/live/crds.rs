//! Kinds that appear and disappear while the cache runs: the cache watches
//! CustomResourceDefinitions anyway, so an Established CRD for a kind not yet watched starts a
//! watch of that kind, and a deleted CRD stops it. No discovery round trip is needed: the CRD
//! names its group, kind, plural, scope and versions.

use kube::api::DynamicObject;
use kube::core::Version;
use kube::discovery::ApiResource;
use plumb_model::GroupKind;
use serde_json::Value;

use crate::discovery::ApiKind;

/// Whether a watched kind is the CRD kind.
pub(crate) fn is_crd_kind(kind: &ApiKind) -> bool {
    kind.resource.group == "apiextensions.k8s.io"
        && kind.resource.kind == "CustomResourceDefinition"
}

/// The group/kind a CRD defines.
pub(crate) fn defined_group_kind(crd: &DynamicObject) -> Option<GroupKind> {
    let spec = crd.data.get("spec")?;
    Some(GroupKind::new(
        spec.get("group")?.as_str()?,
        spec.pointer("/names/kind")?.as_str()?,
    ))
}

/// The kind an Established CRD serves, in its preferred version (highest Kubernetes version
/// priority among served versions, as discovery orders them).
pub(crate) fn served_kind(crd: &DynamicObject) -> Option<ApiKind> {
    let established = crd
        .data
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        });
    if !established {
        return None;
    }
    let spec = crd.data.get("spec")?;
    let group = spec.get("group")?.as_str()?;
    let preferred = spec
        .get("versions")?
        .as_array()?
        .iter()
        .filter(|v| v["served"] == true)
        .filter_map(|v| Some((v["name"].as_str()?, v)))
        .max_by_key(|(name, _)| Version::parse(name).priority())?;
    let (version, served) = preferred;
    let status_subresource = served.pointer("/subresources/status").is_some();
    Some(ApiKind {
        resource: ApiResource {
            group: group.to_string(),
            version: version.to_string(),
            api_version: format!("{group}/{version}"),
            kind: spec.pointer("/names/kind")?.as_str()?.to_string(),
            plural: spec.pointer("/names/plural")?.as_str()?.to_string(),
        },
        namespaced: spec.get("scope").and_then(Value::as_str) == Some("Namespaced"),
        // Custom resources always support the full verb set.
        verbs: [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
        .map(String::from)
        .to_vec(),
        status_subresource,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(established: &str) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "octopodes.example.com", "uid": "c-1", "resourceVersion": "9"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Octopus", "plural": "octopodes", "singular": "octopus", "listKind": "OctopusList"},
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false},
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
                    {"name": "v2alpha1", "served": true, "storage": false},
                    {"name": "v3", "served": false, "storage": false}
                ]
            },
            "status": {"conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                {"type": "Established", "status": established, "reason": "InitialNamesAccepted"}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn an_established_crd_serves_its_most_stable_version() {
        let kind = served_kind(&crd("True")).unwrap();
        assert_eq!(kind.resource.api_version, "example.com/v1");
        assert_eq!(kind.resource.plural, "octopodes");
        assert!(kind.namespaced && kind.is_listable());
        assert!(kind.status_subresource, "v1 declares subresources.status");
        assert_eq!(
            defined_group_kind(&crd("False")),
            Some(GroupKind::new("example.com", "Octopus"))
        );
        assert_eq!(served_kind(&crd("False")), None, "not yet Established");
    }
}
