//! The committed CRDs in `deploy/crds/` are exactly what the Rust types generate.
//! `PLUMB_UPDATE_CRDS=1 cargo test -p plumb-model` rewrites them.

use serde_json::Value;

use plumb_model::crd::{app_project_crd, application_crd};

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

#[test]
fn application_crd_is_up_to_date() {
    check("application-crd.yaml", application_crd());
}

#[test]
fn appproject_crd_is_up_to_date() {
    check("appproject-crd.yaml", app_project_crd());
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
    for crd in [application_crd(), app_project_crd()] {
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
