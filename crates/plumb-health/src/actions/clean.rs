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
}
