//! `plumb cluster rotate-auth`, `set` and `add --exec-command*` in core mode against the real
//! API server: the rotated token works and is stored, the old one is revoked; `set` changes
//! only the fields it names; a cluster added with an exec plugin is stored with it and
//! connects through it. Each test uses a ServiceAccount of its own namespace (never
//! `kube-system`'s `argocd-manager`, which other tests install). No token in any output.

use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::app::{control_namespace, env, kubectl, text};
use super::cluster_cli::{must, ok};

fn run(args: &[&str], kubeconfig: &std::path::Path, ns: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["-N", ns])
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn b64(s: &str) -> String {
    use base64::Engine as _;
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(s).unwrap()).unwrap()
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
    let cfg = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": context, "cluster": raw["clusters"][0]["cluster"]}],
        "users": [{"name": context, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
    });
    let path = dir.join(format!("{context}.kubeconfig"));
    std::fs::write(&path, cfg.to_string()).unwrap();
    path
}

/// A ServiceAccount `mgr` of `ns` bound to cluster-admin, and a short-lived token of it.
fn manager(ns: &str) -> (String, String) {
    must(&["-n", ns, "create", "serviceaccount", "mgr"]);
    let binding = format!("{ns}-mgr");
    must(&[
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={ns}:mgr"),
    ]);
    (
        binding,
        must(&["-n", ns, "create", "token", "mgr", "--duration=1h"]),
    )
}

