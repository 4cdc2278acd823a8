//! `plumb diff` and `plumb admin lint-ignores`: output compared exactly with
//! `tests/snapshots/diff-*.txt` (`PLUMB_UPDATE_SNAPSHOTS=1` rewrites them; review the change).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn testdata(name: &str) -> String {
    format!(
        "{}/../plumb-diff/testdata/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/diff/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn plumb(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plumb"));
    cmd.args(args).env_remove("KUBECTL_EXTERNAL_DIFF");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Compares with a snapshot file, or rewrites it when PLUMB_UPDATE_SNAPSHOTS is set.
fn snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os("PLUMB_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing snapshot {}", path.display()));
    if expected != actual {
        panic!(
            "\n--- expected ({})\n{expected}\n--- actual\n{actual}\n---",
            path.display()
        );
    }
}

fn diff(desired: &str, live: &str, extra: &[&str]) -> Output {
    let (d, l) = (testdata(desired), testdata(live));
    let mut args = vec!["diff", "--desired", &d, "--live", &l];
    args.extend_from_slice(extra);
    plumb(&args, &[])
}

#[test]
fn applied_objects_have_no_diff_exit_0() {
    for kind in [
        "deployment",
        "service",
        "configmap",
        "secret",
        "statefulset",
    ] {
        let out = diff(
            &format!("{kind}-config.yaml"),
            &format!("{kind}-live.yaml"),
            &[],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{kind}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "", "{kind}");
    }
}

#[test]
fn tampered_deployment_with_attribution() {
    let out = diff(
        "deployment-config.yaml",
        "deployment-tampered-live.yaml",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    snapshot("diff-tampered", &text(&out.stdout));
}

#[test]
fn attribution_false_is_argo_output() {
    let out = diff(
        "deployment-config.yaml",
        "deployment-tampered-live.yaml",
        &["--attribution=false"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("\n# "));
    snapshot("diff-tampered-argo", &stdout);
    // Same text as with attribution, minus the comment lines.
    let with = text(
        &diff(
            "deployment-config.yaml",
            "deployment-tampered-live.yaml",
            &[],
        )
        .stdout,
    );
    let stripped: String = with
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("# "))
        .collect();
    assert_eq!(stripped, stdout);
}

#[test]
fn image_bump() {
    let out = diff(
        "deployment-image-bump-config.yaml",
        "deployment-live.yaml",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    snapshot("diff-image-bump", &text(&out.stdout));
}

#[test]
fn unified_format() {
    let out = diff(
        "deployment-image-bump-config.yaml",
        "deployment-live.yaml",
        &["--diff-format", "unified"],
    );
    assert_eq!(out.status.code(), Some(1));
    snapshot("diff-image-bump-unified", &text(&out.stdout));
}

#[test]
fn json_output_has_attribution_and_masks_secrets() {
    let out = diff(
        "deployment-config.yaml",
        "deployment-tampered-live.yaml",
        &["-o", "json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = &v[0]["changes"];
    assert_eq!(
        changes[1]["path"],
        "spec.template.spec.containers[name=payments-api].securityContext.runAsNonRoot"
    );
    assert_eq!(changes[1]["attribution"]["manager"], "kubectl-patch");
    assert_eq!(changes[1]["attribution"]["exact"], false);
    // --attribution=false does not remove it from JSON.
    let out = diff(
        "deployment-config.yaml",
        "deployment-tampered-live.yaml",
        &["-o", "json", "--attribution=false"],
    );
    let v2: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v2[0]["changes"][1]["attribution"]["manager"],
        "kubectl-patch"
    );

    let out = diff(
        "secret-rotated-config.yaml",
        "secret-live.yaml",
        &["--diff-format", "json"],
    );
    let stdout = text(&out.stdout);
    for secret in ["s3cr3t", "czNjcjN0", "cGF5bWVudHM="] {
        assert!(!stdout.contains(secret), "{secret} leaked");
    }
    snapshot("diff-secret-json", &stdout);
}

#[test]
fn rotated_secret_text_is_masked() {
    let out = diff("secret-rotated-config.yaml", "secret-live.yaml", &[]);
    assert_eq!(out.status.code(), Some(1));
    snapshot("diff-secret", &text(&out.stdout));
}

fn copy(from: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(testdata(from), to).unwrap();
}

fn directories() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("desired");
    let l = dir.path().join("live");
    copy("deployment-config.yaml", &d.join("apps/deployment.yaml"));
    copy("service-config.yaml", &d.join("apps/nested/service.yml"));
    copy("configmap-config.yaml", &d.join("configmap.yaml"));
    std::fs::write(
        d.join("flags.json"),
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "payments-flags"}, "data": {"beta": "on"}}"#,
    )
    .unwrap();
    std::fs::write(d.join("README.md"), "not a manifest").unwrap();
    copy("deployment-tampered-live.yaml", &l.join("deployment.yaml"));
    copy("service-live.yaml", &l.join("service.yaml"));
    copy("configmap-live.yaml", &l.join("configmap.yaml"));
    copy("secret-live.yaml", &l.join("secret.yaml"));
    dir
}

