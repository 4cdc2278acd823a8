//! Secret `stringData` is write-only sugar for `data`: the API server base64-encodes it into
//! `data` and never returns it, so a desired Secret using `stringData` is compared as the
//! equivalent `data` (gitops-engine `normalizeSecret`). A `null` value in `data` is the empty
//! string: the API server returns an empty value as `null` (a nil byte slice).

use base64::Engine;
use serde_json::{Map, Value};

pub(super) fn fold_string_data(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let string_data = match map.remove("stringData") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if string_data.is_empty() && !map.get("data").is_some_and(Value::is_object) {
        return;
    }
    let data = map
        .entry("data")
        .or_insert_with(|| Value::Object(Map::new()));
    if data.is_null() {
        *data = Value::Object(Map::new());
    }
    let Some(data) = data.as_object_mut() else {
        return;
    };
    for (k, v) in string_data {
        let text = match v {
            Value::String(s) => s,
            Value::Null => String::new(),
            other => other.to_string(),
        };
        data.insert(
            k,
            Value::String(base64::engine::general_purpose::STANDARD.encode(text)),
        );
    }
    for v in data.values_mut() {
        if v.is_null() {
            *v = Value::String(String::new());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_data_value_is_the_empty_string_without_string_data() {
        let mut s = json!({"kind": "Secret", "data": {"a": null, "b": "Yg=="}});
        fold_string_data(&mut s);
        assert_eq!(s, json!({"kind": "Secret", "data": {"a": "", "b": "Yg=="}}));
    }

    #[test]
    fn string_data_folds_into_data() {
        let mut s = json!({"kind": "Secret", "data": {"a": "YQ==", "n": null}, "stringData": {"b": "hello", "a": "x"}});
        fold_string_data(&mut s);
        // stringData wins over data for the same key, as the API server does.
        assert_eq!(
            s,
            json!({"kind": "Secret", "data": {"a": "eA==", "b": "aGVsbG8=", "n": ""}})
        );
    }
}
