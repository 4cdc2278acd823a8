//! `plumb admin health` end to end: the built binary on fixture files and a script library.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn health_testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../plumb-health/testdata")
}

fn plumb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .output()
        .expect("run plumb")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A multi-document file made from fixtures, in the given order.
fn bundle(dir: &Path, name: &str, fixtures: &[&str]) -> PathBuf {
    let mut text = String::new();
    for f in fixtures {
        text.push_str("---\n");
        text.push_str(&std::fs::read_to_string(health_testdata().join(f)).unwrap());
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn assert_text(expected: &str, actual: &str) {
    assert!(
        expected == actual,
        "\n--- expected ---\n{expected}--- actual ---\n{actual}----------------"
    );
}

const MIXED: &[&str] = &[
    "deployment-progressing.yaml",
    "configmap.yaml",
    "pod-crashloop.yaml",
    "bucket-stalled.yaml",
    "customizations/platform.acme.io/Database/testdata/starting.yaml",
];

#[test]
fn json_one_line_per_document_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let file = bundle(tmp.path(), "mixed.yaml", MIXED);
    let out = plumb(&["admin", "health", file.to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_text(
        concat!(
            r#"{"status":"Progressing","message":"Waiting for rollout to finish: 1 out of 3 new replicas have been updated..."}"#,
            "\n",
            r#"{"status":null,"message":""}"#,
            "\n",
            r#"{"status":"Degraded","message":"back-off 2m40s restarting failed container=checkout pod=checkout-6f9c7d8b5d-x7k2p_shop(2b1d0c9e-8f7a-4e6d-5c4b-3a291807f6e5)"}"#,
            "\n",
            r#"{"status":"Degraded","message":"generic: condition Stalled=True (InvalidBucketConfiguration): invalid 'minio-credentials' secret data: required fields 'accesskey' and 'secretkey'"}"#,
            "\n",
            r#"{"status":"Progressing","message":"generic: condition Ready=False (Starting): waiting for replicas"}"#,
            "\n",
        ),
        &stdout(&out),
    );
}

#[test]
fn unknown_kind_health_none_and_customizations() {
    let tmp = tempfile::tempdir().unwrap();
    let file = bundle(tmp.path(), "mixed.yaml", MIXED);
    let lib = health_testdata().join("customizations");
    let out = plumb(&[
        "admin",
        "health",
        file.to_str().unwrap(),
        "-o",
        "json",
        "--unknown-kind-health",
        "none",
        "--customizations",
        lib.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(String::from).collect();
    assert_eq!(lines[3], r#"{"status":null,"message":""}"#);
    assert_eq!(
        lines[4],
        r#"{"status":"Progressing","message":"1 of 3 replicas ready (33%)"}"#
    );
}

#[test]
fn settings_file_supplies_scripts_and_the_unknown_kind_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let file = bundle(tmp.path(), "mixed.yaml", MIXED);
    let settings = tmp.path().join("argocd-cm.yaml");
    std::fs::write(
        &settings,
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  plumb.health.unknownKinds: none
  resource.customizations.health.apps_Deployment: |
    hs = {}
    hs.status = "Suspended"
    hs.message = "replicas " .. obj.spec.replicas
    return hs
"#,
    )
    .unwrap();
    let out = plumb(&[
        "admin",
        "health",
        file.to_str().unwrap(),
        "-o",
        "json",
        "--settings",
        settings.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(String::from).collect();
    assert_eq!(lines[0], r#"{"status":"Suspended","message":"replicas 3"}"#);
    assert_eq!(lines[3], r#"{"status":null,"message":""}"#);
    // The flag overrides the setting.
    let out = plumb(&[
        "admin",
        "health",
        file.to_str().unwrap(),
        "-o",
        "json",
        "--settings",
        settings.to_str().unwrap(),
        "--unknown-kind-health",
        "generic",
    ]);
    assert!(
        stdout(&out)
            .lines()
            .nth(3)
            .unwrap()
            .starts_with(r#"{"status":"Degraded","message":"generic: "#)
    );
}

#[test]
fn wide_table() {
    let tmp = tempfile::tempdir().unwrap();
    let file = bundle(
        tmp.path(),
        "mixed.yaml",
        &[
            "deployment-healthy.yaml",
            "configmap.yaml",
            "job-failed.yaml",
        ],
    );
    let out = plumb(&["admin", "health", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_text(
        "GROUP  KIND        NAMESPACE  NAME             HEALTH    MESSAGE\n\
         apps   Deployment  shop       checkout         Healthy\n       \
         ConfigMap   shop       checkout-config\n\
         batch  Job         shop       db-migrate       Degraded  Job has reached the specified backoff limit\n",
        &stdout(&out),
    );
}

#[test]
fn bad_file_is_named_and_exit_2_but_others_are_still_evaluated() {
    let good = health_testdata().join("svc-clusterip.yaml");
    let out = plumb(&[
        "admin",
        "health",
        "/nonexistent/deploy.yaml",
        good.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("reading /nonexistent/deploy.yaml"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "{\"status\":\"Healthy\",\"message\":\"\"}\n");

    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken.yaml");
    std::fs::write(&broken, "apiVersion: v1\nkind: [unclosed\n").unwrap();
    let out = plumb(&["admin", "health", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("broken.yaml"), "{}", stderr(&out));
}

#[test]
fn health_test_passes_on_the_library() {
    let lib = health_testdata().join("customizations");
    let out = plumb(&["admin", "health", "test", lib.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_text("13 passed, 0 failed\n", &stdout(&out));
}

#[test]
fn health_test_reports_failures_with_expected_and_actual() {
    let tmp = tempfile::tempdir().unwrap();
    let kind = tmp.path().join("batch").join("CronJob");
    std::fs::create_dir_all(kind.join("testdata")).unwrap();
    let src = health_testdata().join("customizations/batch/CronJob");
    std::fs::copy(src.join("health.lua"), kind.join("health.lua")).unwrap();
    for f in ["last-run-failed.yaml", "suspended.yaml"] {
        std::fs::copy(src.join("testdata").join(f), kind.join("testdata").join(f)).unwrap();
    }
    std::fs::write(
        kind.join("health_test.yaml"),
        "tests:\n- healthStatus:\n    status: Healthy\n    message: CronJob has completed its last execution successfully\n  inputPath: testdata/last-run-failed.yaml\n- healthStatus:\n    status: Healthy\n    message: CronJob is Suspended\n  inputPath: testdata/suspended.yaml\n",
    )
    .unwrap();
    let out = plumb(&["admin", "health", "test", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_text(
        "FILE                            INPUT                          EXPECTED                                                         ACTUAL\n\
         batch/CronJob/health_test.yaml  testdata/last-run-failed.yaml  Healthy \"CronJob has completed its last execution successfully\"  Degraded \"CronJob has not completed its last execution successfully\"\n\
         1 passed, 1 failed\n",
        &stdout(&out),
    );

    // A missing input is an error (exit 2) naming the file.
    std::fs::remove_file(kind.join("testdata/suspended.yaml")).unwrap();
    let out = plumb(&["admin", "health", "test", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("suspended.yaml"), "{}", stderr(&out));
}

/// Plumb's own operator rules: every suite under crates/plumb-health/resource_customizations
/// through the runner (Workflow's suite has no health.lua and runs against the built-in rule).
#[test]
fn health_test_passes_on_plumbs_own_operator_rules() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plumb-health/resource_customizations");
    let mut expected = 0;
    let mut stack = vec![lib.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "health_test.yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                expected += text.matches("inputPath:").count();
            }
        }
    }
    assert!(expected >= 150, "{expected} cases");
    let out = plumb(&["admin", "health", "test", lib.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_text(&format!("{expected} passed, 0 failed\n"), &stdout(&out));
}

/// A suite without a health.lua beside it tests Plumb's own rules, and fails like any other.
#[test]
fn health_test_without_a_script_uses_plumbs_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let kind = tmp.path().join("argoproj.io").join("Workflow");
    std::fs::create_dir_all(kind.join("testdata")).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../plumb-health/resource_customizations/argoproj.io/Workflow/testdata/failed.yaml");
    std::fs::copy(src, kind.join("testdata/failed.yaml")).unwrap();
    std::fs::write(
        kind.join("health_test.yaml"),
        "tests:\n- healthStatus:\n    status: Healthy\n    message: \"\"\n  inputPath: testdata/failed.yaml\n",
    )
    .unwrap();
    let out = plumb(&["admin", "health", "test", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(r#"Healthy ""  Degraded "Error (exit code 1)""#),
        "{}",
        stdout(&out)
    );
}

#[test]
fn health_test_reads_field_names_case_insensitively_as_go_does() {
    // Argo's runner decodes health_test.yaml with Go's encoding/json: `inputpath`, `HealthStatus`
    // and `Status` are the same fields as `inputPath`, `healthStatus` and `status`.
    let tmp = tempfile::tempdir().unwrap();
    let kind = tmp.path().join("batch").join("CronJob");
    std::fs::create_dir_all(kind.join("testdata")).unwrap();
    let src = health_testdata().join("customizations/batch/CronJob");
    std::fs::copy(src.join("health.lua"), kind.join("health.lua")).unwrap();
    std::fs::copy(
        src.join("testdata/last-run-failed.yaml"),
        kind.join("testdata/last-run-failed.yaml"),
    )
    .unwrap();
    std::fs::write(
        kind.join("health_test.yaml"),
        "Tests:\n- HealthStatus:\n    Status: Degraded\n    MESSAGE: CronJob has not completed its last execution successfully\n  inputpath: testdata/last-run-failed.yaml\n",
    )
    .unwrap();
    let out = plumb(&["admin", "health", "test", tmp.path().to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_text("1 passed, 0 failed\n", &stdout(&out));
}
