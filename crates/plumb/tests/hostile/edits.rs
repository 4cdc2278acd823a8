//! Attacks through `plumb app edit`: whatever the editor saves is untrusted text. Invalid YAML,
//! duplicate keys (which half wins?), several documents, a spec of the wrong shape, or a spec the
//! project forbids must be refused with nothing written; a non-interactive run never loops.

use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::running::{env, get_json, kubectl_apply, text};

fn edit_with(ns: &str, name: &str, new_text: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("new.yaml");
    std::fs::write(&content, new_text).unwrap();
    let script = dir.path().join("editor.sh");
    std::fs::write(&script, format!("cp {} \"$1\"\n", content.display())).unwrap();
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["app", "edit", name, "--kubeconfig"])
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("EDITOR", format!("sh {}", script.display()))
        .env_remove("VISUAL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

const VALID: &str = "project: default\nsource:\n  repoURL: https://git.acme.internal/apps/payments.git\n  path: k8s\ndestination:\n  server: https://kubernetes.default.svc\n  namespace: payments\n";

#[test]
fn invalid_edits_write_nothing() {
    // No controller runs, so nothing but the edit could change the Application.
    let ns = env().namespace("hostile-edit");
    let ns = ns.name();
    for (name, spec) in [
        (
            "default",
            json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}),
        ),
        (
            "locked",
            json!({"sourceRepos": ["https://git.acme.internal/*"], "destinations": [{"server": "*", "namespace": "payments"}]}),
        ),
    ] {
        kubectl_apply(
            &json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}),
        );
    }
    kubectl_apply(
        &json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "payments", "namespace": ns},
        "spec": {"project": "default",
            "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"}}}),
    );
    let app = || get_json(ns, "applications.argoproj.io", "payments").unwrap();
    let before = app();
    for (text_in, expected) in [
        ("project: [unclosed\n", "new"),
        (&*format!("{VALID}project: locked\n"), "duplicate"),
        (
            &*format!("{VALID}---\n{VALID}"),
            "expected the spec as one YAML document, found 2",
        ),
        ("- project: default\n", "the spec must be a map"),
        (
            "project: default\nsource: just-a-string\n",
            "not an Application spec",
        ),
        (
            &*VALID.replace(
                "  namespace: payments\n",
                "  namespace: payments\n  name: in-cluster\n",
            ),
            "application destination can't have both name and server defined",
        ),
        (
            &*VALID
                .replace("project: default", "project: locked")
                .replace("namespace: payments", "namespace: kube-system"),
            "do not match any of the allowed destinations in project 'locked'",
        ),
    ] {
        let out = edit_with(ns, "payments", text_in);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{text_in}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        if expected != "new" {
            assert!(err.contains(expected), "{text_in}: {err}");
        }
        let after = app();
        assert_eq!(
            after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
            "{text_in}"
        );
        assert_eq!(after["spec"], before["spec"]);
    }
}
