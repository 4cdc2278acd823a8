//! The server-side strategy's own step: the dry-run result is the prediction, except that
//! changes the dry-run made to fields Plumb's field manager does not own are reverted to live
//! (mutating webhooks answer dry-runs too, and would otherwise show as permanent drift; Argo
//! does the same unless `IncludeMutationWebhook=true`). Our own code because Argo CD's rule
//! (gitops-engine `removeWebhookMutation`) is what users expect, field by field.

use std::cell::OnceCell;

use plumb_model::{FIELD_MANAGER, GroupKind};
use serde_json::{Map, Value};

use crate::changes::{field_changes, set_at};
use crate::managed_fields::{ManagedEntry, Ownership};
use crate::path::{FieldPath, Segment};

/// Reverts to live what the dry run changed in fields Plumb does not own, as Argo CD's
/// `removeWebhookMutation` does: a field counts as Plumb's when Plumb's field manager owns it
/// (or a whole value around it) in the dry-run result's managedFields (`predicted_managed`),
/// judged leaf by leaf, so owning one annotation does not make every annotation Plumb's. A
/// field the dry run removed stays removed only if Plumb owned it in `live` (a server-side apply
/// removes only what the applier owned). Beyond Argo CD, a field Plumb owned in `live` and no
/// longer declares keeps its predicted value: the apply lets it go back to its default, and
/// that change is real. Returns how many fields were reverted.
/// `live` is the normalized live object the prediction is compared with, `live_raw` the live
/// object as read (with its managedFields).
pub(crate) fn revert_unowned(
    gk: &GroupKind,
    predicted_managed: &[ManagedEntry],
    live_raw: &Value,
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
    let owners = Owners {
        predicted: ours,
        live_raw,
        live: OnceCell::new(),
    };
    let mut reverted = 0;
    for change in field_changes(gk, live, predicted) {
        reverted += revert_change(
            &owners,
            &change.path,
            change.live.as_ref(),
            change.predicted.as_ref(),
            predicted,
        );
    }
    reverted
}

/// Plumb's managedFields entries on both sides of a server-side diff.
struct Owners<'a> {
    predicted: Vec<&'a ManagedEntry>,
    live_raw: &'a Value,
    /// Read from `live_raw` when first needed: most differences are settled by the prediction's.
    live: OnceCell<Vec<ManagedEntry>>,
}

impl Owners<'_> {
    fn in_predicted(&self, path: &FieldPath) -> Ownership {
        self.predicted
            .iter()
            .map(|e| e.ownership(path))
            .max()
            .unwrap_or(Ownership::None)
    }

    fn in_live(&self, path: &FieldPath) -> Ownership {
        self.live
            .get_or_init(|| plumbs_entries(self.live_raw))
            .iter()
            .map(|e| e.ownership(path))
            .max()
            .unwrap_or(Ownership::None)
    }
}

