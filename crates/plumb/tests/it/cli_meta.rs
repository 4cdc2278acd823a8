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
    let client = format!("plumb: v{}\n  Platform: ", env!("CARGO_PKG_VERSION"));
    assert!(printed.starts_with(&client), "{printed}");
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
    assert_eq!(
        text(&out.stdout),
        format!("plumb: v{}\n", env!("CARGO_PKG_VERSION"))
    );
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
