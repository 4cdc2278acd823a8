//! Moving field ownership from client-side apply to Plumb's server-side apply manager.
//!
//! Fields last written by `kubectl apply` (manager `kubectl-client-side-apply`), by Argo CD's
//! client-side or server-side apply (manager `argocd-controller`), or owned by the
//! `before-first-apply` manager SSA creates when it first sees an object are never removed by a
//! later server-side apply that omits them: another manager still owns them. Like Flux
//! (`fluxcd/pkg/ssa` `PatchReplaceFieldsManagers`) and Argo CD (`ClientSideApplyMigration`), Plumb
//! merges those managers' field sets into its own `Apply` entry, so a field removed from Git is
//! really removed on the next apply. Argo CD's entries matter for the switch from Argo CD
//! (docs/migrating-from-argocd.md): without them, a key removed from Git after the switch stayed
//! on every object Argo CD had applied.

use serde_json::{Map, Value, json};

/// Managers whose `Update` entries (client-side apply) Plumb takes over.
pub const MIGRATED_MANAGERS: &[&str] = &[
    "kubectl-client-side-apply",
    "before-first-apply",
    "argocd-controller",
];

/// Managers whose `Apply` entries Plumb takes over: Argo CD's application controller, which
/// applies server-side under this name with `ServerSideApply=true`. (Plumb replaces it: two
/// engines never manage the same object.)
pub const MIGRATED_APPLY_MANAGERS: &[&str] = &["argocd-controller"];

/// The `managedFields` to write so that `manager` owns what the migrated managers owned, or
/// `None` when the live object has no entry to migrate.
pub fn migrated_managed_fields(live: &Value, manager: &str) -> Option<Vec<Value>> {
    let entries = live.pointer("/metadata/managedFields")?.as_array()?;
    let migrate = |e: &Value| {
        let managers = match e["operation"].as_str() {
            Some("Update") => MIGRATED_MANAGERS,
            Some("Apply") => MIGRATED_APPLY_MANAGERS,
            _ => return false,
        };
        e["manager"].as_str().is_some_and(|m| managers.contains(&m))
            && e.get("subresource").is_none()
    };
    if !entries.iter().any(migrate) {
        return None;
    }
    // One Apply entry per apiVersion: field sets are version-specific.
    let mut merged: Vec<Value> = Vec::new();
    let mut kept: Vec<Value> = Vec::new();
    for entry in entries {
        let is_ours = entry["manager"] == manager && entry["operation"] == "Apply";
        if !(is_ours || migrate(entry)) {
            kept.push(entry.clone());
            continue;
        }
        let api_version = entry["apiVersion"].clone();
        let fields = entry.get("fieldsV1").cloned().unwrap_or_else(|| json!({}));
        match merged.iter_mut().find(|m| m["apiVersion"] == api_version) {
            Some(target) => merge_fields(&mut target["fieldsV1"], &fields),
            None => {
                let mut ours = json!({
                    "apiVersion": api_version,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": fields,
                    "manager": manager,
                    "operation": "Apply",
                });
                if let Some(time) = entry.get("time") {
                    ours["time"] = time.clone();
                }
                merged.push(ours);
            }
        }
    }
    kept.extend(merged);
    Some(kept)
}

