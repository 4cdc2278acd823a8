//! CustomResourceDefinitions for [`Application`], [`AppProject`] and ApplicationSet, generated from the Rust types
//! so the API server's schema and Plumb's serde model cannot drift apart.
//!
//! `deploy/crds/*.yaml` are these objects written out; plumb-model's tests fail when the committed
//! files are stale (`PLUMB_UPDATE_CRDS=1 cargo test -p plumb-model` rewrites them).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::application::{AppProject, Application, GROUP, VERSION};
use crate::schema::structural;

/// The `applications.argoproj.io` CRD.
pub fn application_crd() -> Value {
    crd::<Application>(
        Names {
            kind: "Application",
            plural: "applications",
            short: &["app", "apps"],
        },
        json!([
            {"name": "Sync Status", "type": "string", "jsonPath": ".status.sync.status"},
            {"name": "Health Status", "type": "string", "jsonPath": ".status.health.status"},
            {"name": "Revision", "type": "string", "jsonPath": ".status.sync.revision", "priority": 10},
            {"name": "Project", "type": "string", "jsonPath": ".spec.project", "priority": 10}
        ]),
    )
}

/// The `appprojects.argoproj.io` CRD.
pub fn app_project_crd() -> Value {
    crd::<AppProject>(
        Names {
            kind: "AppProject",
            plural: "appprojects",
            short: &["appproj", "appprojs"],
        },
        json!([]),
    )
}

/// The `applicationsets.argoproj.io` CRD (Argo's has no printer columns).
pub fn application_set_crd() -> Value {
    crd::<crate::applicationset::ApplicationSet>(
        Names {
            kind: "ApplicationSet",
            plural: "applicationsets",
            short: &["appset", "appsets"],
        },
        json!([]),
    )
}

/// The structural `openAPIV3Schema` of a type.
pub fn structural_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    structural(generator.into_root_schema_for::<T>().to_value())
}

struct Names {
    kind: &'static str,
    plural: &'static str,
    short: &'static [&'static str],
}

fn crd<T: JsonSchema>(names: Names, printer_columns: Value) -> Value {
    let mut schema = structural_schema::<T>();
    // The API server validates metadata itself and rejects a CRD that says more than its type.
    schema["properties"]["metadata"] = json!({"type": "object"});
    let mut version = json!({
        "name": VERSION,
        "served": true,
        "storage": true,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {"status": {}},
    });
    if printer_columns.as_array().is_some_and(|c| !c.is_empty()) {
        version["additionalPrinterColumns"] = printer_columns;
    }
    let name = format!("{}.{GROUP}", names.plural);
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": name,
            "labels": {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "plumb"},
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": names.kind,
                "listKind": format!("{}List", names.kind),
                "plural": names.plural,
                "singular": names.kind.to_lowercase(),
                "shortNames": names.short,
            },
            "scope": "Namespaced",
            "versions": [version],
        },
    });
    crd["metadata"]["annotations"] = json!({
        crate::crd_check::SCHEMA_KEY: schema_hash(&crd["spec"]),
        crate::crd_check::VERSION_KEY: crate::crd_check::VERSION,
    });
    crd
}

/// `sha256:<hex>` of `spec` written with sorted keys and no spaces, so the hash does not depend
/// on serde_json's map order (its `preserve_order` feature may be on in one build and not in
/// another).
pub fn schema_hash(spec: &Value) -> String {
    use sha2::Digest as _;
    let mut text = String::new();
    canonical(spec, &mut text);
    let digest = sha2::Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
