//! The server-side strategy's own step: the dry-run result is the prediction, except that
//! changes the dry-run made to fields Plumb's field manager does not own are reverted to live
//! (mutating webhooks answer dry-runs too, and would otherwise show as permanent drift; Argo
//! does the same unless `IncludeMutationWebhook=true`).

use plumb_model::{FIELD_MANAGER, GroupKind};
use serde_json::{Map, Value};

use crate::changes::{field_changes, set_at};
use crate::managed_fields::ManagedEntry;
use crate::path::{FieldPath, Segment};

/// Reverts predicted fields that differ from live and that `plumb-controller` does not own
/// in the dry-run result's managedFields (`predicted_managed`). Returns how many were reverted.
pub(crate) fn revert_unowned(
    gk: &GroupKind,
    predicted_managed: &[ManagedEntry],
    live: &Value,
    predicted: &mut Value,
) -> usize {
    let ours: Vec<&ManagedEntry> = predicted_managed
        .iter()
        .filter(|e| e.manager == FIELD_MANAGER)
        .collect();
    if ours.is_empty() {
        // Without ownership data nothing can be told apart; keep the dry-run as it is.
        return 0;
    }
    let mut reverted = 0;
    for change in field_changes(gk, live, predicted) {
        let owned = ours.iter().any(|e| {
            // Owned if Plumb owns the field or any parent of it up to a list element.
            (1..=change.path.0.len())
                .rev()
                .any(|n| e.owns(&crate::path::FieldPath(change.path.0[..n].to_vec())))
        });
        if !owned && set_at(predicted, &change.path, change.live.clone()) {
            reverted += 1;
        }
    }
    reverted
}

/// What a server-side diff of `desired` against a live object depends on in that object (issue
/// #17: a dry run is the API server's costliest answer). A server-side apply of `desired` changes
/// only what Plumb declares or owns, so two live versions that differ only elsewhere (another
/// manager's annotations and labels, such as a Deployment's `deployment.kubernetes.io/revision`;
/// its managedFields entries; the status when Git declares none; the resourceVersion) get the
/// same dry-run answer but for those parts, which [`rebase_answer`] takes from the version at
/// hand. Without an entry of Plumb's in managedFields nothing can be told apart, and only the
/// status (when Git declares none) and the resourceVersion are left out.
pub fn answer_basis(live: &Value, desired: &Value) -> Value {
    let mut v = live.clone();
    if let Some(m) = v.as_object_mut()
        && desired.get("status").is_none()
    {
        m.remove("status");
    }
    let ours = plumbs_entries(live);
    let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) else {
        return v;
    };
    meta.remove("resourceVersion");
    if let Some(Value::Array(entries)) = meta.get_mut("managedFields") {
        entries.retain(|e| !is_status_entry(e) && (ours.is_empty() || is_plumbs(e)));
        if entries.is_empty() {
            meta.remove("managedFields");
        }
    }
    if ours.is_empty() {
        return v;
    }
    for field in ["annotations", "labels"] {
        let Some(map) = meta.get_mut(field).and_then(Value::as_object_mut) else {
            continue;
        };
        map.retain(|k, _| !foreign(&ours, desired, field, k));
        if map.is_empty() {
            meta.remove(field);
        }
    }
    v
}

/// The dry run's `answer` for a version with the same [`answer_basis`] as `live`, made the
/// answer for `live` itself: what the basis leaves out is taken from `live` (the apply does not
/// touch it), the rest is the answer's.
pub fn rebase_answer(answer: &Value, live: &Value, desired: &Value) -> Value {
    let mut v = answer.clone();
    let ours = plumbs_entries(answer);
    let Some(obj) = v.as_object_mut() else {
        return v;
    };
    if desired.get("status").is_none() {
        match live.get("status") {
            Some(st) => obj.insert("status".into(), st.clone()),
            None => obj.remove("status"),
        };
    }
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return v;
    };
    let live_meta = live.get("metadata").and_then(Value::as_object);
    let live_field = |f: &str| live_meta.and_then(|m| m.get(f));
    match live_field("resourceVersion") {
        Some(rv) => meta.insert("resourceVersion".into(), rv.clone()),
        None => meta.remove("resourceVersion"),
    };
    // The answer's own entries (Plumb's; all but the status ones when Plumb has none), live's
    // others.
    let from_answer = |e: &Value| !is_status_entry(e) && (ours.is_empty() || is_plumbs(e));
    let entries = |obj: Option<&Value>, answers: bool| -> Vec<Value> {
        obj.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|e| from_answer(e) == answers)
            .cloned()
            .collect()
    };
    let mut merged = entries(meta.get("managedFields"), true);
    merged.extend(entries(live_field("managedFields"), false));
    if merged.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(merged));
    }
    if ours.is_empty() {
        return v;
    }
    for field in ["annotations", "labels"] {
        let live_map = live_field(field).and_then(Value::as_object);
        let map = meta
            .entry(field)
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(map) = map.as_object_mut() else {
            continue;
        };
        map.retain(|k, _| !foreign(&ours, desired, field, k));
        for (k, val) in live_map.into_iter().flatten() {
            if foreign(&ours, desired, field, k) {
                map.insert(k.clone(), val.clone());
            }
        }
        if map.is_empty() {
            meta.remove(field);
        }
    }
    v
}

/// Plumb's own entries (not through the status subresource) in an object's managedFields.
fn plumbs_entries(obj: &Value) -> Vec<ManagedEntry> {
    crate::managed_fields::managed_entries(obj)
        .into_iter()
        .filter(|e| e.manager == FIELD_MANAGER && e.subresource != "status")
        .collect()
}

fn is_plumbs(entry: &Value) -> bool {
    entry.get("manager").and_then(Value::as_str) == Some(FIELD_MANAGER)
}

