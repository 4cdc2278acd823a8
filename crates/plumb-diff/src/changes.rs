//! The field-level comparison of normalized live and predicted live: which fields differ, with
//! list elements paired by their merge key (so a change inside one container names that
//! container, not an index). Also [`set_at`], which writes one path back (the server-side
//! strategy uses it to revert webhook-only changes).

use std::collections::{BTreeSet, HashMap};

use plumb_model::GroupKind;
use serde_json::Value;

use crate::merge_keys::MergeKeys;
use crate::path::{FieldPath, Segment, key_value_text};
use crate::result::{ChangeOp, FieldChange};

/// The fields that differ between `live` and `predicted`, in path order.
pub(crate) fn field_changes(gk: &GroupKind, live: &Value, predicted: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk(
        gk,
        MergeKeys::builtin(),
        &FieldPath::default(),
        Some(live),
        Some(predicted),
        &mut out,
    );
    out
}

fn push(
    out: &mut Vec<FieldChange>,
    path: &FieldPath,
    live: Option<&Value>,
    predicted: Option<&Value>,
) {
    let op = match (live, predicted) {
        (None, Some(_)) => ChangeOp::Added,
        (Some(_), None) => ChangeOp::Removed,
        _ => ChangeOp::Changed,
    };
    out.push(FieldChange {
        path: path.clone(),
        op,
        live: live.cloned(),
        predicted: predicted.cloned(),
        attribution: None,
    });
}

/// The merge key of the list at `path`, when every element of both lists carries it.
pub(crate) fn list_key<'a>(
    gk: &GroupKind,
    keys: &'a MergeKeys,
    path: &FieldPath,
    lists: &[&[Value]],
) -> Option<&'a str> {
    let key = keys.key_for(gk, &path.shape())?;
    let all_keyed = lists
        .iter()
        .all(|l| l.iter().all(|e| e.get(key).is_some_and(|v| !v.is_null())));
    all_keyed.then_some(key)
}

fn walk(
    gk: &GroupKind,
    keys: &MergeKeys,
    path: &FieldPath,
    live: Option<&Value>,
    predicted: Option<&Value>,
    out: &mut Vec<FieldChange>,
) {
    match (live, predicted) {
        (Some(Value::Object(l)), Some(Value::Object(p))) => {
            let names: BTreeSet<&String> = l.keys().chain(p.keys()).collect();
            for name in names {
                walk(
                    gk,
                    keys,
                    &path.child(Segment::Key(name.clone())),
                    l.get(name),
                    p.get(name),
                    out,
                );
            }
        }
        (Some(Value::Array(l)), Some(Value::Array(p))) => {
            if let Some(key) = list_key(gk, keys, path, &[l, p]) {
                let seg = |e: &Value| Segment::Keyed {
                    field: key.to_string(),
                    value: e.get(key).map(key_value_text).unwrap_or_default(),
                };
                let live_by: HashMap<Segment, &Value> = l.iter().map(|e| (seg(e), e)).collect();
                let pred_by: HashMap<Segment, &Value> = p.iter().map(|e| (seg(e), e)).collect();
                let mut order: Vec<Segment> = p.iter().map(seg).collect();
                order.extend(l.iter().map(seg).filter(|s| !pred_by.contains_key(s)));
                let before = out.len();
                for s in &order {
                    walk(
                        gk,
                        keys,
                        &path.child(s.clone()),
                        live_by.get(s).copied(),
                        pred_by.get(s).copied(),
                        out,
                    );
                }
                // Same elements in another order still differ.
                if out.len() == before && l != p {
                    push(out, path, live, predicted);
                }
            } else if l.len() == p.len() {
                for (i, (a, b)) in l.iter().zip(p).enumerate() {
                    walk(
                        gk,
                        keys,
                        &path.child(Segment::Index(i)),
                        Some(a),
                        Some(b),
                        out,
                    );
                }
            } else {
                push(out, path, live, predicted);
            }
        }
        (a, b) if a == b => {}
        (a, b) => push(out, path, a, b),
    }
}

