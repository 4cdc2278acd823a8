//! Argo CD re-encodes objects of the kinds it has Go types for (gitops-engine `remarshal`), and
//! for those the API server itself keeps no difference between an empty list, `null` and no field
//! (all are a nil slice once stored). So for built-in API groups an empty list is read as `null`
//! before the merge (a `null` in desired still deletes the field), and `null` fields are dropped
//! from both sides before they are compared: `rules: []` in Git equals `rules: null` live, while
//! `rules: []` against live rules is still drift. Custom resources are compared as they are, as
//! Argo CD does.
//!
//! Role and ClusterRole rules follow gitops-engine `normalizeRole`: with
//! `resource.compareoptions` `ignoreAggregatedRoles: true`, an aggregated role's `rules` (filled
//! in by the cluster's aggregation controller) do not count.

use serde_json::Value;

/// The API groups of Kubernetes' own kinds (client-go's scheme, which Argo CD decodes into).
const BUILTIN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// Whether Argo CD has Go types for the group's kinds.
pub(crate) fn is_builtin_group(group: &str) -> bool {
    BUILTIN_GROUPS.contains(&group)
}

/// Turns every empty list held by a field into `null`, at every depth.
pub(crate) fn empty_lists_to_null(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for child in map.values_mut() {
                if child.as_array().is_some_and(Vec::is_empty) {
                    *child = Value::Null;
                } else {
                    empty_lists_to_null(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(empty_lists_to_null),
        _ => {}
    }
}

/// Drops fields whose value is `null`, at every depth (list items themselves are kept).
pub(crate) fn drop_null_fields(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|_, child| !child.is_null());
            map.values_mut().for_each(drop_null_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_fields),
        _ => {}
    }
}

/// With `ignoreAggregatedRoles`, an aggregated role's rules are not compared.
pub(super) fn drop_aggregated_rules(obj: &mut Value) {
    if let Some(map) = obj.as_object_mut()
        && map.get("aggregationRule").is_some_and(Value::is_object)
    {
        map.remove("rules");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_lists_become_null_then_null_fields_go() {
        let mut v =
            json!({"a": null, "b": [], "c": {}, "d": [{"e": [], "f": 1}, null, []], "g": ""});
        empty_lists_to_null(&mut v);
        assert_eq!(
            v,
            json!({"a": null, "b": null, "c": {}, "d": [{"e": null, "f": 1}, null, []], "g": ""})
        );
        drop_null_fields(&mut v);
        assert_eq!(v, json!({"c": {}, "d": [{"f": 1}, null, []], "g": ""}));
    }

    #[test]
    fn only_aggregated_roles_lose_their_rules() {
        let mut plain = json!({"kind": "ClusterRole", "rules": [{"verbs": ["get"]}]});
        drop_aggregated_rules(&mut plain);
        assert!(plain.get("rules").is_some());
        let mut malformed = json!({"kind": "ClusterRole", "aggregationRule": "x", "rules": [1]});
        drop_aggregated_rules(&mut malformed);
        assert!(malformed.get("rules").is_some());
        let mut agg = json!({"kind": "ClusterRole", "aggregationRule": {"clusterRoleSelectors": []}, "rules": [1]});
        drop_aggregated_rules(&mut agg);
        assert!(agg.get("rules").is_none());
    }
}
