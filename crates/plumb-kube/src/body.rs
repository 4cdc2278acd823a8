//! Turning a desired object into a server-side apply body: server-owned fields and `null`s out.
//!
//! SSA treats every field in the body as owned by the applier, so fields the server sets
//! (`resourceVersion`, `uid`, `managedFields`, ...) and `status` must not be sent; a `null` in a
//! rendered manifest makes SSA fail or claim the field, so nulls are dropped (nelm's
//! CLEAN_NULL_FIELDS).

use serde_json::Value;

/// Metadata fields the API server owns.
const SERVER_METADATA: &[&str] = &[
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
];

/// Removes server-set metadata and `status`.
pub fn strip_server_fields(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    map.remove("status");
    if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SERVER_METADATA {
            meta.remove(*field);
        }
    }
}

/// Removes `null` values from objects, recursively (nulls inside arrays are kept: an array
/// element cannot be "absent").
pub fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// The body to send with server-side apply for a desired object.
pub fn apply_body(desired: &Value) -> Value {
    let mut body = desired.clone();
    strip_server_fields(&mut body);
    strip_nulls(&mut body);
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_fields_status_and_nulls_are_removed() {
        let desired = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "payments", "uid": "1f0c", "resourceVersion": "812",
                         "generation": 3, "creationTimestamp": null,
                         "managedFields": [{"manager": "kubectl-client-side-apply"}],
                         "labels": {"app": "web"}},
            "spec": {"replicas": 3, "strategy": null,
                     "template": {"spec": {"containers": [{"name": "web", "resources": {"limits": null}}]}}},
            "status": {"replicas": 3}
        });
        assert_eq!(
            apply_body(&desired),
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "payments", "labels": {"app": "web"}},
                "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "web", "resources": {}}]}}}
            })
        );
    }
}