/// Sets (or with `None`, removes) the value at `path` in `root`, finding list elements by
/// merge key or index. Returns false when the path's parent does not exist.
pub(crate) fn set_at(root: &mut Value, path: &FieldPath, value: Option<Value>) -> bool {
    let Some((last, parents)) = path.0.split_last() else {
        if let Some(v) = value {
            *root = v;
        }
        return true;
    };
    let mut cur = root;
    for seg in parents {
        let next = match seg {
            Segment::Key(k) => cur.get_mut(k),
            Segment::Index(i) => cur.get_mut(*i),
            Segment::Keyed { field, value } => cur.as_array_mut().and_then(|a| {
                a.iter_mut()
                    .find(|e| e.get(field).map(key_value_text).as_deref() == Some(value))
            }),
        };
        let Some(next) = next else { return false };
        cur = next;
    }
    match (last, value) {
        (Segment::Key(k), Some(v)) => match cur.as_object_mut() {
            Some(m) => {
                m.insert(k.clone(), v);
                true
            }
            None => false,
        },
        (Segment::Key(k), None) => cur.as_object_mut().is_some_and(|m| m.remove(k).is_some()),
        (Segment::Index(i), v) => match cur.as_array_mut() {
            Some(a) if *i < a.len() => {
                match v {
                    Some(v) => a[*i] = v,
                    None => {
                        a.remove(*i);
                    }
                }
                true
            }
            Some(a) if *i == a.len() && v.is_some() => {
                a.extend(v);
                true
            }
            _ => false,
        },
        (Segment::Keyed { field, value: kv }, v) => {
            let Some(a) = cur.as_array_mut() else {
                return false;
            };
            let pos = a
                .iter()
                .position(|e| e.get(field).map(key_value_text).as_deref() == Some(kv.as_str()));
            match (pos, v) {
                (Some(p), Some(v)) => a[p] = v,
                (Some(p), None) => {
                    a.remove(p);
                }
                (None, Some(v)) => a.push(v),
                (None, None) => return false,
            }
            true
        }
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
    fn keyed_lists_name_their_elements() {
        let live = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "x:1", "securityContext": {"runAsNonRoot": true}},
            {"name": "b", "image": "y:1"}]}}}});
        let pred = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "b", "image": "y:1"},
            {"name": "a", "image": "x:2", "securityContext": {}}]}}}});
        let changes = field_changes(&gk(), &live, &pred);
        let printed: Vec<String> = changes
            .iter()
            .map(|c| format!("{} {}", c.op.as_str(), c.path))
            .collect();
        assert_eq!(
            printed,
            [
                "changed spec.template.spec.containers[name=a].image",
                "removed spec.template.spec.containers[name=a].securityContext.runAsNonRoot",
            ]
        );
    }

    #[test]
    fn reorder_only_is_a_change_of_the_list() {
        let live =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}}});
        let pred =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "b"}, {"name": "a"}]}}}});
        let changes = field_changes(&gk(), &live, &pred);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].path.to_string(), "spec.template.spec.containers");
    }

    #[test]
    fn atomic_lists() {
        let live = json!({"spec": {"args": ["a", "b"], "tolerations": [{"key": "k"}]}});
        let pred =
            json!({"spec": {"args": ["a", "c"], "tolerations": [{"key": "k"}, {"key": "j"}]}});
        let printed: Vec<String> = field_changes(&gk(), &live, &pred)
            .iter()
            .map(|c| c.path.to_string())
            .collect();
        assert_eq!(printed, ["spec.args[1]", "spec.tolerations"]);
    }

    #[test]
    fn set_at_keyed_paths() {
        let mut v = json!({"spec": {"containers": [{"name": "a", "image": "x"}]}});
        let p = FieldPath(vec![
            Segment::Key("spec".into()),
            Segment::Key("containers".into()),
            Segment::Keyed {
                field: "name".into(),
                value: "a".into(),
            },
            Segment::Key("image".into()),
        ]);
        assert!(set_at(&mut v, &p, Some(json!("y"))));
        assert_eq!(v["spec"]["containers"][0]["image"], "y");
        assert!(set_at(&mut v, &p, None));
        assert_eq!(v["spec"]["containers"][0], json!({"name": "a"}));
    }
}
