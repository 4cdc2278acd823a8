//! The JSON merge patch (RFC 7386) that turns one document into another, as Argo CD computes it
//! before patching an Application or a resource an action changed (`jsonpatch.CreateMergePatch`).

use serde_json::{Map, Value};

/// The JSON merge patch (RFC 7386) that turns `old` into `new`: changed and added members,
/// removed members as `null`, lists replaced whole; `None` when nothing changed.
pub fn merge_patch(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => object_patch(o, n),
        _ => (old != new).then(|| new.clone()),
    }
}

fn object_patch(old: &Map<String, Value>, new: &Map<String, Value>) -> Option<Value> {
    let mut patch = Map::new();
    for key in old.keys().filter(|k| !new.contains_key(*k)) {
        patch.insert(key.clone(), Value::Null);
    }
    for (key, value) in new {
        match old.get(key) {
            Some(before) => {
                if let Some(p) = merge_patch(before, value) {
                    patch.insert(key.clone(), p);
                }
            }
            None => {
                patch.insert(key.clone(), value.clone());
            }
        }
    }
    (!patch.is_empty()).then_some(Value::Object(patch))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patches_recurse_into_objects_and_replace_arrays() {
        let old = json!({"a": {"b": 1, "c": [1, 2]}, "d": "x"});
        let new = json!({"a": {"b": 1, "c": [2]}, "e": true});
        assert_eq!(
            merge_patch(&old, &new),
            Some(json!({"a": {"c": [2]}, "d": null, "e": true}))
        );
        assert_eq!(merge_patch(&old, &old), None);
    }

    #[test]
    fn merge_patch_has_only_changes() {
        let old = json!({"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2]});
        let new = json!({"a": 1, "b": {"c": 2, "f": 4}, "e": [1]});
        assert_eq!(
            merge_patch(&old, &new),
            Some(json!({"b": {"d": null, "f": 4}, "e": [1]}))
        );
        assert_eq!(merge_patch(&old, &old), None);
    }
}
