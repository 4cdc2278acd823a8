//! Argo's `NormalizeApplicationSpec`, which its ApplicationSet controller applies to every
//! generated Application before writing it ("to avoid fighting with the application
//! controller"): an empty `syncPolicy` and empty `helm`/`kustomize`/`directory` blocks are
//! dropped (a `directory` keeps a lone `include`/`exclude`). Done here so what `generate` shows is
//! what gets written.

use serde_json::{Map, Value};

/// `spec` normalised in place.
pub(crate) fn spec(spec: &mut Value) {
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let sync_zero = spec.get("syncPolicy").is_some_and(|p| {
        [
            "automated",
            "syncOptions",
            "retry",
            "managedNamespaceMetadata",
        ]
        .iter()
        .all(|k| {
            p.get(k)
                .is_none_or(|v| v.is_null() || v.as_array().is_some_and(Vec::is_empty))
        })
    });
    if sync_zero {
        spec.remove("syncPolicy");
    }
    if let Some(Value::Array(sources)) = spec
        .get_mut("sources")
        .filter(|s| s.as_array().is_some_and(|a| !a.is_empty()))
    {
        sources
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(source);
    } else if let Some(Value::Object(s)) = spec.get_mut("source") {
        source(s);
    }
}

fn source(source: &mut Map<String, Value>) {
    for key in ["helm", "kustomize"] {
        if source.get(key).is_some_and(deep_empty) {
            source.remove(key);
        }
    }
    let Some(Value::Object(dir)) = source.get("directory") else {
        return;
    };
    let zero = ["recurse", "jsonnet", "disableExtensionFilter"]
        .iter()
        .all(|k| dir.get(*k).is_none_or(deep_empty));
    if zero {
        let kept: Map<String, Value> = ["include", "exclude"]
            .iter()
            .filter_map(|k| {
                dir.get(*k)
                    .filter(|v| !deep_empty(v))
                    .map(|v| ((*k).to_string(), v.clone()))
            })
            .collect();
        if kept.is_empty() {
            source.remove("directory");
        } else {
            source.insert("directory".to_string(), Value::Object(kept));
        }
    }
}

/// Go's zero value of the field, recursively for objects.
fn deep_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.values().all(deep_empty),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn empty_blocks_are_dropped() {
        let mut s = json!({"syncPolicy": {"syncOptions": []},
                           "source": {"helm": {"valueFiles": [], "valuesObject": {}}, "kustomize": {"namePrefix": "a"},
                                      "directory": {"recurse": false, "include": "*.yaml"}}});
        super::spec(&mut s);
        assert_eq!(
            s,
            json!({"source": {"kustomize": {"namePrefix": "a"}, "directory": {"include": "*.yaml"}}})
        );
        let mut s =
            json!({"syncPolicy": {"automated": {}}, "source": {"directory": {"recurse": true}}});
        let before = s.clone();
        super::spec(&mut s);
        assert_eq!(s, before);
    }
}
