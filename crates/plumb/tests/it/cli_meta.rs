//! `plumb version` against the real control plane and `plumb completion` from the binary.

use std::process::Command;

use serde_json::json;

use crate::app::{control_namespace, env, kubectl_apply, text};

fn plumb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .env_remove("PLUMB_NAMESPACE")
        .output()
        .unwrap()
}

#[test]
fn version_reads_the_deployments_of_the_control_namespace() {
    let ns = control_namespace("version");
    let ns = ns.name();
    kubectl_apply(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "plumb-controller", "namespace": ns,
            "labels": {"app.kubernetes.io/name": "plumb-controller", "app.kubernetes.io/version": "v0.1.0"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app.kubernetes.io/name": "plumb-controller"}},
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": "plumb-controller"}},
                "spec": {"containers": [{"name": "controller", "image": "plumb:dev"}]}}}}));
    let kubeconfig = env().kubeconfig().to_str().unwrap().to_string();
    let out = plumb(&["version", "--kubeconfig", &kubeconfig, "-N", ns]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    let client = format!("plumb: v{}+", env!("CARGO_PKG_VERSION"));
    assert!(printed.starts_with(&client), "{printed}");
    assert!(printed.contains("\n  Platform: linux/"), "{printed}");
    assert!(
        printed.contains("plumb-controller: v0.1.0\n  Image: plumb:dev\nplumb-server: unknown\n  Note: no Deployment of that name in the control namespace\n"),
        "{printed}"
    );
    let out = plumb(&[
        "version",
        "--kubeconfig",
        &kubeconfig,
        "-N",
        ns,
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[1]["version"], json!("v0.1.0"));
    // --client makes no request: it works with a kubeconfig that points nowhere.
    let out = plumb(&[
        "version",
        "--client",
        "--short",
        "--kubeconfig",
        "/nonexistent",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let short = text(&out.stdout);
    assert!(
        short.starts_with(&format!("plumb: v{}+", env!("CARGO_PKG_VERSION")))
            && short.lines().count() == 1,
        "{short}"
    );
}

fn git(args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// `NAME=value` of scripts/testenv, the pinned tool versions.
fn testenv_pin(name: &str) -> String {
    let script = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/testenv"
    ))
    .unwrap();
    script
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("{name}= in scripts/testenv"))
        .to_string()
}

#[test]
fn version_names_the_checkout_and_the_pinned_tools() {
    let run = |helm: &std::path::Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["version", "--client", "-o", "json"])
            .env("PLUMB_HELM", helm)
            .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v[0].clone()
    };
    let v = run(&plumb_testenv::tools::helm());
    let head = git(&["rev-parse", "HEAD"]);
    assert_eq!(v["gitCommit"], json!(head), "{v}");
    let dirty = match v["gitTreeState"].as_str() {
        Some("clean") => "",
        Some("dirty") => ".dirty",
        other => panic!("gitTreeState {other:?}"),
    };
    let version = format!("v{}+{}{dirty}", env!("CARGO_PKG_VERSION"), &head[..7]);
    assert_eq!(v["version"], json!(version));
    let date = v["buildDate"].as_str().unwrap();
    assert!(date.len() == 20 && date.ends_with('Z'), "{date}");
    let helm = v["helmVersion"].as_str().unwrap();
    assert!(helm.starts_with(&testenv_pin("HELM_VERSION")), "{helm}");
    let kustomize = v["kustomizeVersion"].as_str().unwrap();
    assert!(
        kustomize.contains(&testenv_pin("KUSTOMIZE_VERSION")),
        "{kustomize}"
    );
    // A missing binary is reported, not fatal.
    let v = run(std::path::Path::new("/nonexistent/helm"));
    assert_eq!(v["helmVersion"], json!("not found"));
    assert_eq!(v["gitCommit"], json!(head));
}

#[test]
fn completion_scripts_load_in_their_shell() {
    let out = plumb(&["completion", "bash"]);
    assert_eq!(out.status.code(), Some(0));
    let script = text(&out.stdout);
    assert!(script.contains("complete -F _plumb"));
    // bash parses it without error and the function exists afterwards.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plumb.bash");
    std::fs::write(&path, &script).unwrap();
    let check = Command::new("bash")
        .args([
            "-c",
            &format!("source {} && declare -F _plumb", path.display()),
        ])
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert_eq!(text(&check.stdout), "_plumb\n");
    for shell in ["zsh", "fish"] {
        let out = plumb(&["completion", shell]);
        assert_eq!(out.status.code(), Some(0));
        assert!(text(&out.stdout).contains("patch-resource"), "{shell}");
    }
    let out = plumb(&["completion", "powershell"]);
    assert_eq!(out.status.code(), Some(2));
}