fn is_status_entry(entry: &Value) -> bool {
    entry.get("subresource").and_then(Value::as_str) == Some("status")
}

/// Whether annotation or label `key` (`field`) is neither declared by `desired` nor owned by
/// Plumb's entries `ours`.
fn foreign(ours: &[ManagedEntry], desired: &Value, field: &str, key: &str) -> bool {
    let declared = desired
        .pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_object)
        .is_some_and(|d| d.contains_key(key));
    let path = FieldPath(vec![
        Segment::Key("metadata".into()),
        Segment::Key(field.into()),
        Segment::Key(key.into()),
    ]);
    !declared
        && !ours
            .iter()
            .any(|e| e.owns(&path) || e.owns_whole_value_around(&path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A Deployment as `kubectl get -o yaml` shows it right after Plumb applied it.
    fn applied() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {
                "name": "web", "namespace": "shop", "uid": "5c1b", "resourceVersion": "4810",
                "generation": 1,
                "labels": {"app": "web"},
                "annotations": {"team": "payments"},
                "managedFields": [{
                    "manager": "plumb-controller", "operation": "Apply", "apiVersion": "apps/v1",
                    "time": "2026-12-02T10:00:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}},
                                                "f:annotations": {"f:team": {}}},
                                 "f:spec": {"f:replicas": {}}}
                }]
            },
            "spec": {"replicas": 2},
        })
    }

    fn desired() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"},
                            "annotations": {"team": "payments"}},
               "spec": {"replicas": 2}})
    }

    /// The same Deployment once its controller has written its revision and status.
    fn after_controller() -> Value {
        let mut v = applied();
        v["metadata"]["resourceVersion"] = json!("4815");
        v["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = json!("1");
        v["metadata"]["managedFields"]
            .as_array_mut()
            .expect("entries")
            .extend([
                json!({"manager": "kube-controller-manager", "operation": "Update",
                       "apiVersion": "apps/v1", "time": "2026-12-02T10:00:01Z",
                       "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:metadata": {"f:annotations": {
                           "f:deployment.kubernetes.io/revision": {}}}}}),
                json!({"manager": "kube-controller-manager", "operation": "Update",
                       "apiVersion": "apps/v1", "time": "2026-12-02T10:00:02Z",
                       "fieldsType": "FieldsV1", "subresource": "status",
                       "fieldsV1": {"f:status": {"f:replicas": {}}}}),
            ]);
        v["status"] = json!({"replicas": 2, "observedGeneration": 1});
        v
    }

    #[test]
    fn another_managers_annotation_and_the_status_leave_the_basis_as_it_was() {
        assert_eq!(
            answer_basis(&applied(), &desired()),
            answer_basis(&after_controller(), &desired())
        );
    }

    #[test]
    fn what_plumb_declares_or_owns_stays_in_the_basis() {
        let base = answer_basis(&after_controller(), &desired());
        // A declared annotation changed by someone else.
        let mut edited = after_controller();
        edited["metadata"]["annotations"]["team"] = json!("search");
        assert_ne!(answer_basis(&edited, &desired()), base);
        // A field Plumb owns.
        let mut scaled = after_controller();
        scaled["spec"]["replicas"] = json!(5);
        assert_ne!(answer_basis(&scaled, &desired()), base);
        // Any other content: a field nobody declared is defaulted or written by someone else.
        let mut other = after_controller();
        other["spec"]["paused"] = json!(true);
        assert_ne!(answer_basis(&other, &desired()), base);
        // An annotation Plumb owns but Git no longer declares: the next apply removes it.
        let mut undeclared = desired();
        undeclared["metadata"]["annotations"] = json!({});
        assert_ne!(
            answer_basis(&after_controller(), &undeclared)["metadata"]["annotations"]["team"],
            Value::Null
        );
    }

    #[test]
    fn without_plumbs_entry_only_status_and_version_are_left_out() {
        let mut foreign = after_controller();
        foreign["metadata"]["managedFields"]
            .as_array_mut()
            .expect("entries")
            .remove(0);
        let mut moved = foreign.clone();
        moved["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = json!("2");
        assert_ne!(
            answer_basis(&foreign, &desired()),
            answer_basis(&moved, &desired())
        );
        let mut status_only = foreign.clone();
        status_only["status"]["replicas"] = json!(3);
        status_only["metadata"]["resourceVersion"] = json!("9999");
        assert_eq!(
            answer_basis(&foreign, &desired()),
            answer_basis(&status_only, &desired())
        );
    }

    #[test]
    fn a_status_git_declares_stays_in_the_basis() {
        let mut d = desired();
        d["status"] = json!({"replicas": 2});
        assert_ne!(
            answer_basis(&applied(), &d),
            answer_basis(&after_controller(), &d)
        );
    }

    #[test]
    fn an_answer_rebased_on_a_later_version_is_that_versions_answer() {
        // The apply's answer, then the Deployment controller's annotation and status.
        let rebased = rebase_answer(&applied(), &after_controller(), &desired());
        assert_eq!(rebased, after_controller());
        // Status and versions follow live; Plumb's fields stay the answer's.
        let mut answer = applied();
        answer["spec"]["replicas"] = json!(3);
        let rebased = rebase_answer(&answer, &after_controller(), &desired());
        assert_eq!(rebased["spec"]["replicas"], 3);
        assert_eq!(rebased["metadata"]["resourceVersion"], "4815");
        assert_eq!(
            rebased["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
            "1"
        );
        assert_eq!(rebased["status"]["observedGeneration"], 1);
        // An annotation that went away in live goes away from the answer too.
        let rebased = rebase_answer(&after_controller(), &applied(), &desired());
        assert_eq!(rebased, applied());
    }
}
