//! `plumb appset` through `plumb server` with a real controller and a private Git repository
//! (real Git over HTTP with Basic authentication): generate and diff rendered by the server with
//! its repository Secret (the CLI has no kubeconfig and no credentials), create --wait until the
//! controller's first reconcile, list, get, delete --wait until the set and its Applications are
//! gone; a role without `applicationsets` rights refused on each; a core-mode preview of the
//! private repository without its Secret failing with an error naming the repository.

use std::process::{Command, Output, Stdio};

use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use plumb_testenv::process::initial_admin_password;
use serde_json::json;

use crate::app::{control_namespace, env, kubectl, kubectl_apply, text};
use crate::server_cli::{Killed, all, login_admin, remote, start_server_with};

const PASSWORD: &str = "aapi-s3cret-pw";

fn set_yaml(url: &str, dest: &str, glob: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: fleet\nspec:\n  generators:\n  - git:\n      repoURL: {url}\n      revision: HEAD\n      directories:\n      - path: '{glob}'\n  template:\n    metadata:\n      name: 'aapi-{{{{path.basename}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: {url}\n        targetRevision: HEAD\n        path: '{{{{path}}}}'\n      destination:\n        server: https://kubernetes.default.svc\n        namespace: {dest}\n"
    )
}

/// `plumb controller` over `ns` (its ApplicationSet controller writes the conditions
/// `create --wait` waits for).
fn start_controller(ns: &str, cache: &std::path::Path) -> Killed {
    let metrics_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    Killed(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", ns])
            .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(cache)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// `plumb appset ARGS` in core mode over the kubeconfig, `ns` the control namespace.
fn core(ns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("appset")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns, "--core"])
        .env("TZ", "UTC")
        .env("HOME", std::env::temp_dir())
        .env_remove("PLUMB_NAMESPACE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// An account `name` with `policy` and a password set by the admin, logged in under `home`.
fn login_account(
    admin_home: &std::path::Path,
    server: &str,
    ctl: &str,
    name: &str,
    policy: &str,
) -> tempfile::TempDir {
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ctl},
        "data": {format!("accounts.{name}"): "login"}}));
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-rbac-cm", "namespace": ctl},
        "data": {"policy.csv": policy}}));
    let admin_pw = initial_admin_password(env(), ctl);
    let out = remote(
        admin_home,
        &[
            "account",
            "update-password",
            "--account",
            name,
            "--current-password",
            &admin_pw,
            "--new-password",
            "viewer-pw-1234",
        ],
    );
    assert!(out.status.success(), "{}", all(&out));
    let home = tempfile::tempdir().unwrap();
    let out = remote(
        home.path(),
        &[
            "login",
            server,
            "--username",
            name,
            "--password",
            "viewer-pw-1234",
            "--insecure",
        ],
    );
    assert!(out.status.success(), "{}", all(&out));
    home
}

fn exists(ns: &str, kind: &str, name: &str) -> bool {
    kubectl(&["-n", ns, "get", kind, name, "-o", "name"])
        .status
        .success()
}

