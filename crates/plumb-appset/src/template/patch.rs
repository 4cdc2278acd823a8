//! `templatePatch` as Argo's `applyTemplatePatch`: rendered like the template, read as JSON when it
//! starts with `{` and as YAML otherwise, then applied as a Kubernetes strategic merge patch on the
//! Application type (own code: Argo's Application has no list merge keys, so the strategic merge
//! is a JSON merge patch plus the `$patch` directive; a crate for the general case would bring a
//! schema registry for nothing). `spec.project` cannot be changed by a patch.

use serde_json::{Map, Value};

use super::walk::Renderer;
use super::{Failure, TemplateErrorKind};

const FIELD: &str = "templatePatch";

/// `app` with the rendered `text` applied.
pub(crate) fn apply(app: Value, text: &str, renderer: &Renderer<'_>) -> Result<Value, Failure> {
    let rendered = renderer.render(text, FIELD)?;
    let invalid = |message: String| (FIELD.to_string(), TemplateErrorKind::Patch(message));
    let patch = read(&rendered).map_err(invalid)?;
    let project = app["spec"]["project"].clone();
    let mut patched = match patch {
        // An empty patch (every `{{ if }}` false) changes nothing, as Go's "null" patch.
        Value::Null => return Ok(app),
        Value::Object(patch) => merge_object(as_object(app), patch),
        other => {
            return Err(invalid(format!(
                "expected an object, found {}",
                kind_name(&other)
            )));
        }
    };
    if let Err(e) = serde_json::from_value::<plumb_model::application::Application>(Value::Object(
        patched.clone(),
    )) {
        return Err(invalid(e.to_string()));
    }
    if let Some(spec) = patched.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("project".to_string(), project);
    }
    Ok(Value::Object(patched))
}

/// Argo's `ConvertYAMLToJSON`: JSON when the trimmed text starts with `{`, otherwise YAML (the
/// first document).
fn read(text: &str) -> Result<Value, String> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| e.to_string());
    }
    let docs = plumb_yaml::read_documents(text, FIELD).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().next().map_or(Value::Null, |d| d.value))
}

fn as_object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The strategic merge of `patch` into `target`: maps merged, `null` deletes, lists and scalars
/// replace; `$patch: replace` replaces a map, `$patch: delete` removes it.
fn merge_object(
    mut target: Map<String, Value>,
    mut patch: Map<String, Value>,
) -> Map<String, Value> {
    match patch.remove("$patch").as_ref().and_then(Value::as_str) {
        Some("replace") => return strip(patch),
        Some("delete") => return Map::new(),
        _ => {}
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            // Other directives ($retainKeys, $setElementOrder) only order or prune lists and keys
            // of types with merge keys, which Argo's Application has none of.
            continue;
        }
        match value {
            Value::Null => {
                target.remove(&key);
            }
            Value::Object(p) if is_delete(&p) => {
                target.remove(&key);
            }
            Value::Object(p) => {
                let t = target.remove(&key).map(as_object).unwrap_or_default();
                target.insert(key, Value::Object(merge_object(t, p)));
            }
            other => {
                target.insert(key, strip_value(other));
            }
        }
    }
    target
}

fn is_delete(p: &Map<String, Value>) -> bool {
    p.get("$patch").and_then(Value::as_str) == Some("delete")
}

fn strip(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k, strip_value(v)))
        .collect()
}

fn strip_value(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(strip(m)),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_value).collect()),
        other => other,
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
