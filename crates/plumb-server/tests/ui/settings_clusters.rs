//! The Clusters pages in a real browser (`ui/e2e/settings-clusters.mjs`): a second cluster
//! (this test control plane under its own URL, reached with a real ServiceAccount token from
//! the TokenRequest API) connected through the form, after a wrong token was refused next to
//! its field; listed with its connection state, renamed on its page, removed. Checked here: no
//! cluster Secret is left, and the token is in none of the script's output.

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

use super::browser::SettingsServer;
use super::support::env;

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
    let stack = SettingsServer::start("ui-clusters").await;
    let (ns, client) = (&stack.ns, &stack.client);
    let (api_url, ca) = env().api_server();
    let token = service_account_token(client, ns.name(), "ui-cluster-manager").await;
    let out = stack
        .run(
            "settings-clusters.mjs",
            &[
                ("PLUMB_CLUSTER_SERVER", &api_url),
                ("PLUMB_CLUSTER_CA", &ca),
                ("PLUMB_CLUSTER_TOKEN", &token),
            ],
        )
        .await;
    assert!(
        !out.contains(&token),
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
    stack.shutdown().await;
}
