//! The committed CRDs in `deploy/crds/` are exactly what the Rust types generate.
//! `PLUMB_UPDATE_CRDS=1 cargo test -p plumb-model` rewrites them.

use serde_json::Value;

use plumb_model::crd::{app_project_crd, application_crd, application_set_crd, schema_hash};
use plumb_model::crd_check;

use crate::deploy;

fn check(file: &str, crd: Value) {
    let path = deploy().join("crds").join(file);
    let header = "# Generated from plumb-model's Rust types; do not edit.\n\
                  # Regenerate: PLUMB_UPDATE_CRDS=1 cargo test -p plumb-model --test it crds\n";
    let yaml = format!("{header}{}", serde_saphyr::to_string(&crd).unwrap());
    if std::env::var_os("PLUMB_UPDATE_CRDS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &yaml).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == yaml,
        "{} is stale: run `PLUMB_UPDATE_CRDS=1 cargo test -p plumb-model --test it crds`",
        path.display()
    );
}

/// The binary's schema constant (`crd_check::<constant>`) is the generated CRD's annotation;
/// with `PLUMB_UPDATE_CRDS` it is rewritten in src/crd_check.rs.
fn check_constant(constant: &str, current: &str, crd: &Value) {
    let generated = crd["metadata"]["annotations"][crd_check::SCHEMA_KEY]
        .as_str()
        .unwrap();
    if current == generated {
        return;
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/crd_check.rs");
    if std::env::var_os("PLUMB_UPDATE_CRDS").is_some() {
        let text = std::fs::read_to_string(&path).unwrap();
        let (head, tail) = text
            .split_once(&format!("pub const {constant}: &str ="))
            .unwrap();
        let (_, rest) = tail.split_once(';').unwrap();
        let text = format!("{head}pub const {constant}: &str =\n    \"{generated}\";{rest}");
        std::fs::write(&path, text).unwrap();
        return;
    }
    panic!(
        "crd_check::{constant} is {current}, the generated CRD's is {generated}: run `PLUMB_UPDATE_CRDS=1 cargo test -p plumb-model --test it crds`"
    );
}

#[test]
fn application_crd_is_up_to_date() {
    let crd = application_crd();
    check_constant("APPLICATION_SCHEMA", crd_check::APPLICATION_SCHEMA, &crd);
    check("application-crd.yaml", crd);
}

#[test]
fn appproject_crd_is_up_to_date() {
    let crd = app_project_crd();
    check_constant("APP_PROJECT_SCHEMA", crd_check::APP_PROJECT_SCHEMA, &crd);
    check("appproject-crd.yaml", crd);
}

#[test]
fn applicationset_crd_is_up_to_date() {
    let crd = application_set_crd();
    check_constant(
        "APPLICATION_SET_SCHEMA",
        crd_check::APPLICATION_SET_SCHEMA,
        &crd,
    );
    check("applicationset-crd.yaml", crd);
}

/// The hash covers the spec only, and not serde_json's map order.
#[test]
fn schema_hash_covers_the_spec_in_any_key_order() {
    let crd = application_crd();
    let spec = &crd["spec"];
    let reversed: serde_json::Map<String, Value> = spec
        .as_object()
        .unwrap()
        .iter()
        .rev()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(schema_hash(spec), schema_hash(&Value::Object(reversed)));
    let mut changed = spec.clone();
    changed["names"]["shortNames"] = serde_json::json!(["app"]);
    assert_ne!(schema_hash(spec), schema_hash(&changed));
    assert_eq!(
        crd["metadata"]["annotations"][crd_check::SCHEMA_KEY],
        schema_hash(spec)
    );
    assert_eq!(
        crd["metadata"]["annotations"][crd_check::VERSION_KEY],
        env!("CARGO_PKG_VERSION")
    );
}

/// Walks a schema and returns the first non-structural node: every node needs a `type` unless it
/// preserves unknown fields or is int-or-string, and `default` is never set (it would add fields).
fn first_non_structural(node: &Value, path: &str) -> Option<String> {
    let obj = node.as_object()?;
    let exempt = obj.contains_key("x-kubernetes-preserve-unknown-fields")
        || obj.contains_key("x-kubernetes-int-or-string");
    if !exempt && !obj.contains_key("type") {
        return Some(format!("{path}: no type"));
    }
    for banned in ["default", "anyOf", "oneOf", "allOf", "$ref", "nullable"] {
        if obj.contains_key(banned) {
            return Some(format!("{path}: has {banned}"));
        }
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            if let Some(bad) = first_non_structural(v, &format!("{path}.{k}")) {
                return Some(bad);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(bad) = obj
            .get(key)
            .and_then(|v| first_non_structural(v, &format!("{path}[{key}]")))
        {
            return Some(bad);
        }
    }
    None
}

#[test]
fn schemas_are_structural() {
    for crd in [application_crd(), app_project_crd(), application_set_crd()] {
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(first_non_structural(schema, "$"), None);
        // The API server rejects any other keyword on metadata, even a description.
        assert_eq!(
            schema["properties"]["metadata"],
            serde_json::json!({"type": "object"})
        );
    }
    let app = application_crd();
    let spec = &app["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(
        spec["properties"]["source"]["properties"]["helm"]["properties"]["valuesObject"],
        serde_json::json!({"x-kubernetes-preserve-unknown-fields": true, "description": "Inline values as a structured object (free form)."})
    );
    let phase = &app["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
        ["operationState"]["properties"]["phase"];
    assert_eq!(
        phase["enum"],
        serde_json::json!(["Running", "Terminating", "Failed", "Error", "Succeeded"])
    );
    assert_eq!(
        app["spec"]["names"]["shortNames"],
        serde_json::json!(["app", "apps"])
    );
}

/// Generators nest without end: their configuration is kept as written below the generator
/// kind, and the template's spec is rendered before it is read.
#[test]
fn applicationset_schema_keeps_generators_and_template_spec() {
    let crd = application_set_crd();
    let root = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
    let generator = &root["spec"]["properties"]["generators"]["items"]["properties"];
    assert_eq!(
        generator["matrix"],
        serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        root["spec"]["properties"]["template"]["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"],
        true
    );
    assert_eq!(
        crd["spec"]["names"]["shortNames"],
        serde_json::json!(["appset", "appsets"])
    );
    assert_eq!(crd["spec"]["versions"][0]["subresources"], serde_json::json!({"status": {}}));
}
