//! Script lookup order: settings keys, legacy map with globs, directories, wildcard directories.

use std::collections::BTreeMap;

use plumb_health::{Assessor, Config, HealthCode};
use plumb_model::Settings;
use serde_json::{Value, json};

use crate::support::{fixture, testdata};

fn script(message: &str) -> String {
    format!("return {{status = \"Degraded\", message = \"{message}\"}}")
}

fn settings(pairs: &[(&str, &str)]) -> Settings {
    Settings::from_data(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn message(assessor: &Assessor, obj: &Value) -> String {
    assessor
        .assess(obj)
        .map(|h| h.message)
        .unwrap_or_else(|| "<none>".into())
}

fn obj(api_version: &str, kind: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "y"}})
}

#[test]
fn split_settings_key_overrides_builtin_rule() {
    let s = settings(&[(
        "resource.customizations.health.apps_Deployment",
        &script("from settings"),
    )]);
    let a = Assessor::new(Config::default().settings(s)).unwrap();
    assert_eq!(
        message(&a, &fixture("deployment-healthy.yaml")),
        "from settings"
    );
}

#[test]
fn core_kind_key_has_no_group() {
    let s = settings(&[(
        "resource.customizations.health.PersistentVolumeClaim",
        &script("pvc script"),
    )]);
    let a = Assessor::new(Config::default().settings(s)).unwrap();
    assert_eq!(message(&a, &fixture("pvc-pending.yaml")), "pvc script");
}

#[test]
fn legacy_map_exact_and_glob_entries() {
    let legacy = r#"
ec2.aws.crossplane.io/*:
  health.lua: |
    return {status = "Degraded", message = "ec2 glob"}
"*.aws.crossplane.io/*":
  health.lua: |
    return {status = "Degraded", message = "aws glob"}
s3.aws.crossplane.io/Bucket:
  health.lua: |
    return {status = "Healthy", message = "bucket exact"}
  ignoreDifferences: |
    jsonPointers:
    - /spec/forProvider/tags
"#;
    let s = settings(&[("resource.customizations", legacy)]);
    let a = Assessor::new(Config::default().settings(s)).unwrap();
    assert_eq!(
        message(&a, &obj("s3.aws.crossplane.io/v1beta1", "Bucket")),
        "bucket exact"
    );
    // Both globs match; the first in key order wins (Argo's choice depends on map order).
    assert_eq!(
        message(&a, &obj("ec2.aws.crossplane.io/v1beta1", "Instance")),
        "aws glob"
    );
    assert_eq!(
        message(&a, &obj("rds.aws.crossplane.io/v1beta1", "DBInstance")),
        "aws glob"
    );
    assert_eq!(
        message(&a, &obj("gcp.crossplane.io/v1", "Bucket")),
        "<none>"
    );
}

#[test]
fn split_key_beats_legacy_entry_for_the_same_kind() {
    let legacy = "apps/Deployment:\n  health.lua: |\n    return {status = \"Degraded\", message = \"legacy\"}\n";
    let s = settings(&[
        ("resource.customizations", legacy),
        (
            "resource.customizations.health.apps_Deployment",
            &script("split"),
        ),
    ]);
    let a = Assessor::new(Config::default().settings(s)).unwrap();
    assert_eq!(message(&a, &fixture("deployment-healthy.yaml")), "split");
}

#[test]
fn use_open_libs_per_kind() {
    let probe = r#"return {status = "Healthy", message = type(io)}"#;
    let closed = settings(&[("resource.customizations.health.apps_Deployment", probe)]);
    let open = settings(&[
        ("resource.customizations.health.apps_Deployment", probe),
        (
            "resource.customizations.useOpenLibs.apps_Deployment",
            "true",
        ),
    ]);
    let legacy = settings(&[(
        "resource.customizations",
        "apps/Deployment:\n  health.lua: |\n    return {status = \"Healthy\", message = type(io)}\n  health.lua.useOpenLibs: true\n",
    )]);
    let d = fixture("deployment-healthy.yaml");
    assert_eq!(
        message(
            &Assessor::new(Config::default().settings(closed)).unwrap(),
            &d
        ),
        "nil"
    );
    assert_eq!(
        message(
            &Assessor::new(Config::default().settings(open)).unwrap(),
            &d
        ),
        "table"
    );
    assert_eq!(
        message(
            &Assessor::new(Config::default().settings(legacy)).unwrap(),
            &d
        ),
        "table"
    );
}

#[test]
fn directories_exact_then_wildcard_and_settings_first() {
    let dir = testdata("customizations");
    let a = Assessor::new(Config::default().customizations_dir(&dir)).unwrap();
    let db = fixture("customizations/platform.acme.io/Database/testdata/ready.yaml");
    assert_eq!(message(&a, &db), "database is accepting connections");
    // `_.acme.io/_` matches other acme groups and kinds.
    assert_eq!(
        message(&a, &obj("queues.acme.io/v1", "Queue")),
        "wildcard acme script: Queue"
    );
    // ...but not the exact directory's group, nor other groups.
    assert_eq!(message(&a, &obj("example.com/v1", "Queue")), "<none>");
    // A settings key beats the directory.
    let s = settings(&[(
        "resource.customizations.health.platform.acme.io_Database",
        &script("settings win"),
    )]);
    let a = Assessor::new(Config::default().settings(s).customizations_dir(&dir)).unwrap();
    assert_eq!(message(&a, &db), "settings win");
}

#[test]
fn earlier_directory_wins_and_script_errors_name_no_stack() {
    let tmp = std::env::temp_dir().join(format!("plumb-health-lookup-{}", std::process::id()));
    let kind_dir = tmp.join("platform.acme.io").join("Database");
    std::fs::create_dir_all(&kind_dir).unwrap();
    std::fs::write(kind_dir.join("health.lua"), "error('fork script broke')").unwrap();
    let a = Assessor::new(
        Config::default()
            .customizations_dir(&tmp)
            .customizations_dir(testdata("customizations")),
    )
    .unwrap();
    let h = a
        .assess(&fixture(
            "customizations/platform.acme.io/Database/testdata/ready.yaml",
        ))
        .unwrap();
    assert_eq!(
        (h.code, h.message.as_str()),
        (HealthCode::Unknown, "<string>:1: fork script broke")
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn bad_sources_are_errors_naming_them() {
    let err =
        Assessor::new(Config::default().customizations_dir("/nonexistent/plumb-customizations"))
            .unwrap_err();
    assert_eq!(
        err.to_string(),
        "customizations directory: reading /nonexistent/plumb-customizations: No such file or directory (os error 2)"
    );
    let s = settings(&[("resource.customizations", "- not\n- a map\n")]);
    let err = Assessor::new(Config::default().settings(s)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings key resource.customizations: not a YAML map of <group>/<kind> to customizations"
    );
    let s = settings(&[(
        "resource.customizations.useOpenLibs.apps_Deployment",
        "yes please",
    )]);
    let err = Assessor::new(Config::default().settings(s)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings key resource.customizations.useOpenLibs.apps_Deployment: invalid value \"yes please\" (expected true or false)"
    );
}
