//! The Clusters pages in a real browser (`ui/e2e/settings-clusters.mjs`): a second cluster
//! (this test control plane under its own URL, reached with a real ServiceAccount token from
//! the TokenRequest API) connected through the form, after a wrong token was refused next to
//! its field; listed with its connection state, renamed on its page, removed. Checked here: no
//! cluster Secret is left, and the token is in none of the script's output.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};

use super::support::{create_default_project, env, server_config};
use super::{prerequisites, secret_value};

/// The test API server's URL and CA certificate (PEM), from its kubeconfig.
fn api_server() -> (String, String) {
    let out = env()
        .kubectl()
        .args(["config", "view", "--raw", "--minify", "-o", "json"])
        .output()
        .expect("kubectl config view");
    let cfg: Value = serde_json::from_slice(&out.stdout).expect("kubeconfig json");
    let cluster = &cfg["clusters"][0]["cluster"];
    let server = cluster["server"].as_str().expect("server").to_string();
    let ca = match cluster["certificate-authority-data"].as_str() {
        Some(d) => {
            use base64::Engine as _;
            let pem = base64::engine::general_purpose::STANDARD
                .decode(d)
                .expect("base64 CA");
            String::from_utf8(pem).expect("PEM")
        }
        None => std::fs::read_to_string(cluster["certificate-authority"].as_str().expect("CA"))
            .expect("CA file"),
    };
    (server, ca)
}

/// A token of a new ServiceAccount of `ns`, from the TokenRequest API. It needs no role: the
/// connection check reads the server version and the API groups, which every authenticated
/// account may.
async fn service_account_token(client: &kube::Client, ns: &str, name: &str) -> String {
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("ServiceAccount");
    sas.create(&PostParams::default(), &sa)
        .await
        .expect("create ServiceAccount");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    sas.create_token_request(name, &PostParams::default(), &request)
        .await
        .expect("TokenRequest")
        .status
        .and_then(|s| s.token)
        .expect("a token")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_settings_clusters() {
    let (ui, chromium) = match prerequisites() {
        Ok(p) => p,
        Err(why) => panic!("the web UI browser test cannot run: {why}"),
    };
    let env = env();
    let ns = env.namespace("ui-clusters");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    let mut config = server_config(ns.name());
    config.disable_auth = false;
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("server starts");
    let admin_pw = secret_value(
        &client,
        ns.name(),
        "argocd-initial-admin-secret",
        "password",
    )
    .await;
    let base = format!("https://localhost:{}", server.addr.port());
    let (api_url, ca) = api_server();
    let token = service_account_token(&client, ns.name(), "ui-cluster-manager").await;

    let mut cmd = tokio::process::Command::new("node");
    cmd.arg("e2e/settings-clusters.mjs")
        .current_dir(&ui)
        .env("PLUMB_UI_URL", &base)
        .env("PLUMB_ADMIN_PASSWORD", &admin_pw)
        .env("PLUMB_CLUSTER_SERVER", &api_url)
        .env("PLUMB_CLUSTER_CA", &ca)
        .env("PLUMB_CLUSTER_TOKEN", &token)
        .env("PLUMB_CHROMIUM", &chromium)
        .env("PLUMB_FAILURE_DIR", std::env::temp_dir())
        .kill_on_drop(true);
    if let Some(dir) = std::env::var_os("PLUMB_UI_SCREENSHOTS") {
        cmd.env("PLUMB_SCREENSHOTS", dir);
    }
    // A generous bound for the whole browser session; no step is timed.
    let out = tokio::time::timeout(Duration::from_secs(600), cmd.output())
        .await
        .expect("the browser test ends within 10 minutes")
        .expect("node runs (Node 20 is required)");
    let log = String::from_utf8_lossy(&out.stdout).to_string();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    println!("{log}{err}");
    assert!(
        out.status.success() && log.lines().last() == Some("PASS"),
        "the clusters browser test failed; its output:\n{log}"
    );
    assert!(
        !log.contains(&token) && !err.contains(&token),
        "the token is in no output of the page"
    );

    // The page removed the cluster: its Secret is gone.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns.name());
    let left = secrets
        .list(&ListParams::default().labels("argocd.argoproj.io/secret-type=cluster"))
        .await
        .expect("list Secrets")
        .items;
    // Names only: the Secret holds the token.
    let names: Vec<_> = left.iter().map(|s| s.metadata.name.clone()).collect();
    assert!(
        names.is_empty(),
        "the cluster Secret was deleted: {names:?}"
    );
    server.shutdown().await;
}
