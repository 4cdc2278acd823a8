//! Cluster Secrets are input from whoever may write Secrets in the control namespace (issue
//! #27, "Bad input"): an `execProviderConfig` command that hangs, one that prints 1 GiB, a
//! `config` that is no JSON, a `proxyUrl` that is no URL (with a password in it), fields of the
//! wrong type, and `project` values that look like patterns. Each is driven through a real
//! `plumb controller` as an operator would meet it (an Application whose destination is that
//! cluster): the Application reports the problem naming the field, the plugin is killed at the
//! time limit with everything it started, its output is cut at the limit (the controller's
//! memory stays far below what the plugin printed), and nothing of the Secret is shown.
//!
//! The parsers' own tests are beside them (`plumb-app/src/clusters/config.rs`, `exec.rs`); the
//! exec plugin that works is `plumb-controller/tests/it/exec_cluster.rs`.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::running::{Running, env, kubectl_apply};

fn plugin(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn cluster_secret(ns: &str, name: &str, server: &str, config: &str, project: Option<&str>) {
    let mut data = json!({"name": name, "server": server, "config": config});
    if let Some(p) = project {
        data["project"] = json!(p);
    }
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("cluster-{name}"), "namespace": ns,
                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": data}));
}

fn exec_config(command: &str) -> String {
    json!({"execProviderConfig": {"command": command, "apiVersion": "client.authentication.k8s.io/v1"},
           "tlsClientConfig": {"insecure": true}})
    .to_string()
}

/// The test API server's URL.
fn api_server() -> String {
    let out = crate::running::kubectl(&["config", "view", "--minify", "-o", "json"]);
    let cfg: Value = serde_json::from_slice(&out.stdout).unwrap();
    cfg["clusters"][0]["cluster"]["server"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The conditions of the Application as one text.
fn conditions(a: &Value) -> String {
    a["status"]["conditions"].to_string()
}

/// Whether process `pid` is gone (or a zombie waiting for its parent).
fn gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// The controller's peak resident memory in KiB (`VmHWM`).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[test]
fn hanging_flooding_and_malformed_cluster_secrets_are_refused_naming_the_field() {
    let mut ctl = Running::start("hostile-clusters", &[("RUST_LOG", "debug")]);
    let ns = ctl.ns.name().to_string();
    let api = api_server();
    let dir = tempfile::tempdir().unwrap();
    let child_pid = dir.path().join("child.pid");
    let hang = plugin(
        dir.path(),
        "hang.sh",
        &format!("sleep 600 &\necho $! > '{}'\nwait", child_pid.display()),
    );
    let flood = plugin(dir.path(), "flood.sh", "head -c 1073741824 /dev/zero");
    let secret = "cluster-secret-never-shown-27";
    let cases = [
        ("hang", exec_config(&hang), "did not finish within 30s and was killed"),
        ("flood", exec_config(&flood), "printed more than 1048576 bytes; refused"),
        ("not-json", format!("{{\"bearerToken\": \"{secret}\""), "config.: not JSON"),
        (
            "bad-proxy",
            json!({"bearerToken": secret, "proxyUrl": format!("http://u:{secret}@[::")}).to_string(),
            "config.proxyUrl",
        ),
        (
            "bad-insecure",
            json!({"bearerToken": secret, "tlsClientConfig": {"insecure": "yes"}}).to_string(),
            "config.tlsClientConfig.insecure",
        ),
        (
            "no-command",
            json!({"execProviderConfig": {"apiVersion": "client.authentication.k8s.io/v1", "args": [secret]}}).to_string(),
            "config.execProviderConfig.command",
        ),
    ];
    for (i, (name, config, _)) in cases.iter().enumerate() {
        cluster_secret(&ns, name, &format!("{api}/case-{i}"), config, None);
        ctl.create_app(
            name,
            json!({"project": "default",
            "source": {"repoURL": "https://git.invalid/never-fetched.git", "path": "."},
            "destination": {"name": name, "namespace": "hostile-clusters-target"}}),
        );
    }
    for (name, _, expected) in &cases {
        let app = ctl.wait_app(name, expected, |a| conditions(a).contains(expected));
        let text = conditions(&app);
        assert!(!text.contains(secret), "{name}: {text}");
        assert!(text.len() < 4096, "{name}: bounded: {text}");
    }
    // The hanging plugin's whole process group was killed, not just the shell.
    let pid = std::fs::read_to_string(&child_pid).unwrap();
    assert!(gone(&pid), "the plugin's child {pid} still runs");
    // 1 GiB was printed; the controller read 1 MiB of it.
    assert!(ctl.alive(), "the controller died");
    let peak = peak_kib(ctl.pid());
    assert!(peak < 512 * 1024, "the controller grew to {peak} KiB");
    let log = ctl.log();
    assert!(!log.contains(secret), "the log shows the Secret's values");
    let events = ctl.events();
    assert!(
        !events.contains(secret),
        "an Event shows the Secret's values"
    );
}

/// A cluster Secret's `project` is a project's name, compared byte for byte: a value that looks
/// like a pattern (`*`, `team*`, `../team`) or differs in case or white space scopes the cluster
/// to no real project, so under `permitOnlyProjectScopedClusters` the project's Application is
/// refused with Argo's message; the exact name admits it (so the refusals are the values').
#[test]
fn a_cluster_secret_project_that_looks_like_a_pattern_scopes_the_cluster_to_nothing() {
    let ctl = Running::start("hostile-cluster-project", &[]);
    let ns = ctl.ns.name().to_string();
    let dest = env().namespace("hostile-cluster-project-dest");
    ctl.create_project(
        "team",
        json!({"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
               "permitOnlyProjectScopedClusters": true}),
    );
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scoped\n",
        )],
        "one",
    );
    let local = "https://kubernetes.default.svc";
    let app = |name: &str| {
        ctl.create_app(
            name,
            json!({"project": "team",
            "source": {"repoURL": repo.url(), "path": "app"},
            "destination": {"server": local, "namespace": dest.name()}}),
        );
    };
    let refusal = "do not match any of the allowed destinations in project 'team' (permitOnlyProjectScopedClusters)";
    for (i, project) in ["*", "team*", "../team", "team\n", "TEAM", " team"]
        .iter()
        .enumerate()
    {
        cluster_secret(&ns, "in-cluster", local, "", Some(project));
        let name = format!("scoped-{i}");
        app(&name);
        let got = ctl.wait_app(&name, "refused by the project", |a| {
            conditions(a).contains(refusal)
        });
        assert_ne!(got["status"]["sync"]["status"], "Synced", "{project:?}");
    }
    cluster_secret(&ns, "in-cluster", local, "", Some("team"));
    app("scoped-team");
    ctl.wait_app(
        "scoped-team",
        "admitted once the cluster is the project's",
        |a| a["status"]["sync"]["status"] == "OutOfSync" && !conditions(a).contains(refusal),
    );
}
