//! `plumb app edit` with a scripted `$EDITOR`, and `plumb app patch`, end to end on the real
//! control plane.

use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::app::{app_json, control_namespace, create_payments, env, plumb, text};

/// `plumb app ...` with `EDITOR` set to `sh SCRIPT` (the script gets the file as `$1`).
pub(crate) fn plumb_with_editor(ns: &str, script: &str, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("editor.sh");
    std::fs::write(&path, script).unwrap();
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("app")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("EDITOR", format!("sh {}", path.display()))
        .env_remove("VISUAL")
        .env_remove("PLUMB_NAMESPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn edit_writes_a_changed_spec_and_nothing_else() {
    let ns = control_namespace("edit");
    let ns = ns.name();
    create_payments(ns);
    // The editor sees the spec as YAML.
    let seen = tempfile::NamedTempFile::new().unwrap();
    let out = plumb_with_editor(
        ns,
        &format!(
            "cp \"$1\" {}\nsed -i 's#k8s/overlays/prod#k8s/overlays/staging#' \"$1\"\n",
            seen.path().display()
        ),
        &["edit", "payments-api"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = std::fs::read_to_string(seen.path()).unwrap();
    assert!(shown.contains("path: k8s/overlays/prod\n"), "{shown}");
    assert!(shown.starts_with("destination:\n"), "{shown}");
    let app = app_json(ns, "payments-api").unwrap();
    assert_eq!(app["spec"]["source"]["path"], json!("k8s/overlays/staging"));
    assert_eq!(app["spec"]["source"]["targetRevision"], json!("v1.4.0"));

    // An editor that saves nothing new: cancelled, exit 2, nothing written.
    let before = app["metadata"]["resourceVersion"].clone();
    let out = plumb_with_editor(ns, "true\n", &["edit", "payments-api"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: Edit cancelled, no valid changes were saved.\n"
    );
    assert_eq!(
        app_json(ns, "payments-api").unwrap()["metadata"]["resourceVersion"],
        before
    );
}

#[test]
fn patch_json_and_merge() {
    let ns = control_namespace("patchapp");
    let ns = ns.name();
    create_payments(ns);
    let out = plumb(
        ns,
        &[
            "patch",
            "payments-api",
            "--patch",
            r#"[{"op": "replace", "path": "/spec/source/path", "value": "k8s/overlays/eu"}]"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.starts_with("apiVersion: argoproj.io/v1alpha1\nkind: Application\n"),
        "{printed}"
    );
    assert!(printed.contains("    path: k8s/overlays/eu\n"), "{printed}");
    assert!(printed.ends_with("\n\n"), "{printed}");
    let out = plumb(
        ns,
        &[
            "patch",
            "payments-api",
            "--type",
            "merge",
            "--patch",
            r#"{"metadata": {"labels": {"team": "payments"}}, "spec": {"source": {"targetRevision": "v1.5.0"}}}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let app = app_json(ns, "payments-api").unwrap();
    assert_eq!(app["spec"]["source"]["targetRevision"], json!("v1.5.0"));
    assert_eq!(app["spec"]["source"]["path"], json!("k8s/overlays/eu"));
    assert_eq!(app["metadata"]["labels"]["team"], json!("payments"));
    // A patch that breaks the spec is refused before writing.
    let out = plumb(
        ns,
        &[
            "patch",
            "payments-api",
            "--type",
            "merge",
            "--patch",
            r#"{"spec": {"destination": {"name": "in-cluster"}}}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "plumb: application destination can't have both name and server defined\n"
    );
    assert!(
        app_json(ns, "payments-api").unwrap()["spec"]["destination"]
            .get("name")
            .is_none()
    );
}
