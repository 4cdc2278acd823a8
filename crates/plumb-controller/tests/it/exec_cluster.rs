//! A destination cluster whose credentials come from an exec credential plugin: a shell script
//! that prints an ExecCredential holding a real ServiceAccount token of the test API server,
//! registered under the API server's own URL (a second name for the same cluster). Beside it,
//! cluster Secrets that cannot be used (a malformed `config`, a plugin printing garbage) are
//! reported on their Applications by field, and never stop the good one.

use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::Controlled;

/// The test API server's URL and CA (base64), read from its kubeconfig.
pub fn api_server(env: &TestEnv) -> (String, String) {
    let out = env
        .kubectl()
        .args(["config", "view", "--raw", "--minify", "-o", "json"])
        .output()
        .expect("kubectl config view");
    let cfg: Value = serde_json::from_slice(&out.stdout).expect("kubeconfig json");
    let cluster = &cfg["clusters"][0]["cluster"];
    let server = cluster["server"].as_str().expect("server").to_string();
    let ca = match cluster["certificate-authority-data"].as_str() {
        Some(d) => d.to_string(),
        None => STANDARD.encode(
            std::fs::read(cluster["certificate-authority"].as_str().expect("ca path"))
                .expect("ca file"),
        ),
    };
    (server, ca)
}

/// A ServiceAccount of `ns` bound to cluster-admin (as argocd-manager is, through its own
/// ClusterRole), and a token for it from the TokenRequest API.
pub fn service_account_token(env: &TestEnv, ns: &str, name: &str) -> String {
    let run = |args: &[&str]| {
        let out = env.kubectl().args(args).output().expect("kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    run(&["-n", ns, "create", "serviceaccount", name]);
    let binding = format!("{ns}-{name}");
    run(&[
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={ns}:{name}"),
    ]);
    run(&["-n", ns, "create", "token", name, "--duration=1h"])
}

/// A plugin script in `dir` printing `body`; each run appends a line to `runs`.
fn plugin(dir: &std::path::Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    let runs = dir.join(format!("{name}.runs"));
    std::fs::write(
        &path,
        format!("#!/bin/sh\necho run >> '{}'\n{body}\n", runs.display()),
    )
    .expect("plugin");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

fn cluster_secret(name: &str, server: &str, config: &str) -> Secret {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("cluster-{name}"),
                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": name, "server": server, "config": config}
    }))
    .expect("secret")
}

#[tokio::test]
async fn an_exec_plugin_cluster_syncs_and_unusable_clusters_are_reported_by_field() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-exec").await;
    let ns = ctl.ns.name().to_string();
    let (server, ca) = api_server(env);
    let token = service_account_token(env, &ns, "exec-plugin");
    let dir = tempfile::tempdir().expect("tempdir");
    let good = plugin(
        dir.path(),
        "good.sh",
        &format!(
            "echo '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{token}\",\"expirationTimestamp\":\"2099-01-01T00:00:00Z\"}}}}'"
        ),
    );
    let garbage = plugin(dir.path(), "garbage.sh", "echo 'not-json {{'");
    let exec_config = |command: &str| {
        json!({"execProviderConfig": {"command": command, "apiVersion": "client.authentication.k8s.io/v1"},
               "tlsClientConfig": {"caData": ca}})
        .to_string()
    };
    let secrets: Api<Secret> = Api::namespaced(ctl.client.clone(), &ns);
    for s in [
        cluster_secret("by-exec", &server, &exec_config(&good)),
        // The same API server under other URLs, so each Secret is its own cluster.
        cluster_secret(
            "garbage",
            &server.replace("127.0.0.1", "localhost"),
            &exec_config(&garbage),
        ),
        cluster_secret(
            "bad-proxy",
            &format!("{server}/bad"),
            r#"{"proxyUrl":"not a url","bearerToken":"never-shown-token"}"#,
        ),
    ] {
        secrets
            .create(&PostParams::default(), &s)
            .await
            .expect("create cluster secret");
    }

    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-exec\ndata:\n  via: exec\n",
        )],
        "cm",
    );
    let target = format!("{ns}-target");
    for (app, cluster) in [
        ("by-exec", "by-exec"),
        ("garbage", "garbage"),
        ("bad-proxy", "bad-proxy"),
    ] {
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": app},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": "app"},
                     "destination": {"name": cluster, "namespace": target},
                     "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}
        }))
        .await;
    }
    let message = |a: &Value| a["status"]["conditions"].to_string();
    let bad = ctl
        .wait_app("bad-proxy", "the proxyUrl reported", |a| {
            message(a).contains("config.proxyUrl")
        })
        .await;
    assert!(message(&bad).contains("not a URL"), "{}", message(&bad));
    let garbled = ctl
        .wait_app("garbage", "the plugin's garbage reported", |a| {
            message(a).contains("invalid ExecCredential")
        })
        .await;
    assert!(
        !message(&garbled).contains("not-json"),
        "{}",
        message(&garbled)
    );

    let app = ctl.sync("by-exec", json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        app["status"]["operationState"]
    );
    let via = env
        .kubectl()
        .args([
            "-n",
            &target,
            "get",
            "configmap",
            "from-exec",
            "-o",
            "jsonpath={.data.via}",
        ])
        .output()
        .expect("kubectl");
    assert_eq!(String::from_utf8_lossy(&via.stdout), "exec");
    // The credential is cached until it expires (2099): the plugin ran once.
    let runs = std::fs::read_to_string(dir.path().join("good.sh.runs")).expect("runs");
    assert_eq!(runs.lines().count(), 1, "plugin runs: {runs}");

    // No credential in anything the controller wrote.
    for name in ["by-exec", "garbage", "bad-proxy"] {
        let text = serde_json::to_string(&ctl.apps().get(name).await.expect("app")).expect("json");
        assert!(!text.contains(&token), "{name} holds the token");
        assert!(
            !text.contains("never-shown-token"),
            "{name} holds the token"
        );
    }
    let events = env
        .kubectl()
        .args(["-n", &ns, "get", "events", "-o", "json"])
        .output()
        .expect("kubectl");
    let events = String::from_utf8_lossy(&events.stdout);
    assert!(!events.contains(&token) && !events.contains("never-shown-token"));

    let _ = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(env.kubeconfig())
        .args(["delete", "namespace", &target, "--wait=false"])
        .output();
    let _ = env
        .kubectl()
        .args(["delete", "clusterrolebinding", &format!("{ns}-exec-plugin")])
        .output();
}