#[test]
fn appset_commands_through_the_server_with_its_credentials() {
    env().ensure_applicationset_crd();
    let ctl = control_namespace("aapi-appset-srv");
    let ctl = ctl.name();
    let dest = env().namespace("aapi-appset-dest");
    let repo = GitRepo::named("aapi-fleet");
    repo.commit(
        &[
            (
                "apps/one/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n",
            ),
            (
                "apps/two/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n",
            ),
        ],
        "two apps",
    );
    let git = GitHttpServer::serve(&repo, Some(("bot", PASSWORD)));
    let url = git.url();
    // The server's (and the controller's) repository Secret; the CLI never sees it.
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "aapi-private", "namespace": ctl,
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"type": "git", "url": url, "username": "bot", "password": PASSWORD}}));
    let cache = tempfile::tempdir().unwrap();
    let _controller = start_controller(ctl, &cache.path().join("controller"));
    let plugins = tempfile::tempdir().unwrap();
    let (_server, addr) = start_server_with(
        ctl,
        &cache.path().join("server"),
        plugins.path(),
        &["--metrics-addr", "off"],
    );
    let server = addr.to_string();
    let home = tempfile::tempdir().unwrap();
    let out = login_admin(home.path(), &server, &initial_admin_password(env(), ctl));
    assert!(out.status.success(), "{}", all(&out));
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join("fleet.yaml");
    std::fs::write(&file, set_yaml(&url, dest.name(), "apps/*")).unwrap();
    let f = file.to_str().unwrap();
    let narrower = files.path().join("one.yaml");
    std::fs::write(&narrower, set_yaml(&url, dest.name(), "apps/one")).unwrap();

    // generate: rendered by the server, which reads the private repository with its Secret.
    let out = remote(home.path(), &["appset", "generate", f, "-o", "json"]);
    assert!(out.status.success(), "{}", all(&out));
    let apps: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = apps
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["aapi-one", "aapi-two"]);
    assert!(!all(&out).contains(PASSWORD));

    // Core mode, where the kubeconfig reaches no Secret for it: a clear error naming the
    // repository, no prompt, no credential; with the Secret's namespace it reads it.
    let elsewhere = control_namespace("aapi-appset-local");
    let out = core(elsewhere.name(), &["generate", f]);
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    let err = text(&out.stderr);
    assert!(err.contains(&url) && err.contains("fleet.yaml"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
    let out = core(ctl, &["generate", f, "-o", "json"]);
    assert!(out.status.success(), "{}", all(&out));

    // create --wait: until the controller's first reconcile (ResourcesUpToDate).
    let out = remote(
        home.path(),
        &["appset", "create", f, "--wait", "--timeout", "120"],
    );
    assert!(out.status.success(), "{}", all(&out));
    let err = text(&out.stderr);
    assert!(err.contains("ApplicationSet 'fleet' created"), "{err}");
    assert!(
        err.contains("ApplicationSet 'fleet' resources are up to date"),
        "{err}"
    );
    assert!(exists(ctl, "applications.argoproj.io", "aapi-one"));
    assert!(exists(ctl, "applications.argoproj.io", "aapi-two"));

    // list, get, diff through the server.
    let out = remote(home.path(), &["appset", "list", "-o", "name"]);
    assert!(out.status.success(), "{}", all(&out));
    assert_eq!(text(&out.stdout).trim(), format!("{ctl}/fleet"));
    let out = remote(home.path(), &["appset", "get", "fleet"]);
    assert!(out.status.success(), "{}", all(&out));
    assert!(
        text(&out.stdout).contains("ResourcesUpToDate"),
        "{}",
        all(&out)
    );
    let out = remote(home.path(), &["appset", "diff", f]);
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    let out = remote(home.path(), &["appset", "diff", narrower.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", all(&out));
    assert!(text(&out.stdout).contains("aapi-two"), "{}", all(&out));

    // A role without `applicationsets` rights: refused on each, with Argo's message.
    let viewer = login_account(
        home.path(),
        &server,
        ctl,
        "aapi-viewer",
        "p, aapi-viewer, applications, get, */*, allow\n",
    );
    let out = remote(viewer.path(), &["appset", "list", "-o", "name"]);
    assert!(out.status.success(), "{}", all(&out));
    assert_eq!(
        text(&out.stdout).trim(),
        "",
        "only the sets the caller may get"
    );
    for (args, action) in [
        (vec!["appset", "get", "fleet"], "get"),
        (vec!["appset", "create", f, "--upsert"], "create"),
        (vec!["appset", "generate", f], "create"),
        (vec!["appset", "delete", "fleet", "--yes"], "delete"),
    ] {
        let out = remote(viewer.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", all(&out));
        assert!(
            text(&out.stderr).contains(&format!(
                "permission denied: applicationsets, {action}, default/fleet, sub: aapi-viewer"
            )),
            "{args:?}: {}",
            all(&out)
        );
    }
    assert!(
        exists(ctl, "applicationsets.argoproj.io", "fleet"),
        "a refusal deletes nothing"
    );

    // delete --wait: until the set and the Applications it owned are gone.
    let out = remote(
        home.path(),
        &[
            "appset",
            "delete",
            "fleet",
            "--yes",
            "--wait",
            "--timeout",
            "120",
        ],
    );
    assert!(out.status.success(), "{}", all(&out));
    assert_eq!(text(&out.stdout), "applicationset 'fleet' deleted\n");
    assert!(!exists(ctl, "applicationsets.argoproj.io", "fleet"));
    assert!(!exists(ctl, "applications.argoproj.io", "aapi-one"));
    assert!(!exists(ctl, "applications.argoproj.io", "aapi-two"));
    let out = remote(
        home.path(),
        &["appset", "delete", "fleet", "--yes", "--wait"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", all(&out));
    assert!(text(&out.stderr).contains("not found"), "{}", all(&out));
}
