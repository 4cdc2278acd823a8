//! The settings pages in a real browser (`ui/e2e/settings.mjs`): user info and a password
//! refusal shown next to its field, a project created and edited (destinations, source
//! repositories, an empty namespace resource list, a role with a token, sync windows, labels,
//! orphaned-resource monitoring), an account's token. What the pages saved is checked here,
//! in the AppProject itself.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject};
use plumb_app::appproject_resource;
use serde_json::json;

use super::browser::SettingsServer;
use super::set_config_map;
use super::support::env;

/// The project the page creates (a name no other test uses).
const PROJECT: &str = "ui-settings-project";
/// An account with the apiKey capability, whose token the page makes.
const API_ACCOUNT: &str = "ci";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_settings_pages() {
    let stack = SettingsServer::start("ui-settings").await;
    let (ns, client) = (&stack.ns, &stack.client);
    let dest = env().namespace("ui-settings-dest");
    set_config_map(
        client,
        ns.name(),
        "argocd-cm",
        &[(&format!("accounts.{API_ACCOUNT}"), "apiKey")],
    )
    .await;
    stack
        .run(
            "settings.mjs",
            &[
                ("PLUMB_PROJECT", PROJECT),
                ("PLUMB_DEST_NAMESPACE", dest.name()),
                ("PLUMB_API_ACCOUNT", API_ACCOUNT),
            ],
        )
        .await;

    // What the pages saved, in the AppProject.
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns.name(), &appproject_resource());
    let p = projects
        .get(PROJECT)
        .await
        .expect("the page created the project");
    let spec = &p.data["spec"];
    assert_eq!(spec["description"], "made by the settings test");
    assert_eq!(
        p.metadata.labels.clone().unwrap_or_default()["team"],
        "payments"
    );
    assert_eq!(spec["permitOnlyProjectScopedClusters"], true);
    assert_eq!(spec["orphanedResources"], json!({"warn": true}));
    assert_eq!(
        spec["destinations"],
        json!([{"server": "https://kubernetes.default.svc", "namespace": dest.name()}])
    );
    assert_eq!(spec["sourceRepos"], json!(["*"]));
    assert_eq!(
        spec["namespaceResourceWhitelist"],
        json!([]),
        "an explicit empty list, not an unset one"
    );
    let role = &spec["roles"][0];
    assert_eq!(role["name"], "deployer");
    assert_eq!(
        role["policies"],
        json!([format!(
            "p, proj:{PROJECT}:deployer, applications, sync, {PROJECT}/*, allow"
        )])
    );
    assert_eq!(role["groups"], json!(["platform-team"]));
    assert!(
        role["jwtTokens"].as_array().is_none_or(|t| t.is_empty()),
        "the role's token was deleted: {role}"
    );
    assert_eq!(
        spec["syncWindows"],
        json!([{"kind": "allow", "schedule": "0 6 * * 1-5", "duration": "30m", "namespaces": [dest.name()]}])
    );
    // The account's token was made, then deleted: none is left in argocd-secret.
    let secret = Api::<Secret>::namespaced(client.clone(), ns.name())
        .get("argocd-secret")
        .await
        .expect("argocd-secret");
    let tokens = secret
        .data
        .unwrap_or_default()
        .get(&format!("accounts.{API_ACCOUNT}.tokens"))
        .map(|v| String::from_utf8_lossy(&v.0).to_string())
        .unwrap_or_default();
    assert!(
        !tokens.contains("ci-token"),
        "the deleted token is gone: {tokens}"
    );
    stack.shutdown().await;
}
