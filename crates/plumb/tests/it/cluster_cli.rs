//! `plumb cluster add/list/get/rm` end to end: the test API server added under a kubeconfig
//! context of its own (its URL differs from in-cluster's, so it is a second cluster), with
//! `argocd-manager` installed as Argo installs it; an Application synced there by
//! `plumb controller`; the cluster removed with its ServiceAccount. No token in any output.

use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

use super::app::{control_namespace, env, kubectl, kubectl_apply, text};

struct Controller(Child);

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(
    bin_args: &[&str],
    kubeconfig: &std::path::Path,
    ns: &str,
    cache: &std::path::Path,
) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(bin_args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["-N", ns])
        .env("PLUMB_CACHE_DIR", cache)
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The command succeeded: its stdout (both streams in the failure message).
pub(super) fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// A kubectl command that must succeed: its trimmed stdout.
pub(super) fn must(args: &[&str]) -> String {
    let out = kubectl(args);
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout).trim().to_string()
}

/// A kubeconfig whose only context reaches the test API server with `token`.
fn kubeconfig_with_token(dir: &std::path::Path, context: &str, token: &str) -> std::path::PathBuf {
    let raw: Value = serde_json::from_str(&must(&[
        "config",
        "view",
        "--raw",
        "--minify",
        "--flatten",
        "-o",
        "json",
    ]))
    .unwrap();
    let cluster = raw["clusters"][0]["cluster"].clone();
    let cfg = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": context, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
    });
    let path = dir.join("kubeconfig");
    std::fs::write(&path, cfg.to_string()).unwrap();
    path
}

#[test]
fn cluster_add_registers_a_cluster_an_application_syncs_to_and_rm_removes_it() {
    let ns = control_namespace("cli-cluster");
    let ns = ns.name();
    let dest = env().namespace("cli-cluster-dest");
    let dest = dest.name();
    let dir = tempfile::tempdir().unwrap();
    // Whoever runs `cluster add` has rights to install argocd-manager: here a ServiceAccount
    // bound to cluster-admin.
    must(&["-n", ns, "create", "serviceaccount", "installer"]);
    let binding = format!("{ns}-installer");
    must(&[
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={ns}:installer"),
    ]);
    let installer = must(&["-n", ns, "create", "token", "installer", "--duration=1h"]);
    let context = format!("added-{ns}");
    let kubeconfig = kubeconfig_with_token(dir.path(), &context, &installer);
    let cache = dir.path().join("cache");
    let mut outputs = Vec::new();

    let out = run(
        &["cluster", "add", &context, "-y", "--label", "env=test"],
        &kubeconfig,
        ns,
        &cache,
    );
    let added = ok(&out);
    outputs.push(out);
    let server =
        serde_json::from_str::<Value>(&must(&["config", "view", "--minify", "-o", "json"]))
            .unwrap()["clusters"][0]["cluster"]["server"]
            .as_str()
            .unwrap()
            .to_string();
    assert_eq!(added, format!("Cluster '{server}' added\n"));
    // Argo's objects in the target cluster, and its token in the cluster Secret.
    let manager_token = must(&[
        "-n",
        "kube-system",
        "get",
        "secret",
        "argocd-manager-long-lived-token",
        "-o",
        "jsonpath={.data.token}",
    ]);
    must(&["get", "clusterrole", "argocd-manager-role"]);
    must(&["get", "clusterrolebinding", "argocd-manager-role-binding"]);
    let secrets: Value = serde_json::from_str(&must(&[
        "-n",
        ns,
        "get",
        "secrets",
        "-l",
        "argocd.argoproj.io/secret-type=cluster",
        "-o",
        "json",
    ]))
    .unwrap();
    let secret = &secrets["items"][0];
    assert!(
        secret["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("cluster-127.0.0.1-"),
        "{secret:#}"
    );
    assert_eq!(secret["metadata"]["labels"]["env"], "test");
    let config =
        String::from_utf8(base64_decode(secret["data"]["config"].as_str().unwrap())).unwrap();
    let manager_token = String::from_utf8(base64_decode(&manager_token)).unwrap();
    assert!(
        config.contains(&manager_token),
        "the Secret holds argocd-manager's token"
    );

    let out = run(&["cluster", "list"], &kubeconfig, ns, &cache);
    let list = ok(&out);
    outputs.push(out);
    let row = list
        .lines()
        .find(|l| l.contains(&context))
        .unwrap_or_else(|| panic!("{list}"));
    assert!(
        row.starts_with(&server) && row.contains("Successful"),
        "{list}"
    );
    assert!(list.starts_with("SERVER  "), "{list}");
    let out = run(
        &["cluster", "get", &context, "-o", "json"],
        &kubeconfig,
        ns,
        &cache,
    );
    let got: Value = serde_json::from_str(&ok(&out)).unwrap();
    outputs.push(out);
    assert_eq!(got["server"], server.as_str());

    // An Application on the added cluster, synced by plumb controller.
    let repo = plumb_testenv::git::GitRepo::named("cli-cluster");
    repo.commit(&[("k8s/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\ndata:\n  via: cluster-add\n")], "cm");
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "on-added", "namespace": ns},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "k8s"},
                 "destination": {"name": context, "namespace": dest}}
    }));
    let _ctl = Controller(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", ns, "--metrics-addr", "off"])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(dir.path().join("controller"))
            .env_remove("PLUMB_NAMESPACE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let out = run(
        &["app", "sync", "on-added", "--timeout", "150"],
        &kubeconfig,
        ns,
        &cache,
    );
    ok(&out);
    outputs.push(out);
    assert_eq!(
        must(&[
            "-n",
            dest,
            "get",
            "configmap",
            "added",
            "-o",
            "jsonpath={.data.via}"
        ]),
        "cluster-add"
    );

    let out = run(&["cluster", "rm", &context, "-y"], &kubeconfig, ns, &cache);
    assert_eq!(ok(&out), format!("Cluster '{context}' removed\n"));
    outputs.push(out);
    let left: Value = serde_json::from_str(&must(&[
        "-n",
        ns,
        "get",
        "secrets",
        "-l",
        "argocd.argoproj.io/secret-type=cluster",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(left["items"], json!([]));
    assert!(
        !kubectl(&[
            "-n",
            "kube-system",
            "get",
            "serviceaccount",
            "argocd-manager"
        ])
        .status
        .success()
    );

    for out in &outputs {
        for t in [&manager_token, &installer] {
            assert!(
                !text(&out.stdout).contains(t.as_str()) && !text(&out.stderr).contains(t.as_str()),
                "a token in the output"
            );
        }
    }
    let _ = kubectl(&["delete", "clusterrolebinding", &binding]);
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}
