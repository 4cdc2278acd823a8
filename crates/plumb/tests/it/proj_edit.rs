//! `plumb proj edit` with a scripted `$EDITOR`, the refusal of a project update that would make
//! Applications invalid (core mode), and `proj create --upsert` writing through the same
//! stored-JSON writer as every other verb, so fields Plumb does not model are kept.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use plumb_testenv::TestEnv;
use serde_json::{Value, json};

use crate::app::{env, kubectl_apply, text};

/// `plumb proj ARGS` in core mode against the control plane of `kubeconfig`, with `EDITOR` set
/// to `sh SCRIPT` when given (the script gets the file as `$1`).
fn proj(kubeconfig: &Path, ns: &str, editor: Option<&str>, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plumb"));
    cmd.arg("proj")
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["-N", ns])
        .env("HOME", dir.path())
        .env_remove("VISUAL")
        .env_remove("PLUMB_NAMESPACE")
        .stdin(Stdio::null());
    if let Some(script) = editor {
        let path = dir.path().join("editor.sh");
        std::fs::write(&path, script).unwrap();
        cmd.env("EDITOR", format!("sh {}", path.display()));
    }
    cmd.output().unwrap()
}

fn stored(env: &TestEnv, ns: &str, name: &str) -> Value {
    let out = env
        .kubectl()
        .args([
            "-n",
            ns,
            "get",
            "appprojects.argoproj.io",
            name,
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn all(o: &Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

#[test]
fn edit_writes_the_edited_spec_and_refuses_what_argo_refuses() {
    let guard = env().namespace("proj-edit");
    let ns = guard.name().to_string();
    let kc = env().kubeconfig();
    let out = proj(
        kc,
        &ns,
        None,
        &["create", "team", "-s", "https://git.example/*"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    // The editor adds a description and a destination.
    let add = "printf 'description: edited\\ndestinations:\\n- server: https://kubernetes.default.svc\\n  namespace: team\\n' >> \"$1\"\n";
    let out = proj(kc, &ns, Some(add), &["edit", "team"]);
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    let p = stored(env(), &ns, "team");
    assert_eq!(p["spec"]["description"], "edited");
    assert_eq!(
        p["spec"]["destinations"],
        json!([{"server": "https://kubernetes.default.svc", "namespace": "team"}])
    );
    assert_eq!(p["spec"]["sourceRepos"], json!(["https://git.example/*"]));
    let version = p["metadata"]["resourceVersion"].clone();
    // Unchanged text: Argo's message, nothing written.
    let out = proj(kc, &ns, Some("true\n"), &["edit", "team"]);
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(
        all(&out).contains("edit cancelled, no valid changes were saved"),
        "{}",
        all(&out)
    );
    // A spec Argo's validation refuses (the same destination twice): refused, nothing written.
    let dup = "printf 'sourceRepos: [\"https://git.example/*\"]\\ndestinations:\\n- {server: https://kubernetes.default.svc, namespace: team}\\n- {server: https://kubernetes.default.svc, namespace: team}\\n' > \"$1\"\n";
    let out = proj(kc, &ns, Some(dup), &["edit", "team"]);
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(
        all(&out).contains("destination 'https://kubernetes.default.svc/team' already added"),
        "{}",
        all(&out)
    );
    // Not a spec at all.
    let out = proj(
        kc,
        &ns,
        Some("echo 'sourceRepos: 7' > \"$1\"\n"),
        &["edit", "team"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(
        all(&out).contains("error unmarshaling input into project spec"),
        "{}",
        all(&out)
    );
    assert_eq!(
        stored(env(), &ns, "team")["metadata"]["resourceVersion"],
        version
    );
}

#[test]
fn an_update_that_would_invalidate_applications_is_refused_in_core_mode() {
    let guard = env().namespace("proj-invalidate");
    let ns = guard.name().to_string();
    let kc = env().kubeconfig();
    let out = proj(
        kc,
        &ns,
        None,
        &[
            "create",
            "team",
            "-s",
            "*",
            "-d",
            "https://kubernetes.default.svc,*",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    kubectl_apply(
        &json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {"project": "team",
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": "web"},
                 "source": {"repoURL": "https://git.example/web.git", "path": "."}}}),
    );
    let version = stored(env(), &ns, "team")["metadata"]["resourceVersion"].clone();
    let out = proj(kc, &ns, None, &["remove-source", "team", "*"]);
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(
        all(&out).contains("as a result of project update 1 applications source became invalid"),
        "{}",
        all(&out)
    );
    let narrow = "sed -i 's/namespace: \"\\*\"/namespace: other/; s/namespace: '\"'\"'\\*'\"'\"'/namespace: other/' \"$1\"\n";
    let out = proj(kc, &ns, Some(narrow), &["edit", "team"]);
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(
        all(&out)
            .contains("as a result of project update 1 applications destination became invalid"),
        "{}",
        all(&out)
    );
    assert_eq!(
        stored(env(), &ns, "team")["metadata"]["resourceVersion"],
        version,
        "nothing written"
    );
    // A change that keeps the Application valid goes through.
    let out = proj(
        kc,
        &ns,
        None,
        &["add-source", "team", "https://git.example/*"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
}

/// Under a CRD that keeps fields Plumb does not model (a newer Argo CD's), `proj create`,
/// `create --upsert` and `proj edit` keep them: the project file's `sourceIntegrity` (an Argo
/// CD 3.x field) is stored, replaced by an upsert, and survives an edit of another field. A
/// private control plane: the CRD is cluster-wide.
#[test]
fn create_upsert_and_edit_keep_fields_plumb_does_not_model() {
    let env = TestEnv::private().unwrap_or_else(|e| panic!("no private control plane: {e}"));
    for (kind, plural) in [
        ("AppProject", "appprojects"),
        ("Application", "applications"),
    ] {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.argoproj.io")},
            "spec": {"group": "argoproj.io", "scope": "Namespaced",
                     "names": {"kind": kind, "listKind": format!("{kind}List"), "plural": plural,
                               "singular": kind.to_lowercase()},
                     "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                       "x-kubernetes-preserve-unknown-fields": true}}}]}});
        plumb_testenv::process::kubectl_apply(&env, &crd);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let out = env
                .kubectl()
                .args(["get", &format!("{plural}.argoproj.io"), "-A"])
                .output()
                .unwrap();
            if out.status.success() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{}",
                text(&out.stderr)
            );
            std::thread::yield_now();
        }
    }
    let guard = env.namespace("proj-unmodelled");
    let ns = guard.name().to_string();
    let kc = env.kubeconfig();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("team.yaml");
    let write = |key: &str| {
        std::fs::write(
            &file,
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: team\nspec:\n  sourceRepos: ['*']\n  sourceIntegrity:\n    git:\n      policies:\n      - repos: [{{url: '*'}}]\n        gpg: {{mode: head, keys: [{key}]}}\n"
            ),
        )
        .unwrap();
    };
    write("D56C4FCF");
    let path = file.display().to_string();
    let out = proj(kc, &ns, None, &["create", "-f", &path]);
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    let keys = |p: &Value| {
        p.pointer("/spec/sourceIntegrity/git/policies/0/gpg/keys")
            .cloned()
    };
    assert_eq!(keys(&stored(&env, &ns, "team")), Some(json!(["D56C4FCF"])));
    write("4AEE18F83AFDEB23");
    let out = proj(
        kc,
        &ns,
        None,
        &[
            "create",
            "-f",
            &path,
            "--upsert",
            "--description",
            "upserted",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    let p = stored(&env, &ns, "team");
    assert_eq!(keys(&p), Some(json!(["4AEE18F83AFDEB23"])), "{p}");
    assert_eq!(p["spec"]["description"], "upserted");
    let out = proj(
        kc,
        &ns,
        Some("sed -i 's/description: upserted/description: edited/' \"$1\"\n"),
        &["edit", "team"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    let p = stored(&env, &ns, "team");
    assert_eq!(p["spec"]["description"], "edited");
    assert_eq!(keys(&p), Some(json!(["4AEE18F83AFDEB23"])), "{p}");
}
