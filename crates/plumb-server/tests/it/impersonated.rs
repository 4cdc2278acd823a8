//! The API server's own reads and writes of an Application's live objects (GetResource,
//! PatchResource, DeleteResource, resource actions) under argocd-cm's
//! `application.sync.impersonation.enabled`: made as the ServiceAccount the project's
//! `destinationServiceAccounts` names (Argo's `getApplicationClusterConfig`), so the API
//! server's RBAC for that account decides. The account may act on ConfigMaps of namespace A
//! only: in B the API server's 403 comes back and nothing changes; with impersonation off the
//! server's own identity writes both.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use reqwest::Method;
use serde_json::{Value, json};

use crate::scoped::{call, create_project, server_only};
use crate::support::{create_default_project, env};

const APP: &str = "imp-srv";
const ACTION: &str = "discovery.lua: |\n  return {note = {}}\ndefinitions:\n- name: note\n  action.lua: |\n    obj.data.noted = \"yes\"\n    return obj\n";

async fn create<K>(client: &kube::Client, ns: &str, obj: Value)
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let obj: K = serde_json::from_value(obj).expect("object");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
}

/// ServiceAccount `deployer` in `ns`, with every right on ConfigMaps there and nothing else.
async fn deployer(client: &kube::Client, ns: &str) {
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    create::<ServiceAccount>(client, ns, json!({"metadata": {"name": "deployer"}})).await;
    create::<Role>(
        client,
        ns,
        json!({
            "metadata": {"name": "deployer"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]
        }),
    )
    .await;
    create::<RoleBinding>(client, ns, json!({
        "metadata": {"name": "deployer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
        "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": ns}]
    }))
    .await;
}

fn query(ns: &str, name: &str) -> String {
    format!("namespace={ns}&resourceName={name}&version=v1&group=&kind=ConfigMap")
}

async fn settings(client: &kube::Client, ns: &str, data: Value) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    cms.patch(
        "argocd-cm",
        &PatchParams::apply("plumb-test").force(),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm"}, "data": data})),
    )
    .await
    .expect("argocd-cm");
}

