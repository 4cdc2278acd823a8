//! `--customizations` directories (Argo's `resource_customizations` layout) in the server, as in
//! the controller and `plumb app actions`: their actions are offered and run through the API,
//! their health scripts judge the resource tree, and argocd-cm's
//! `resource.customizations.actions.<kind>` comes before them (Argo's lookup order).

use std::path::Path;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_server::Running;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{client_trusting, create_default_project, env, read, server_config};

const APP: &str = "cust-dir-settings";

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

async fn start(ns: &str, customizations: Vec<std::path::PathBuf>) -> (Running, reqwest::Client) {
    let mut config = server_config(ns);
    config.customizations = customizations;
    let server = plumb_server::serve(env().client().await, config)
        .await
        .expect("server starts");
    let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
    (server, http)
}

async fn call(
    http: &reqwest::Client,
    server: &Running,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http.request(
        method,
        format!("https://localhost:{}{path}", server.addr.port()),
    );
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    read(req.send().await.expect("request")).await
}

fn action_names(body: &Value) -> Vec<String> {
    body["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn customization_directories_give_actions_and_health_through_the_api() {
    let env = env();
    let ns = env.namespace("srv-cust");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns.name());
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "cust-settings"}, "data": {"mode": "fast"}}),
    )
    .expect("ConfigMap");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create ConfigMap");
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "ConfigMap/actions/discovery.lua",
        "local actions = {}\nactions[\"stamp\"] = {}\nreturn actions\n",
    );
    write(
        dir.path(),
        "ConfigMap/actions/stamp/action.lua",
        "obj.data.stamped = \"yes\"\nreturn obj\n",
    );
    write(
        dir.path(),
        "ConfigMap/health.lua",
        "return {status = \"Degraded\", message = \"judged by the directory\"}\n",
    );

    let (plain, plain_http) = start(ns.name(), Vec::new()).await;
    let (custom, http) = start(ns.name(), vec![dir.path().to_path_buf()]).await;
    let app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": APP},
        "spec": {"project": "default",
                 "source": {"repoURL": "https://127.0.0.1:9/none.git", "path": ".", "targetRevision": "HEAD"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": ns.name()}}
    });
    let (code, body) = call(
        &http,
        &custom,
        Method::POST,
        "/api/v1/applications?validate=false",
        Some(app),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    // No controller runs: the status says what it manages, as the controller would write it.
    let apps: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns.name(),
        &plumb_app::application_resource(),
    );
    apps.patch_status(
        APP,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"resources": [
            {"version": "v1", "kind": "ConfigMap", "namespace": ns.name(), "name": "cust-settings", "status": "Synced"}
        ]}})),
    )
    .await
    .expect("status");
    let q = format!(
        "namespace={}&resourceName=cust-settings&version=v1&kind=ConfigMap",
        ns.name()
    );
    let actions = format!("/api/v1/applications/{APP}/resource/actions?{q}");

    // Without the directory nothing is offered for a ConfigMap; with it, its action is.
    let (code, body) = call(&plain_http, &plain, Method::GET, &actions, None).await;
    assert_eq!(code, 200, "{body}");
    assert!(
        !action_names(&body).contains(&"stamp".to_string()),
        "{body}"
    );
    let (code, body) = call(&http, &custom, Method::GET, &actions, None).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(action_names(&body), ["stamp"], "{body}");
    let (code, body) = call(
        &http,
        &custom,
        Method::POST,
        &format!("/api/v1/applications/{APP}/resource/actions/v2"),
        Some(
            json!({"name": APP, "namespace": ns.name(), "resourceName": "cust-settings",
                    "version": "v1", "kind": "ConfigMap", "action": "stamp"}),
        ),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let stamped = cms.get("cust-settings").await.expect("ConfigMap");
    assert_eq!(
        stamped
            .data
            .and_then(|d| d.get("stamped").cloned())
            .as_deref(),
        Some("yes")
    );

    // The directory's health script judges the tree's node.
    let (code, tree) = call(
        &http,
        &custom,
        Method::GET,
        &format!("/api/v1/applications/{APP}/resource-tree"),
        None,
    )
    .await;
    assert_eq!(code, 200, "{tree}");
    let node = tree["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["kind"] == "ConfigMap")
        .cloned()
        .unwrap_or_else(|| panic!("no ConfigMap node: {tree}"));
    assert_eq!(
        node["health"],
        json!({"status": "Degraded", "message": "judged by the directory"})
    );

    // argocd-cm's entry for the kind comes first and replaces the directory's actions.
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "argocd-cm"}, "data": {
        "resource.customizations.actions.ConfigMap":
            "discovery.lua: |\n  return {note = {}}\ndefinitions:\n- name: note\n  action.lua: |\n    obj.data.noted = \"yes\"\n    return obj\n"
    }}))
    .expect("argocd-cm");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create argocd-cm");
    let (code, body) = call(&http, &custom, Method::GET, &actions, None).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(action_names(&body), ["note"], "{body}");
    plain.shutdown().await;
    custom.shutdown().await;
}