fn cluster_secret(ns: &str) -> Value {
    let list: Value = serde_json::from_str(&must(&[
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
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1), "{list:#}");
    list["items"][0].clone()
}

fn stored_config(ns: &str) -> Value {
    serde_json::from_str(&b64(cluster_secret(ns)["data"]["config"].as_str().unwrap())).unwrap()
}

/// Whether `token` authenticates (kubectl auth whoami with it).
fn works(dir: &std::path::Path, token: &str) -> bool {
    let kc = kubeconfig_with_token(dir, "probe", token);
    env()
        .kubectl()
        .arg("--kubeconfig")
        .arg(&kc)
        .args(["auth", "whoami"])
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn rotate_auth_replaces_the_token_and_revokes_the_old_one_and_set_changes_named_fields() {
    let ns = control_namespace("cli-rotate");
    let ns = ns.name();
    let dir = tempfile::tempdir().unwrap();
    let (binding, installer) = manager(ns);
    let kubeconfig = kubeconfig_with_token(dir.path(), "rot-ctx", &installer);
    let mut outputs = Vec::new();
    let out = run(
        &[
            "cluster",
            "add",
            "rot-ctx",
            "-y",
            "--service-account",
            "mgr",
            "--system-namespace",
            ns,
            "--name",
            "rot",
            "--label",
            "keep=me",
        ],
        &kubeconfig,
        ns,
    );
    ok(&out);
    outputs.push(out);
    let old = b64(&must(&[
        "-n",
        ns,
        "get",
        "secret",
        "mgr-long-lived-token",
        "-o",
        "jsonpath={.data.token}",
    ]));
    assert_eq!(stored_config(ns)["bearerToken"], old.as_str());
    assert!(works(dir.path(), &old));

    let out = run(&["cluster", "rotate-auth", "rot"], &kubeconfig, ns);
    assert_eq!(ok(&out), "Cluster 'rot' rotated auth\n");
    outputs.push(out);
    let new = stored_config(ns)["bearerToken"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(new, old, "a new token is stored");
    assert!(
        !kubectl(&["-n", ns, "get", "secret", "mgr-long-lived-token"])
            .status
            .success(),
        "the old token Secret is deleted"
    );
    let sa: Value = serde_json::from_str(&must(&[
        "-n",
        ns,
        "get",
        "serviceaccount",
        "mgr",
        "-o",
        "json",
    ]))
    .unwrap();
    let listed = sa["secrets"][0]["name"].as_str().unwrap().to_string();
    assert!(listed.starts_with("mgr-long-lived-"), "{sa:#}");
    assert_eq!(
        b64(&must(&[
            "-n",
            ns,
            "get",
            "secret",
            &listed,
            "-o",
            "jsonpath={.data.token}"
        ])),
        new
    );
    assert!(works(dir.path(), &new), "the new token authenticates");
    // The API server's token cache may answer for the old token a little longer.
    let revoked = (0..60).any(|_| {
        if works(dir.path(), &old) {
            std::thread::sleep(std::time::Duration::from_millis(500));
            false
        } else {
            true
        }
    });
    assert!(revoked, "the old token stops working");
    let out = run(&["cluster", "get", "rot", "-o", "json"], &kubeconfig, ns);
    let got: Value = serde_json::from_str(&ok(&out)).unwrap();
    outputs.push(out);
    assert_eq!(got["connectionState"]["status"], "Successful", "{got:#}");

    // set: only the named fields change; '*' means every namespace.
    let out = run(
        &[
            "cluster",
            "set",
            "rot",
            "--name",
            "rot2",
            "--label",
            "team=a",
            "--namespace",
            "*",
        ],
        &kubeconfig,
        ns,
    );
    assert_eq!(ok(&out), "Cluster 'rot' updated.\n");
    outputs.push(out);
    let secret = cluster_secret(ns);
    assert_eq!(b64(secret["data"]["name"].as_str().unwrap()), "rot2");
    assert_eq!(secret["metadata"]["labels"]["team"], "a");
    assert!(
        secret["metadata"]["labels"].get("keep").is_none(),
        "labels are replaced, as Argo"
    );
    assert!(secret["data"].get("namespaces").is_none(), "{secret:#}");
    assert_eq!(
        stored_config(ns)["bearerToken"],
        new.as_str(),
        "config unchanged"
    );
    let out = run(
        &[
            "cluster",
            "set",
            "rot2",
            "--namespace",
            "a",
            "--namespace",
            "b",
        ],
        &kubeconfig,
        ns,
    );
    ok(&out);
    outputs.push(out);
    assert_eq!(
        b64(cluster_secret(ns)["data"]["namespaces"].as_str().unwrap()),
        "a,b"
    );
    let out = run(&["cluster", "set", "rot2"], &kubeconfig, ns);
    assert_eq!(ok(&out), "Specify the cluster field to be updated.\n");
    for (args, message) in [
        (
            vec!["cluster", "set", "rot2", "--label", "nokey"],
            "labels should have key=value, but instead got: nokey",
        ),
        (
            vec!["cluster", "set", "nosuch", "--name", "x"],
            "permission denied",
        ),
        (
            vec!["cluster", "rotate-auth", "nosuch"],
            "permission denied",
        ),
    ] {
        let out = run(&args, &kubeconfig, ns);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(
            text(&out.stderr).contains(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
        outputs.push(out);
    }
    for out in &outputs {
        for t in [&old, &new, &installer] {
            let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert!(!all.contains(t.as_str()), "a token in the output");
        }
    }
    let _ = kubectl(&["delete", "clusterrolebinding", &binding]);
}

#[test]
fn cluster_add_with_an_exec_plugin_stores_it_and_connects_through_it() {
    let ns = control_namespace("cli-exec-add");
    let ns = ns.name();
    let dir = tempfile::tempdir().unwrap();
    let (binding, token) = manager(ns);
    let kubeconfig = kubeconfig_with_token(dir.path(), "exec-ctx", &token);
    let plugin = dir.path().join("get-token.sh");
    let credential = json!({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                            "status": {"token": token}});
    std::fs::write(
        &plugin,
        format!("#!/bin/sh\ntest \"$1\" = first && test \"$REGION\" = eu || exit 3\necho '{credential}'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut outputs = Vec::new();
    for (args, message) in [
        (vec!["--aws-cluster-name", "prod"], "config.awsAuthConfig"),
        (
            vec!["--in-cluster", "--cluster-endpoint", "kubeconfig"],
            "Can only use one of --in-cluster or --cluster-endpoint",
        ),
        (vec!["--cluster-endpoint", "public"], "--cluster-endpoint"),
        (
            vec!["--exec-command", "x"],
            "--exec-command-api-version is required",
        ),
        (
            vec!["--exec-command", "x", "--exec-command-api-version", "v9"],
            "config.execProviderConfig.apiVersion",
        ),
        (
            vec![
                "--exec-command",
                "x",
                "--exec-command-api-version",
                "client.authentication.k8s.io/v1",
                "--exec-command-env",
                "NOVALUE",
            ],
            "--exec-command-env",
        ),
        (vec!["--proxy-url", "ftp://proxy"], "--proxy-url"),
        (vec!["--label", "a=b=c"], "labels should have key=value"),
    ] {
        let mut all = vec!["cluster", "add", "exec-ctx", "-y"];
        all.extend(args.iter().copied());
        let out = run(&all, &kubeconfig, ns);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(
            text(&out.stderr).contains(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
        outputs.push(out);
    }
    assert!(
        !kubectl(&[
            "-n",
            ns,
            "get",
            "secrets",
            "-l",
            "argocd.argoproj.io/secret-type=cluster",
            "-o",
            "name"
        ])
        .stdout
        .iter()
        .any(|b| !b.is_ascii_whitespace()),
        "nothing stored by a refused add"
    );

    let plugin_path = plugin.display().to_string();
    let out = run(
        &[
            "cluster",
            "add",
            "exec-ctx",
            "-y",
            "--name",
            "ex",
            "--exec-command",
            &plugin_path,
            "--exec-command-args",
            "first",
            "--exec-command-env",
            "REGION=eu",
            "--exec-command-api-version",
            "client.authentication.k8s.io/v1",
            "--exec-command-install-hint",
            "install get-token",
            "--shard",
            "2",
            "--project",
            "team",
            "--server-proxy-url",
            "",
            "--disable-compression",
            "--annotation",
            "owner=ops",
        ],
        &kubeconfig,
        ns,
    );
    ok(&out);
    outputs.push(out);
    let secret = cluster_secret(ns);
    let config = stored_config(ns);
    assert!(config.get("bearerToken").is_none(), "{config:#}");
    assert_eq!(
        config["execProviderConfig"],
        json!({"command": plugin_path, "args": ["first"], "env": {"REGION": "eu"},
               "apiVersion": "client.authentication.k8s.io/v1", "installHint": "install get-token"})
    );
    assert_eq!(config["disableCompression"], true);
    assert_eq!(b64(secret["data"]["shard"].as_str().unwrap()), "2");
    assert_eq!(b64(secret["data"]["project"].as_str().unwrap()), "team");
    assert_eq!(secret["metadata"]["annotations"]["owner"], "ops");
    assert!(
        !kubectl(&["-n", ns, "get", "secret", "mgr-long-lived-token"])
            .status
            .success(),
        "no ServiceAccount token is made for an exec plugin"
    );
    let out = run(&["cluster", "list"], &kubeconfig, ns);
    let list = ok(&out);
    outputs.push(out);
    let row = list
        .lines()
        .find(|l| l.contains(" ex "))
        .unwrap_or_else(|| panic!("{list}"));
    assert!(row.contains("Successful") && row.contains("team"), "{list}");
    let out = run(&["cluster", "rotate-auth", "ex"], &kubeconfig, ns);
    assert!(
        text(&out.stderr).contains("does not use bearer token authentication"),
        "{}",
        text(&out.stderr)
    );
    outputs.push(out);
    for out in &outputs {
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!all.contains(token.as_str()), "a token in the output");
    }
    let _ = kubectl(&["delete", "clusterrolebinding", &binding]);
}