/// Reverts one difference (`live` and `predicted` are the values at `path`, `None` when absent)
/// where Plumb does not own it, descending into maps Plumb owns only part of.
fn revert_change(
    owners: &Owners<'_>,
    path: &FieldPath,
    live: Option<&Value>,
    predicted: Option<&Value>,
    root: &mut Value,
) -> usize {
    if live == predicted {
        return 0;
    }
    let Some(predicted) = predicted else {
        if owners.in_live(path) == Ownership::None && set_at(root, path, live.cloned()) {
            return 1;
        }
        return 0;
    };
    match owners.in_predicted(path).max(owners.in_live(path)) {
        Ownership::Whole => 0,
        Ownership::None => usize::from(set_at(root, path, live.cloned())),
        Ownership::Part => {
            // Lists Plumb owns part of were paired element by element already; only maps that
            // appeared, vanished or changed type as a whole are left to take apart here.
            let Value::Object(fields) = predicted else {
                return 0;
            };
            let live_fields = live.and_then(Value::as_object);
            let mut reverted = 0;
            for (k, v) in fields {
                let at = path.child(Segment::Key(k.clone()));
                let l = live_fields.and_then(|m| m.get(k));
                reverted += revert_change(owners, &at, l, Some(v), root);
            }
            for (k, l) in live_fields.into_iter().flatten() {
                if !fields.contains_key(k) {
                    let at = path.child(Segment::Key(k.clone()));
                    reverted += revert_change(owners, &at, Some(l), None, root);
                }
            }
            reverted
        }
    }
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

    fn deployment_gk() -> GroupKind {
        GroupKind::new("apps", "Deployment")
    }

    /// Reverts `predicted` against `live` as the pipeline does: ownership from both sides'
    /// managedFields, compared without them.
    fn reverted(live: &Value, predicted: &Value) -> (Value, usize) {
        let managed = crate::managed_fields::managed_entries(predicted);
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("managedFields");
            }
            v
        };
        let mut out = strip(predicted);
        let n = revert_unowned(&deployment_gk(), &managed, live, &strip(live), &mut out);
        (out, n)
    }

    #[test]
    fn a_webhooks_annotation_is_reverted_though_plumb_owns_another_annotation() {
        // A mutating webhook stamps every request; the dry run carries a new stamp, owned by no
        // entry of Plumb's (Plumb owns `team` beside it).
        let mut live = applied();
        live["metadata"]["annotations"]["audit.example.com/seen"] = json!("10:00:00");
        let mut predicted = live.clone();
        predicted["metadata"]["annotations"]["audit.example.com/seen"] = json!("10:05:00");
        let (out, n) = reverted(&live, &predicted);
        assert_eq!(n, 1);
        assert_eq!(
            out["metadata"]["annotations"]["audit.example.com/seen"],
            "10:00:00"
        );
        // A webhook's annotation the live object does not have yet is taken out.
        let mut predicted = applied();
        predicted["metadata"]["annotations"]["sidecar.example.com/injected"] = json!("true");
        let (out, n) = reverted(&applied(), &predicted);
        assert_eq!(n, 1);
        assert_eq!(out["metadata"]["annotations"], json!({"team": "payments"}));
    }

    #[test]
    fn what_plumb_owns_keeps_the_dry_runs_value() {
        let live = applied();
        let mut predicted = applied();
        predicted["metadata"]["annotations"]["team"] = json!("search");
        predicted["spec"]["replicas"] = json!(4);
        let (out, n) = reverted(&live, &predicted);
        assert_eq!(n, 0);
        assert_eq!(out["metadata"]["annotations"]["team"], "search");
        assert_eq!(out["spec"]["replicas"], 4);
    }

    #[test]
    fn a_field_plumb_stops_declaring_shows_the_default_it_returns_to() {
        // Git no longer declares replicas: Plumb's apply lets go of it, the API server defaults
        // it to 1. Plumb owned it in the live object, so the change is real (Argo CD hides it).
        let mut live = applied();
        live["spec"]["replicas"] = json!(3);
        let mut predicted = applied();
        predicted["spec"]["replicas"] = json!(1);
        predicted["metadata"]["managedFields"][0]["fieldsV1"]
            .as_object_mut()
            .expect("fieldsV1")
            .remove("f:spec");
        let (out, n) = reverted(&live, &predicted);
        assert_eq!(n, 0);
        assert_eq!(out["spec"]["replicas"], 1);
    }

    #[test]
    fn a_removal_stands_only_where_plumb_owned_the_field() {
        // Git dropped the `team` annotation Plumb owned: removed. Another manager's label gone
        // from the answer (removed by someone between the read and the dry run) is restored.
        let mut live = applied();
        live["metadata"]["labels"]["tier"] = json!("frontend");
        live["metadata"]["managedFields"]
            .as_array_mut()
            .expect("entries")
            .push(json!({"manager": "kubectl-edit", "operation": "Update",
                         "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                         "fieldsV1": {"f:metadata": {"f:labels": {"f:tier": {}}}}}));
        let mut predicted = applied();
        predicted["metadata"]["annotations"]
            .as_object_mut()
            .expect("annotations")
            .remove("team");
        predicted["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("f:annotations");
        let (out, n) = reverted(&live, &predicted);
        assert_eq!(n, 1);
        assert_eq!(out["metadata"]["labels"]["tier"], "frontend");
        assert!(out["metadata"]["annotations"].get("team").is_none());
    }

    #[test]
    fn a_new_containers_defaults_are_left_out_and_its_declared_fields_kept() {
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "managedFields": []},
            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}});
        let mut predicted = live.clone();
        predicted["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .expect("containers")
            .push(json!({"name": "log", "image": "fluent-bit:3",
                         "imagePullPolicy": "IfNotPresent",
                         "terminationMessagePath": "/dev/termination-log"}));
        predicted["metadata"]["managedFields"] = json!([{
            "manager": "plumb-controller", "operation": "Apply", "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}},
                "k:{\"name\":\"log\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}}]);
        // As Argo CD: what the API server defaulted is nobody's, and left out.
        let (out, n) = reverted(&live, &predicted);
        assert_eq!(n, 2);
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"][1],
            json!({"name": "log", "image": "fluent-bit:3"})
        );
    }
}