/// Union of two `fieldsV1` tries (`f:`/`k:`/`v:`/`i:` keys with `.` leaves).
fn merge_fields(into: &mut Value, from: &Value) {
    let (Some(into), Some(from)) = (into.as_object_mut(), from.as_object()) else {
        return;
    };
    for (key, value) in from {
        match into.get_mut(key) {
            Some(existing) => merge_fields(existing, value),
            None => {
                into.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The merge patch that installs migrated `managedFields`, guarded by `resourceVersion` so a
/// concurrent write makes it fail instead of losing ownership data.
pub fn migration_patch(live: &Value, managed_fields: Vec<Value>) -> Value {
    let mut meta = Map::new();
    meta.insert("managedFields".into(), Value::Array(managed_fields));
    if let Some(rv) = live.pointer("/metadata/resourceVersion") {
        meta.insert("resourceVersion".into(), rv.clone());
    }
    json!({ "metadata": meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live() -> Value {
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "settings", "namespace": "payments", "resourceVersion": "4711",
                "managedFields": [
                    {"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl-client-side-apply",
                     "operation": "Update", "time": "2026-11-29T10:00:00Z",
                     "fieldsV1": {"f:data": {".": {}, "f:a": {}, "f:b": {}},
                                  "f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}}}},
                    {"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "plumb-controller",
                     "operation": "Apply", "time": "2026-11-29T10:05:00Z",
                     "fieldsV1": {"f:data": {"f:c": {}}}},
                    {"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl-edit",
                     "operation": "Update", "time": "2026-11-29T10:06:00Z",
                     "fieldsV1": {"f:data": {"f:d": {}}}}
                ]
            },
            "data": {"a": "1", "b": "2", "c": "3", "d": "4"}
        })
    }

    #[test]
    fn client_side_fields_move_into_the_apply_entry() {
        let fields = migrated_managed_fields(&live(), "plumb-controller").unwrap();
        assert_eq!(fields.len(), 2, "{fields:#?}");
        assert_eq!(
            fields[0]["manager"], "kubectl-edit",
            "other managers are untouched"
        );
        let ours = &fields[1];
        assert_eq!(ours["manager"], "plumb-controller");
        assert_eq!(ours["operation"], "Apply");
        assert_eq!(
            ours["fieldsV1"]["f:data"],
            json!({".": {}, "f:a": {}, "f:b": {}, "f:c": {}})
        );
        assert!(ours["fieldsV1"]["f:metadata"]["f:annotations"].is_object());
        let patch = migration_patch(&live(), fields);
        assert_eq!(patch["metadata"]["resourceVersion"], "4711");
    }

    /// An object Argo CD applied client-side (an `Update` entry) and another it applied
    /// server-side (an `Apply` entry): both are Plumb's after the switch, the status subresource
    /// entry stays the status writer's.
    #[test]
    fn argo_cd_fields_move_into_the_apply_entry() {
        let entry = |op: &str, sub: Option<&str>, field: &str| {
            let mut e = json!({"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "argocd-controller",
                "operation": op, "fieldsV1": {"f:data": {(field): {}}}});
            if let Some(sub) = sub {
                e["subresource"] = json!(sub);
            }
            e
        };
        for op in ["Update", "Apply"] {
            let obj = json!({"metadata": {"managedFields": [
                entry(op, None, "f:LOG_LEVEL"),
                entry("Update", Some("status"), "f:x"),
            ]}});
            let fields = migrated_managed_fields(&obj, "plumb-controller").unwrap();
            assert_eq!(fields.len(), 2, "{op}: {fields:#?}");
            assert_eq!(fields[0]["subresource"], "status", "{op}: kept as it was");
            assert_eq!(fields[1]["manager"], "plumb-controller");
            assert_eq!(fields[1]["operation"], "Apply");
            assert_eq!(fields[1]["fieldsV1"]["f:data"], json!({"f:LOG_LEVEL": {}}));
        }
    }

    /// Another tool's server-side apply keeps its fields: only Argo CD's are taken over.
    #[test]
    fn other_server_side_managers_keep_their_fields() {
        let obj = json!({"metadata": {"managedFields": [
            {"apiVersion": "v1", "manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:data": {"f:a": {}}}},
            {"apiVersion": "v1", "manager": "kubectl-client-side-apply", "operation": "Apply", "fieldsV1": {"f:data": {"f:b": {}}}}
        ]}});
        assert_eq!(migrated_managed_fields(&obj, "plumb-controller"), None);
    }

    #[test]
    fn nothing_to_migrate_without_client_side_managers() {
        let mut obj = live();
        obj["metadata"]["managedFields"]
            .as_array_mut()
            .unwrap()
            .remove(0);
        assert_eq!(migrated_managed_fields(&obj, "plumb-controller"), None);
        assert_eq!(
            migrated_managed_fields(&json!({"metadata": {}}), "plumb-controller"),
            None
        );
    }
}
