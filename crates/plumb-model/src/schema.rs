//! Schema pieces the derives cannot express, and the rewrite of schemars' JSON Schema into a
//! Kubernetes structural schema (what a CRD's `openAPIV3Schema` must be).
//!
//! The rewrite inlines everything, drops `null` alternatives (absent is how Kubernetes says "not
//! set"), turns `const`/`oneOf` enumerations into `enum`, and removes `default` so the API server
//! never adds fields to stored objects.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value};

use crate::GroupKind;
use crate::application::ClusterResourceRestrictionItem;

/// A free-form field: any JSON, kept as written.
pub(crate) fn preserve_unknown(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
}

/// A free-form object (an ApplicationSet's template `spec`, rendered before it is read).
pub(crate) fn preserve_unknown_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
}

/// A list of free-form objects (`status.resources` of an ApplicationSet).
pub(crate) fn preserve_unknown_objects(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }
    })
}

/// An ApplicationSet's `generators`: each generator kind is named, its configuration kept as
/// written. Generators nest (matrix and merge hold generators, and generators hold template
/// overrides): a typed schema would recurse, which a structural schema cannot, and Argo's own
/// CRD is a 1.5 MB unrolling of two levels.
pub(crate) fn appset_generators(_: &mut SchemaGenerator) -> Schema {
    let kinds = [
        "list",
        "clusters",
        "git",
        "scmProvider",
        "clusterDecisionResource",
        "pullRequest",
        "matrix",
        "merge",
        "selector",
        "plugin",
        "oci",
    ];
    let properties: Map<String, Value> = kinds
        .iter()
        .map(|k| {
            (
                k.to_string(),
                serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            )
        })
        .collect();
    json_schema!({
        "type": "array",
        "items": { "type": "object", "properties": properties }
    })
}

/// A Kubernetes int-or-string field.
pub(crate) fn int_or_string(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-int-or-string": true })
}

/// `metadata`: the API server validates it itself; a CRD may only say it is an object.
pub(crate) fn object_meta(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object" })
}

impl JsonSchema for GroupKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GroupKind".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "An API group (empty for core) and kind; `*` matches any.",
            "type": "object",
            "required": ["group", "kind"],
            "properties": {
                "group": { "type": "string" },
                "kind": { "type": "string" }
            }
        })
    }
}

impl JsonSchema for ClusterResourceRestrictionItem {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ClusterResourceRestrictionItem".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A cluster-scoped API group and kind (`*` matches any), and optionally a name pattern (Go's filepath.Match syntax); without a name, every object of the group and kind.",
            "type": "object",
            "required": ["group", "kind"],
            "properties": {
                "group": { "type": "string" },
                "kind": { "type": "string" },
                "name": { "type": "string" }
            }
        })
    }
}

/// `format` values the API server knows; schemars' others (`uint`, `uint32`...) are dropped.
const KUBERNETES_FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
];

/// Rewrites an inlined JSON Schema into a structural schema.
pub(crate) fn structural(schema: Value) -> Value {
    match schema {
        Value::Bool(_) => preserve_unknown_value(),
        Value::Object(map) => Value::Object(structural_object(map)),
        other => other,
    }
}

fn preserve_unknown_value() -> Value {
    let mut map = Map::new();
    map.insert(
        "x-kubernetes-preserve-unknown-fields".into(),
        Value::Bool(true),
    );
    Value::Object(map)
}

fn structural_object(mut map: Map<String, Value>) -> Map<String, Value> {
    for key in [
        "$schema",
        "title",
        "default",
        "examples",
        "$defs",
        "definitions",
    ] {
        map.remove(key);
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !KUBERNETES_FORMATS.contains(&f))
    {
        map.remove("format");
    }
    // `type: [T, "null"]` → `type: T`.
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        let single = if kept.len() == 1 {
            kept[0].clone()
        } else {
            Value::Array(kept)
        };
        map.insert("type".into(), single);
    }
    if let Some(value) = map.remove("const") {
        map.insert("enum".into(), Value::Array(vec![value]));
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.remove(combinator) {
            merge_alternatives(&mut map, combinator, branches);
        }
    }
    if let Some(Value::Object(props)) = map.remove("properties") {
        let props = props.into_iter().map(|(k, v)| (k, structural(v))).collect();
        map.insert("properties".into(), Value::Object(props));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = map.remove(key) {
            map.insert(key.into(), structural(sub));
        }
    }
    if map.is_empty() || map.keys().all(|k| k == "description") {
        map.insert(
            "x-kubernetes-preserve-unknown-fields".into(),
            Value::Bool(true),
        );
    }
    map
}

/// Folds `anyOf`/`oneOf` into the parent: drops `null` branches, merges a single remaining branch,
/// and turns a list of constant branches into one `enum`.
fn merge_alternatives(map: &mut Map<String, Value>, combinator: &str, branches: Vec<Value>) {
    let branches: Vec<Value> = branches
        .into_iter()
        .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
        .map(structural)
        .collect();
    let constants: Option<Vec<Value>> = branches
        .iter()
        .map(|b| b.get("enum").and_then(Value::as_array).cloned())
        .collect::<Option<Vec<_>>>()
        .map(|lists| lists.into_iter().flatten().collect());
    match constants {
        Some(values) if !values.is_empty() => {
            map.insert("type".into(), Value::String("string".into()));
            map.insert("enum".into(), Value::Array(values));
        }
        _ if branches.len() == 1 => {
            if let Some(Value::Object(only)) = branches.into_iter().next() {
                for (k, v) in only {
                    // The parent's own description wins over the inlined type's.
                    map.entry(k).or_insert(v);
                }
            }
        }
        _ => {
            map.insert(combinator.into(), Value::Array(branches));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nullable_refs_and_enums_become_structural() {
        let input = json!({
            "$schema": "x", "title": "T", "type": "object",
            "properties": {
                "a": {"description": "outer", "anyOf": [{"type": "object", "description": "inner",
                      "properties": {"n": {"type": ["integer", "null"], "format": "int64", "default": 3}}},
                      {"type": "null"}]},
                "b": {"oneOf": [{"type": "string", "const": "X", "description": "x"},
                                {"type": "string", "const": "Y"}]},
                "c": true,
                "d": {"type": "integer", "format": "uint32", "minimum": 0}
            }
        });
        let out = structural(input);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "a": {"description": "outer", "type": "object",
                          "properties": {"n": {"type": "integer", "format": "int64"}}},
                    "b": {"type": "string", "enum": ["X", "Y"]},
                    "c": {"x-kubernetes-preserve-unknown-fields": true},
                    "d": {"type": "integer", "minimum": 0}
                }
            })
        );
    }
}
