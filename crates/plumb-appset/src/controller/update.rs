//! What one generated Application needs: created, patched or left alone (Argo's
//! `createOrUpdateInCluster` and `utils.CreateOrUpdate`), as a pure function of the generated
//! and the live object, so that a second reconcile with nothing changed writes nothing.
//!
//! Argo copies onto the live object only the generated spec, operation, annotations, labels and
//! finalizers (keeping the preserved annotations and labels and the pre/post-delete finalizers
//! of the live one), sets its controller reference, and patches when the result differs from
//! the live object once `ignoreApplicationDifferences` took the ignored fields out.

use serde_json::{Map, Value};

use plumb_diff::{IgnoreOptions, IgnoreRule, IgnoreRules};
use plumb_model::ResourceKey;
use plumb_model::application::{Application, ApplicationSpec};
use plumb_model::applicationset::ApplicationSet;

use super::owner;

/// Annotations every generated Application keeps from its live self (Argo's
/// `defaultPreservedAnnotations`): notifications' state, refresh and hydrate requests.
pub const DEFAULT_PRESERVED_ANNOTATIONS: &[&str] = &[
    "notified.notifications.argoproj.io",
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/hydrate",
];

/// Finalizers (prefixes) kept from the live Application: hooks in progress.
pub const PRESERVED_FINALIZERS: &[&str] = &[
    "pre-delete-finalizer.argocd.argoproj.io",
    "post-delete-finalizer.argocd.argoproj.io",
];

/// Argo's finalizer asking for the Application's resources to be deleted with it.
pub const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

/// What to do with one generated Application.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Create it (the whole object).
    Create(Value),
    /// Patch it with this JSON merge patch.
    Patch(Value),
    /// Nothing differs.
    Unchanged,
}

/// The rules of one set for updates.
pub struct Rules {
    annotations: Vec<String>,
    labels: Vec<String>,
    ignore: Option<IgnoreRules>,
}

impl Rules {
    /// The set's `preservedFields` and `ignoreApplicationDifferences` with the controller's
    /// global preserved keys. A bad pointer or jq expression is an error naming it.
    pub fn of(
        set: &ApplicationSet,
        global_annotations: &[String],
        global_labels: &[String],
    ) -> Result<Self, String> {
        let preserved = set.spec.preserved_fields.as_ref();
        let mut annotations: Vec<String> = preserved
            .and_then(|p| p.annotations.clone())
            .unwrap_or_default();
        annotations.extend(global_annotations.iter().cloned());
        annotations.extend(DEFAULT_PRESERVED_ANNOTATIONS.iter().map(|s| s.to_string()));
        let mut labels: Vec<String> = preserved.and_then(|p| p.labels.clone()).unwrap_or_default();
        labels.extend(global_labels.iter().cloned());
        let ignore = match set.spec.ignore_application_differences.as_deref() {
            None | Some([]) => None,
            Some(entries) => Some(compile_ignores(entries)?),
        };
        Ok(Self {
            annotations,
            labels,
            ignore,
        })
    }
}

fn compile_ignores(
    entries: &[plumb_model::applicationset::ApplicationSetResourceIgnoreDifferences],
) -> Result<IgnoreRules, String> {
    let rules = entries
        .iter()
        .enumerate()
        .map(|(i, e)| IgnoreRule {
            group: "argoproj.io".into(),
            kind: "Application".into(),
            name: e.name.clone().unwrap_or_default(),
            namespace: String::new(),
            json_pointers: e.json_pointers.clone().unwrap_or_default(),
            jq_path_expressions: e.jq_path_expressions.clone().unwrap_or_default(),
            managed_fields_managers: Vec::new(),
            origin: format!("ApplicationSet spec.ignoreApplicationDifferences[{i}]"),
        })
        .collect();
    let opts = IgnoreOptions {
        // Applications hold no Secret data: the guard rails for workloads do not apply.
        allow_sensitive: true,
        ..IgnoreOptions::default()
    };
    IgnoreRules::compile(rules, opts)
        .map_err(|e| format!("failed to build ignore diff config: {e}"))
}

/// The plan for `generated` given the `live` Application of the same name (if any).
/// `Err` carries Argo's message (e.g. the Application belongs to another set).
pub fn plan(
    set: &ApplicationSet,
    generated: &Application,
    live: Option<&Value>,
    rules: &Rules,
) -> Result<Plan, String> {
    let mut desired = serde_json::to_value(generated).map_err(|e| e.to_string())?;
    strip_to_template_fields(&mut desired);
    let Some(live) = live else {
        owner::set_controller(&mut desired, set)?;
        return Ok(Plan::Create(desired));
    };
    let before = normalized(live);
    let mut after = before.clone();
    copy_significant(&mut after, &desired, live, rules);
    owner::set_controller(&mut after, set)
        .map_err(|e| format!("error while wrapping using MutateFn: {e}"))?;
    if let Some(ignore) = &rules.ignore {
        let key = ResourceKey::new(
            "argoproj.io",
            "Application",
            generated.metadata.namespace.as_deref().unwrap_or_default(),
            generated.metadata.name.as_deref().unwrap_or_default(),
        );
        ignore.respect_live(&key, &mut after, &before);
    }
    let patch = merge_patch(&before, &after);
    Ok(match patch {
        Some(p) => Plan::Patch(p),
        None => Plan::Unchanged,
    })
}