#[test]
fn directories_additions_and_extras() {
    let dir = directories();
    let (d, l) = (dir.path().join("desired"), dir.path().join("live"));
    let args = [
        "diff",
        "--desired",
        d.to_str().unwrap(),
        "--live",
        l.to_str().unwrap(),
        "-n",
        "payments",
    ];
    let out = plumb(&args, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    snapshot("diff-directories", &text(&out.stdout));
    let mut with_extra = args.to_vec();
    with_extra.push("--show-extra");
    let out = plumb(&with_extra, &[]);
    snapshot("diff-directories-show-extra", &text(&out.stdout));
}

#[test]
fn duplicate_desired_objects_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    copy("configmap-config.yaml", &dir.path().join("a/one.yaml"));
    copy("configmap-config.yaml", &dir.path().join("a/two.yaml"));
    let a = dir.path().join("a");
    let out = plumb(
        &[
            "diff",
            "--desired",
            a.to_str().unwrap(),
            "--live",
            &testdata("configmap-live.yaml"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("/ConfigMap/payments/payments-config: defined twice, in "),
        "{err}"
    );
    assert!(
        err.contains("one.yaml:") && err.contains("two.yaml:"),
        "{err}"
    );
}

#[test]
fn ignore_rules_from_settings_and_guard_rails() {
    let settings = fixture("settings-replicas.yaml");
    let out = diff(
        "deployment-config.yaml",
        "deployment-live.yaml",
        &["--settings", &settings],
    );
    assert_eq!(out.status.code(), Some(0));

    let app = fixture("app-image-ignore.yaml");
    let out = diff(
        "deployment-image-bump-config.yaml",
        "deployment-live.yaml",
        &["--ignore-differences", &app],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("spec.ignoreDifferences[0]: jsonPointer /spec/template/spec/containers/0/image would hide apps/Deployment spec.template.spec.containers.*.image"),
        "{err}"
    );
    assert!(err.contains("--allow-sensitive-ignores"), "{err}");
    let out = diff(
        "deployment-image-bump-config.yaml",
        "deployment-live.yaml",
        &["--ignore-differences", &app, "--allow-sensitive-ignores"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn lint_ignores_lists_sensitive_rules() {
    let out = plumb(
        &[
            "admin",
            "lint-ignores",
            "--settings",
            &fixture("settings-sensitive.yaml"),
            &fixture("app-image-ignore.yaml"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout).replace(&fixture(""), "<fixtures>/");
    snapshot("lint-ignores", &stdout);
    let out = plumb(
        &[
            "admin",
            "lint-ignores",
            "--settings",
            &fixture("settings-replicas.yaml"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "1 rule(s) checked, 0 sensitive, 0 invalid\n"
    );
}

#[test]
fn external_diff_program_gets_two_directories() {
    let (d, l) = (
        testdata("deployment-image-bump-config.yaml"),
        testdata("deployment-live.yaml"),
    );
    let out = plumb(
        &["diff", "--desired", &d, "--live", &l],
        &[("KUBECTL_EXTERNAL_DIFF", "diff -r -u $(evil)")],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("\n===== apps/Deployment payments/payments-api ======\ndiff -r -u "),
        "{stdout}"
    );
    assert!(
        stdout.contains("/LIVE/apps.v1.Deployment.payments.payments-api"),
        "{stdout}"
    );
    assert!(
        stdout.contains("/MERGED/apps.v1.Deployment.payments.payments-api"),
        "{stdout}"
    );
    assert!(stdout.contains("-        image: registry.example.com/payments-api:1.4.2\n+        image: registry.example.com/payments-api:1.5.0\n"), "{stdout}");
}

#[test]
fn ignore_aggregated_roles_from_settings() {
    // Without the option the rules the aggregation controller filled in are drift...
    let out = diff(
        "clusterrole-aggregated-config.yaml",
        "clusterrole-aggregated-live.yaml",
        &["--attribution=false"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .starts_with("\n===== rbac.authorization.k8s.io/ClusterRole /payments-view ======\n"),
        "{}",
        text(&out.stdout)
    );
    // ...and with `resource.compareoptions` `ignoreAggregatedRoles: true` they are not.
    let out = diff(
        "clusterrole-aggregated-config.yaml",
        "clusterrole-aggregated-live.yaml",
        &["--settings", &fixture("settings-aggregated-roles.yaml")],
    );
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), ""),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn empty_values_and_lists_read_back_as_null_are_not_drift() {
    for (desired, live) in [
        (
            "secret-empty-value-config.yaml",
            "secret-empty-value-live.yaml",
        ),
        (
            "clusterrole-empty-rules-config.yaml",
            "clusterrole-empty-rules-live.yaml",
        ),
    ] {
        let out = diff(desired, live, &[]);
        assert_eq!(
            (out.status.code(), text(&out.stdout).as_str()),
            (Some(0), ""),
            "{desired}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn duplicate_key_is_read_as_kubectl_reads_it_with_a_warning() {
    // sigs.k8s.io/yaml and kubectl keep the last value; Plumb does too and says so.
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(testdata("configmap-config.yaml")).unwrap();
    let desired = original.replace("  retries: \"3\"\n", "  retries: \"5\"\n  retries: \"3\"\n");
    assert_ne!(desired, original);
    let path = dir.path().join("cm.yaml");
    std::fs::write(&path, &desired).unwrap();
    let live = testdata("configmap-live.yaml");
    let out = plumb(
        &["diff", "--desired", path.to_str().unwrap(), "--live", &live],
        &[],
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        (out.status.code(), text(&out.stdout).as_str()),
        (Some(0), ""),
        "{stderr}"
    );
    let line = desired
        .lines()
        .position(|l| l == "  retries: \"3\"")
        .unwrap()
        + 1;
    assert!(
        stderr.contains(&format!(
            "{}:{line}: duplicate key \"retries\": the last value is used (as kubectl and Argo CD do)",
            path.display()
        )),
        "{stderr}"
    );
}
