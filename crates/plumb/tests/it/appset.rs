//! `plumb appset ...` in core mode against the real control plane: create (created, unchanged,
//! refused without --upsert, updated), list, get with the brake's pending deletions,
//! confirm-deletion, delete; generate and diff of a local file against the Applications the set
//! owns (exit code 1 on differences).

use std::process::{Command, Output};

use serde_json::{Value, json};

use super::app::{control_namespace, env, kubectl, text};

fn plumb(ns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("appset")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns, "--core"])
        .env("TZ", "UTC")
        .env_remove("PLUMB_NAMESPACE")
        .output()
        .unwrap()
}

fn set_yaml(path: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: web\nspec:\n  generators:\n  - list:\n      elements:\n      - cluster: a\n      - cluster: b\n  template:\n    metadata:\n      name: '{{{{cluster}}}}-web'\n    spec:\n      project: default\n      source:\n        repoURL: https://example.com/apps.git\n        path: {path}\n      destination:\n        server: https://kubernetes.default.svc\n        namespace: '{{{{cluster}}}}'\n"
    )
}

/// An Application as the controller writes it for `web` (owner, finalizer; created, so no
/// `kubectl apply` annotation).
fn owned_app(ns: &str, name: &str, uid: &str, path: &str) {
    let app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": ns,
                     "finalizers": ["resources-finalizer.argocd.argoproj.io"],
                     "ownerReferences": [{
            "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "web",
            "uid": uid, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"project": "default",
                 "source": {"repoURL": "https://example.com/apps.git", "path": path},
                 "destination": {"server": "https://kubernetes.default.svc",
                                 "namespace": name.trim_end_matches("-web")}}
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.json");
    std::fs::write(&file, app.to_string()).unwrap();
    let out = kubectl(&["create", "-f", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn set_json(ns: &str) -> Value {
    let out = kubectl(&[
        "-n",
        ns,
        "get",
        "applicationsets.argoproj.io",
        "web",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn create_list_get_confirm_and_delete_in_core_mode() {
    env().ensure_applicationset_crd();
    let ns = control_namespace("asurf-appset-cli");
    let ns = ns.name();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("web.yaml");
    std::fs::write(&file, set_yaml("web")).unwrap();
    let f = file.to_str().unwrap();
    let out = plumb(ns, &["create", f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("ApplicationSet 'web' created"));
    assert!(text(&out.stdout).starts_with(&format!("Name:               {ns}/web\n")));
    let out = plumb(ns, &["create", f]);
    assert!(
        text(&out.stderr).contains("ApplicationSet 'web' unchanged"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(&file, set_yaml("web-v2")).unwrap();
    let out = plumb(ns, &["create", f]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("use upsert flag to force update"));
    let out = plumb(ns, &["create", f, "--upsert"]);
    assert!(
        text(&out.stderr).contains("ApplicationSet 'web' updated"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        set_json(ns)["spec"]["template"]["spec"]["source"]["path"],
        "web-v2"
    );

    let out = plumb(ns, &["list", "-o", "name"]);
    assert_eq!(text(&out.stdout), format!("{ns}/web\n"));
    let out = plumb(ns, &["list"]);
    assert!(
        text(&out.stdout).starts_with("NAME"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("https://example.com/apps.git  web-v2"));

    // The brake held the deletion of b-web (its status as the controller writes it).
    let uid = set_json(ns)["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    owned_app(ns, "a-web", &uid, "web-v2");
    owned_app(ns, "b-web", &uid, "web-v2");
    let status = json!({"status": {
        "conditions": [{"type": "DeletionHeld", "status": "True", "reason": "DeletionHeld",
                        "message": "would delete b-web"}],
        "resources": [{"group": "argoproj.io", "version": "v1alpha1", "kind": "Application", "name": "a-web"}]}});
    let out = kubectl(&[
        "-n",
        ns,
        "patch",
        "applicationsets.argoproj.io",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = plumb(ns, &["get", "web"]);
    let got = text(&out.stdout);
    assert!(
        got.contains("DeletionHeld  True    would delete b-web"),
        "{got}"
    );
    assert!(
        got.contains("Deletions held by the brake (1):\n- b-web\n"),
        "{got}"
    );

    let out = plumb(ns, &["confirm-deletion", "web"]);
    assert_eq!(out.status.code(), Some(2), "nothing named, no --all");
    let out = plumb(ns, &["confirm-deletion", "web", "b-web"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        set_json(ns)["metadata"]["annotations"]["plumb.dev/confirm-deletion"],
        "b-web"
    );

    let out = plumb(ns, &["delete", "web", "--yes"]);
    assert_eq!(
        text(&out.stdout),
        "applicationset 'web' deleted\n",
        "{}",
        text(&out.stderr)
    );
    let out = plumb(ns, &["get", "web"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not found"));
}

/// Needs the generators (`plumb_appset::generate`, helper agen's branch).
#[test]
fn generate_and_diff_a_local_file_against_the_cluster() {
    env().ensure_applicationset_crd();
    let ns = control_namespace("asurf-appset-diff");
    let ns = ns.name();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("web.yaml");
    std::fs::write(&file, set_yaml("web")).unwrap();
    let f = file.to_str().unwrap();
    let out = plumb(ns, &["generate", f, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let apps: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = apps
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a-web", "b-web"]);
    // Nothing in the cluster yet: both to add.
    let out = plumb(ns, &["diff", f]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("2 to add, 0 to change, 0 to delete, 0 unchanged\n"));
    // As the controller would leave them, plus one the file no longer generates.
    assert_eq!(plumb(ns, &["create", f]).status.code(), Some(0));
    let uid = set_json(ns)["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    owned_app(ns, "a-web", &uid, "web");
    owned_app(ns, "b-web", &uid, "old");
    owned_app(ns, "c-web", &uid, "web");
    let out = plumb(ns, &["diff", f]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let d = text(&out.stdout);
    assert!(
        d.starts_with("0 to add, 1 to change, 1 to delete, 1 unchanged\n"),
        "{d}"
    );
    assert!(
        d.contains(&format!("changed: argoproj.io/Application {ns}/b-web")),
        "{d}"
    );
    assert!(d.contains("fields: spec.source.path\n"), "{d}");
    assert!(
        d.contains(&format!("deleted: argoproj.io/Application {ns}/c-web")),
        "{d}"
    );
    // No controller here to run the finalizer: drop it, then delete.
    let unfinalize = r#"{"metadata":{"finalizers":null}}"#;
    for args in [
        vec![
            "-n",
            ns,
            "patch",
            "applications.argoproj.io",
            "c-web",
            "--type=merge",
            "-p",
            unfinalize,
        ],
        vec!["-n", ns, "delete", "applications.argoproj.io", "c-web"],
        vec![
            "-n",
            ns,
            "patch",
            "applications.argoproj.io",
            "b-web",
            "--type=merge",
            "-p",
            r#"{"spec":{"source":{"path":"web"}}}"#,
        ],
    ] {
        let out = kubectl(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let out = plumb(ns, &["diff", f]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // Leave nothing blocking the namespace's deletion (no controller runs the finalizer).
    for name in ["a-web", "b-web"] {
        let unfinalize = r#"{"metadata":{"finalizers":null}}"#;
        let args = [
            "-n",
            ns,
            "patch",
            "applications.argoproj.io",
            name,
            "--type=merge",
            "-p",
            unfinalize,
        ];
        assert!(kubectl(&args).status.success());
    }
}