/// Only what a generated Application may carry (`apiVersion`, `kind`, the template's metadata,
/// `spec`, `operation`); never a status.
fn strip_to_template_fields(app: &mut Value) {
    if let Some(obj) = app.as_object_mut() {
        obj.remove("status");
        obj.insert("apiVersion".into(), Value::from(owner::API_VERSION));
        obj.insert("kind".into(), Value::from("Application"));
    }
}

/// The live Application as the comparison sees it: its spec read and written back through the
/// typed model (Argo compares Go structs: absent and empty fields are the same), and only the
/// fields the controller writes.
fn normalized(live: &Value) -> Value {
    let mut out = Map::new();
    for k in ["apiVersion", "kind"] {
        if let Some(v) = live.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    let mut meta = Map::new();
    for k in [
        "name",
        "namespace",
        "annotations",
        "labels",
        "finalizers",
        "ownerReferences",
    ] {
        if let Some(v) = live.pointer(&format!("/metadata/{k}")) {
            meta.insert(k.into(), v.clone());
        }
    }
    out.insert("metadata".into(), Value::Object(meta));
    let spec = live.get("spec").cloned().unwrap_or(Value::Null);
    let spec = serde_json::from_value::<ApplicationSpec>(spec.clone())
        .ok()
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(spec);
    out.insert("spec".into(), spec);
    if let Some(op) = live.get("operation") {
        out.insert("operation".into(), op.clone());
    }
    Value::Object(out)
}

/// Argo's mutate function: spec, operation (only when generated), annotations and labels with
/// the preserved keys of the live object, finalizers with the live hook finalizers.
fn copy_significant(after: &mut Value, desired: &Value, live: &Value, rules: &Rules) {
    let Some(obj) = after.as_object_mut() else {
        return;
    };
    obj.insert(
        "spec".into(),
        desired.get("spec").cloned().unwrap_or(Value::Null),
    );
    if let Some(op) = desired.get("operation") {
        obj.insert("operation".into(), op.clone());
    }
    let annotations = with_preserved(desired, live, "annotations", &rules.annotations);
    let labels = with_preserved(desired, live, "labels", &rules.labels);
    let mut finalizers: Vec<Value> = desired
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for f in live
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = f.as_str().unwrap_or_default();
        if PRESERVED_FINALIZERS.iter().any(|p| name.starts_with(p)) {
            finalizers.push(f.clone());
        }
    }
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        set_or_remove(meta, "annotations", annotations.map(Value::Object));
        set_or_remove(meta, "labels", labels.map(Value::Object));
        set_or_remove(
            meta,
            "finalizers",
            (!finalizers.is_empty()).then_some(Value::Array(finalizers)),
        );
    }
}

fn set_or_remove(meta: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    match value {
        Some(v) => {
            meta.insert(key.into(), v);
        }
        None => {
            meta.remove(key);
        }
    }
}

/// The generated map `field` (annotations or labels) with the `keys` the live object has.
fn with_preserved(
    desired: &Value,
    live: &Value,
    field: &str,
    keys: &[String],
) -> Option<Map<String, Value>> {
    let mut map = desired
        .pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_object)
        .cloned();
    let live_map = live
        .pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_object);
    for key in keys {
        if let Some(v) = live_map.and_then(|m| m.get(key)) {
            map.get_or_insert_with(Map::new)
                .insert(key.clone(), v.clone());
        }
    }
    map.filter(|m| !m.is_empty())
}

/// The RFC 7386 JSON merge patch turning `from` into `to`, or `None` when they are equal.
pub fn merge_patch(from: &Value, to: &Value) -> Option<Value> {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut patch = Map::new();
            for (k, v) in b {
                match a.get(k) {
                    Some(old) => {
                        if let Some(p) = merge_patch(old, v) {
                            patch.insert(k.clone(), p);
                        }
                    }
                    None => {
                        patch.insert(k.clone(), v.clone());
                    }
                }
            }
            for k in a.keys() {
                if !b.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        // A merge patch replaces anything that is not an object, and cannot set an object
        // member to null: null members of `to` are left out by the serialiser anyway.
        _ if from == to => None,
        _ => Some(to.clone()),
    }
}

#[cfg(test)]
mod tests;
