//! Repairs what the trip through Lua loses: an empty Lua table encodes as `[]`, so a map the
//! script did not touch (`resources: {}`) would come back as an empty list and the patch would
//! change its type. As Argo CD's `cleanReturnedObj`, an empty list where the object had a map
//! gets the object's value back, recursively through maps and lists.

use serde_json::{Map, Value};

/// The returned object with maps the round trip turned into empty lists restored from `old`.
pub(super) fn clean_returned(new: Value, old: &Value) -> Value {
    match (new, old) {
        (Value::Object(new), Value::Object(old)) => Value::Object(clean_map(new, old)),
        (new, _) => new,
    }
}

fn clean_map(mut new: Map<String, Value>, old: &Map<String, Value>) -> Map<String, Value> {
    for (key, old_value) in old {
        let Some(new_value) = new.remove(key) else {
            continue;
        };
        let cleaned = match (new_value, old_value) {
            (Value::Object(n), Value::Object(o)) => Value::Object(clean_map(n, o)),
            (Value::Array(n), Value::Object(_)) if n.is_empty() => old_value.clone(),
            (Value::Array(n), Value::Array(o)) => Value::Array(clean_array(n, o)),
            (n, _) => n,
        };
        new.insert(key.clone(), cleaned);
    }
    new
}

fn clean_array(new: Vec<Value>, old: &[Value]) -> Vec<Value> {
    new.into_iter()
        .enumerate()
        .map(|(i, n)| match (n, old.get(i)) {
            (Value::Object(n), Some(Value::Object(o))) => Value::Object(clean_map(n, o)),
            (Value::Array(n), Some(Value::Array(o))) => Value::Array(clean_array(n, o)),
            (n, _) => n,
        })
        .collect()
}

/// The JSON merge patch (RFC 7386) that turns `old` into `new`: changed and added fields, `null`
/// for removed ones, lists replaced whole. `None` when nothing changed.
pub fn merge_patch(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (key, old_value) in o {
                match n.get(key) {
                    None => {
                        patch.insert(key.clone(), Value::Null);
                    }
                    Some(new_value) => {
                        if let Some(p) = merge_patch(old_value, new_value) {
                            patch.insert(key.clone(), p);
                        }
                    }
                }
            }
            for (key, new_value) in n {
                if !o.contains_key(key) {
                    patch.insert(key.clone(), new_value.clone());
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        (o, n) if o == n => None,
        (_, n) => Some(n.clone()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn empty_lists_become_the_maps_they_were() {
        let old = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "resources": {}, "ports": []}]}}, "selector": {}}});
        let new = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "resources": [], "ports": []}]}}, "selector": []}});
        assert_eq!(clean_returned(new, &old), old);
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
