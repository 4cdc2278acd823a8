//! The offline strategy: predict live by merging desired onto live, with the live object's
//! `kubectl.kubernetes.io/last-applied-configuration` as the common base (what
//! `kubectl apply` does on the client).
//!
//! For each field: desired sets it (recursing into maps); a field in the base but no longer in
//! desired is removed (it was deleted from Git); a field only live has is kept (the server
//! defaulted it, or another manager owns it), so server defaults never show. Lists with a merge
//! key (`merge_keys`) are merged element by element by that key, in desired's order, keeping
//! live-only elements that were never applied; other lists are replaced, except that a list of
//! the same length is merged position by position so defaults inside its elements (ports,
//! tolerations) do not show either. A `null` in desired deletes the field, as in a merge patch.
//! Without a base (no annotation) nothing is deleted: Argo's two-way diff.

use std::collections::{HashMap, HashSet};

use plumb_model::GroupKind;
use serde_json::{Map, Value};

use crate::changes::list_key;
use crate::merge_keys::MergeKeys;
use crate::path::{FieldPath, Segment, key_value_text};

/// Predicted live object for `desired` applied over `live` with `base` as last applied.
pub(crate) fn predict(
    gk: &GroupKind,
    base: Option<&Value>,
    desired: &Value,
    live: &Value,
) -> Value {
    merge(
        gk,
        MergeKeys::builtin(),
        &FieldPath::default(),
        base,
        desired,
        Some(live),
    )
}

fn merge(
    gk: &GroupKind,
    keys: &MergeKeys,
    path: &FieldPath,
    base: Option<&Value>,
    desired: &Value,
    live: Option<&Value>,
) -> Value {
    match (desired, live) {
        (Value::Object(d), Some(Value::Object(l))) => {
            let mut out = l.clone();
            for (k, dv) in d {
                if dv.is_null() {
                    out.remove(k);
                    continue;
                }
                let child = path.child(Segment::Key(k.clone()));
                let merged = merge(gk, keys, &child, base.and_then(|b| b.get(k)), dv, l.get(k));
                out.insert(k.clone(), merged);
            }
            if let Some(Value::Object(b)) = base {
                for k in b.keys() {
                    if !d.contains_key(k) {
                        out.remove(k);
                    }
                }
            }
            Value::Object(out)
        }
        (Value::Array(d), Some(Value::Array(l))) => merge_lists(gk, keys, path, base, d, l),
        _ => strip_nulls(desired),
    }
}

fn merge_lists(
    gk: &GroupKind,
    keys: &MergeKeys,
    path: &FieldPath,
    base: Option<&Value>,
    d: &[Value],
    l: &[Value],
) -> Value {
    let base_list = base
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if let Some(key) = list_key(gk, keys, path, &[d, l, base_list]) {
        let id = |e: &Value| e.get(key).map(key_value_text).unwrap_or_default();
        let live_by: HashMap<String, &Value> = l.iter().map(|e| (id(e), e)).collect();
        let base_by: HashMap<String, &Value> = base_list.iter().map(|e| (id(e), e)).collect();
        let desired_ids: HashSet<String> = d.iter().map(id).collect();
        let mut out: Vec<Value> = d
            .iter()
            .map(|de| {
                let k = id(de);
                let child = path.child(Segment::Keyed {
                    field: key.to_string(),
                    value: k.clone(),
                });
                match live_by.get(&k) {
                    Some(le) => merge(gk, keys, &child, base_by.get(&k).copied(), de, Some(le)),
                    None => strip_nulls(de),
                }
            })
            .collect();
        // Live-only elements that were never applied (not in the base) belong to someone
        // else: keep them, right after the element that precedes them in live.
        let mut prev: Option<String> = None;
        for le in l {
            let k = id(le);
            if !desired_ids.contains(&k) && !base_by.contains_key(&k) {
                let at = prev
                    .as_ref()
                    .and_then(|p| out.iter().position(|e| id(e) == *p))
                    .map_or(0, |i| i + 1);
                out.insert(at, le.clone());
            }
            prev = Some(k);
        }
        return Value::Array(out);
    }
    if d.len() == l.len() {
        let same_len_base = (base_list.len() == d.len()).then_some(base_list);
        let out = d
            .iter()
            .zip(l)
            .enumerate()
            .map(|(i, (de, le))| {
                let b = same_len_base.and_then(|b| b.get(i));
                merge(gk, keys, &path.child(Segment::Index(i)), b, de, Some(le))
            })
            .collect();
        return Value::Array(out);
    }
    strip_nulls(&Value::Array(d.to_vec()))
}

/// Desired values copied as they are, minus `null` map entries (a null means "delete").
fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gk() -> GroupKind {
        GroupKind::new("apps", "Deployment")
    }

    #[test]
    fn server_defaults_are_kept() {
        let desired = json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "a", "image": "x:1"}]}}}});
        let live = json!({"spec": {"replicas": 2, "progressDeadlineSeconds": 600, "template": {"spec": {
            "dnsPolicy": "ClusterFirst", "containers": [{"name": "a", "image": "x:1", "imagePullPolicy": "IfNotPresent"}]}}}});
        assert_eq!(predict(&gk(), Some(&desired), &desired, &live), live);
    }

    #[test]
    fn removed_from_git_is_removed() {
        let base = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        let desired = json!({"metadata": {"labels": {"a": "1"}}});
        let live = json!({"metadata": {"labels": {"a": "1", "b": "2", "pod-template-hash": "x"}}});
        let p = predict(&gk(), Some(&base), &desired, &live);
        assert_eq!(
            p,
            json!({"metadata": {"labels": {"a": "1", "pod-template-hash": "x"}}})
        );
        // Two-way: without a base nothing is removed.
        assert_eq!(predict(&gk(), None, &desired, &live), live);
    }

    #[test]
    fn field_removed_from_live_comes_back() {
        let desired = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "securityContext": {"runAsNonRoot": true}}]}}}});
        let live = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "securityContext": {}}]}}}});
        let p = predict(&gk(), Some(&desired), &desired, &live);
        assert_eq!(
            p["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsNonRoot"],
            true
        );
    }

    #[test]
    fn keyed_list_merge() {
        let base = json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "old"}]}}}});
        let desired = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "2"}, {"name": "new", "image": "n"}]}}}});
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "1", "terminationMessagePath": "/dev/termination-log"},
            {"name": "injected", "image": "i"},
            {"name": "old", "image": "o"}]}}}});
        let p = predict(&gk(), Some(&base), &desired, &live);
        assert_eq!(
            p["spec"]["template"]["spec"]["containers"],
            json!([
            {"name": "a", "image": "2", "terminationMessagePath": "/dev/termination-log"},
            {"name": "injected", "image": "i"},
            {"name": "new", "image": "n"}])
        );
    }

    #[test]
    fn atomic_lists_merge_by_position_when_same_length() {
        let desired = json!({"spec": {"template": {"spec": {"tolerations": [{"key": "k", "operator": "Exists"}]}}}});
        let live = json!({"spec": {"template": {"spec": {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}}}});
        assert_eq!(predict(&gk(), Some(&desired), &desired, &live), live);
        let desired2 = json!({"spec": {"template": {"spec": {"tolerations": []}}}});
        assert_eq!(predict(&gk(), Some(&desired), &desired2, &live), desired2);
    }

    #[test]
    fn null_deletes() {
        let desired = json!({"spec": {"paused": null, "x": {"y": null, "z": 1}}});
        let live = json!({"spec": {"paused": true}});
        assert_eq!(
            predict(&gk(), None, &desired, &live),
            json!({"spec": {"x": {"z": 1}}})
        );
    }
}
