//! Single sign-on in a real browser (`ui/e2e/sso.mjs`) through the real Dex's own login page:
//! `dex.config` with Dex's password database (users with groups), Dex run with the
//! configuration Plumb generates and reached through the server's `/api/dex` proxy. The login
//! page names the provider and says why SSO is unavailable while Dex is down; a user whose group
//! RBAC maps to a role sees the Applications and their groups on the user info page; a session
//! that ends under a page is renewed over it, keeping the page's URL state; a user whose group
//! has no role sees no Applications, as in Argo.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_app::application_resource;
use plumb_testenv::dex::{Dex, PASSWORD_HASH, free_port};
use serde_json::json;

use super::browser::SettingsServer;

const APP: &str = "ui-sso-app";

fn dex_config() -> String {
    format!(
        "connectors:\n- type: mockCallback\n  id: mock\n  name: Example\nenablePasswordDB: true\nstaticPasswords:\n\
         - email: alice@example.com\n  hash: \"{PASSWORD_HASH}\"\n  username: alice\n  userID: ui-sso-alice\n  groups: [ui-sso-devs, ui-sso-all]\n\
         - email: bob@example.com\n  hash: \"{PASSWORD_HASH}\"\n  username: bob\n  userID: ui-sso-bob\n  groups: [ui-sso-outsiders]\n"
    )
}

async fn patch_cm(client: &kube::Client, ns: &str, name: &str, data: &[(&str, &str)]) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let data: BTreeMap<&str, &str> = data.iter().copied().collect();
    if api.get_opt(name).await.expect("read ConfigMap").is_none() {
        let cm: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": name}})).expect("ConfigMap");
        api.create(&PostParams::default(), &cm)
            .await
            .expect("create ConfigMap");
    }
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({"data": data})),
    )
    .await
    .expect("patch ConfigMap");
}

/// Dex with the configuration Plumb generates from the namespace's argocd-cm and argocd-secret.
async fn start_dex(client: &kube::Client, ns: &str, port: u16) -> Dex {
    let cm = Api::<ConfigMap>::namespaced(client.clone(), ns)
        .get("argocd-cm")
        .await
        .expect("argocd-cm")
        .data
        .unwrap_or_default();
    let secret: BTreeMap<String, Vec<u8>> = Api::<Secret>::namespaced(client.clone(), ns)
        .get("argocd-secret")
        .await
        .expect("argocd-secret")
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    let yaml = plumb_server::generate_dex_config(&cm, &secret, &format!("127.0.0.1:{port}"))
        .expect("dex config")
        .expect("dex configured");
    Dex::start(
        &yaml,
        &format!("http://127.0.0.1:{port}/api/dex/.well-known/openid-configuration"),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_sso_login_through_dex() {
    let port = free_port();
    let stack = SettingsServer::start_tuned("ui-sso", |c| {
        c.dex_server = format!("http://127.0.0.1:{port}");
    })
    .await;
    let (ns, client) = (stack.ns.name(), &stack.client);
    let base = stack.base();
    patch_cm(
        client,
        ns,
        "argocd-cm",
        &[("url", &base), ("dex.config", &dex_config())],
    )
    .await;
    patch_cm(
        client,
        ns,
        "argocd-rbac-cm",
        &[
            ("policy.csv", "g, ui-sso-devs, role:admin\n"),
            ("policy.default", ""),
        ],
    )
    .await;
    let apps: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns, &application_resource());
    let app: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": APP},
        "spec": {"project": "default", "source": {"repoURL": "https://example.com/a.git", "path": "x"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}
    }))
    .expect("app");
    apps.create(&PostParams::default(), &app)
        .await
        .expect("create app");

    // The script asks for Dex once it saw the login page say SSO is unavailable.
    let mut dex = None;
    let out = stack
        .run_interactive("sso.mjs", &[("PLUMB_APP", APP)], async |step: &str| {
            assert_eq!(step, "start-dex", "the script's step");
            dex = Some(start_dex(client, ns, port).await);
        })
        .await;
    assert!(out.contains("ok - the denied group"), "{out}");
    drop(dex);
    stack.shutdown().await;
}