fn noted(cm: &ConfigMap, key: &str) -> bool {
    cm.data.as_ref().is_some_and(|d| d.contains_key(key))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_resource_writes_impersonate_the_projects_service_account() {
    let env = env();
    let ns = env.namespace("srv-imp");
    let (a, b) = (env.namespace("srv-imp-a"), env.namespace("srv-imp-b"));
    let (na, nb) = (a.name(), b.name());
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    deployer(&client, na).await;
    create_project(&client, ns.name(), "imp", json!({
        "sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
        "destinationServiceAccounts": [
            {"server": "https://kubernetes.default.svc", "namespace": na, "defaultServiceAccount": "deployer"}
        ]
    }))
    .await;
    for (n, name) in [(na, "in-a"), (nb, "in-b"), (na, "gone-a"), (nb, "kept-b")] {
        create::<ConfigMap>(
            &client,
            n,
            json!({"metadata": {"name": name}, "data": {"v": "1"}}),
        )
        .await;
    }
    settings(
        &client,
        ns.name(),
        json!({"resource.customizations.actions.ConfigMap": ACTION}),
    )
    .await;
    let (server, http) = server_only(ns.name()).await;
    let mut app = crate::auth::app(APP, "imp");
    app["spec"]["destination"]["namespace"] = json!(na);
    let (code, body) = call(
        &http,
        &server,
        Method::POST,
        "/api/v1/applications?validate=false",
        Some(&app),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    // No controller runs: the status lists what it manages, as the controller would write it.
    let apps: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns.name(),
        &plumb_app::application_resource(),
    );
    let rows: Vec<Value> = [(na, "in-a"), (nb, "in-b"), (na, "gone-a"), (nb, "kept-b")]
        .iter()
        .map(|(n, name)| json!({"version": "v1", "kind": "ConfigMap", "namespace": n, "name": name, "status": "Synced"}))
        .collect();
    apps.patch_status(
        APP,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"resources": rows}})),
    )
    .await
    .expect("status");
    let base = format!("/api/v1/applications/{APP}/resource");
    let patch = |ns: &str, name: &str, key: &str| {
        (
            format!(
                "{base}?{}&patchType=application%2Fmerge-patch%2Bjson",
                query(ns, name)
            ),
            json!(json!({"data": {key: "yes"}}).to_string()),
        )
    };
    let action = |ns: &str, name: &str| {
        json!({"name": APP, "namespace": ns, "resourceName": name,
        "group": "", "kind": "ConfigMap", "version": "v1", "action": "note"})
    };
    let cms_a: Api<ConfigMap> = Api::namespaced(client.clone(), na);
    let cms_b: Api<ConfigMap> = Api::namespaced(client.clone(), nb);

    // Impersonation off: the server's own identity reaches both namespaces.
    let (path, body) = patch(nb, "in-b", "by-server");
    let (code, answer) = call(&http, &server, Method::POST, &path, Some(&body)).await;
    assert_eq!(code, 200, "{answer}");
    assert!(noted(&cms_b.get("in-b").await.expect("in-b"), "by-server"));

    settings(
        &client,
        ns.name(),
        json!({
            "resource.customizations.actions.ConfigMap": ACTION,
            "application.sync.impersonation.enabled": "true"
        }),
    )
    .await;
    let user = format!("system:serviceaccount:{na}:deployer");
    let forbidden = |code: u16, body: &Value| {
        assert_eq!(code, 403, "{body}");
        assert_eq!(body["code"], 7, "{body}");
        let text = body["error"].as_str().unwrap_or_default();
        assert!(
            text.contains(&user) && text.contains("forbidden"),
            "the API server's refusal: {body}"
        );
    };
    // In B: the account's 403 for the read, the patch, the delete and the action.
    let (path, body) = patch(nb, "in-b", "by-deployer");
    let (code, answer) = call(&http, &server, Method::POST, &path, Some(&body)).await;
    forbidden(code, &answer);
    let (code, answer) = call(
        &http,
        &server,
        Method::GET,
        &format!("{base}?{}", query(nb, "in-b")),
        None,
    )
    .await;
    forbidden(code, &answer);
    let (code, answer) = call(
        &http,
        &server,
        Method::DELETE,
        &format!("{base}?{}", query(nb, "kept-b")),
        None,
    )
    .await;
    forbidden(code, &answer);
    let (code, answer) = call(
        &http,
        &server,
        Method::POST,
        &format!("{base}/actions/v2"),
        Some(&action(nb, "in-b")),
    )
    .await;
    forbidden(code, &answer);
    let in_b = cms_b.get("in-b").await.expect("in-b");
    assert!(
        !noted(&in_b, "by-deployer") && !noted(&in_b, "noted"),
        "nothing written in B"
    );
    assert!(
        cms_b.get_opt("kept-b").await.expect("get").is_some(),
        "nothing deleted in B"
    );
    // In A: the account may.
    let (path, body) = patch(na, "in-a", "by-deployer");
    let (code, answer) = call(&http, &server, Method::POST, &path, Some(&body)).await;
    assert_eq!(code, 200, "{answer}");
    let (code, answer) = call(
        &http,
        &server,
        Method::POST,
        &format!("{base}/actions/v2"),
        Some(&action(na, "in-a")),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    let in_a = cms_a.get("in-a").await.expect("in-a");
    assert!(
        noted(&in_a, "by-deployer") && noted(&in_a, "noted"),
        "{in_a:?}"
    );
    let (code, answer) = call(
        &http,
        &server,
        Method::DELETE,
        &format!("{base}?{}", query(na, "gone-a")),
        None,
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    let gone = cms_a.get_opt("gone-a").await.expect("get");
    assert!(
        gone.is_none_or(|g| g.metadata.deletion_timestamp.is_some()),
        "deleted in A"
    );

    // A destination no entry matches: refused with Argo's message (enforced by default), and
    // with enforcement off the server falls back to its own identity.
    let mut moved = apps.get(APP).await.expect("app");
    moved.data["spec"]["destination"]["namespace"] = json!(nb);
    apps.replace(APP, &PostParams::default(), &moved)
        .await
        .expect("move the destination");
    let (path, body) = patch(nb, "in-b", "unmatched");
    let (code, answer) = call(&http, &server, Method::POST, &path, Some(&body)).await;
    assert_eq!(code, 500, "{answer}");
    assert_eq!(
        answer["error"],
        format!(
            "error getting application cluster config: no matching service account found for destination server https://kubernetes.default.svc and namespace {nb}"
        )
    );
    settings(
        &client,
        ns.name(),
        json!({
            "resource.customizations.actions.ConfigMap": ACTION,
            "application.sync.impersonation.enabled": "true",
            "application.sync.impersonation.enforced": "false"
        }),
    )
    .await;
    let (code, answer) = call(&http, &server, Method::POST, &path, Some(&body)).await;
    assert_eq!(code, 200, "{answer}");
    assert!(noted(&cms_b.get("in-b").await.expect("in-b"), "unmatched"));
    server.shutdown().await;
}
