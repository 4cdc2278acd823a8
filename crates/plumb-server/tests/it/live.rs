//! The live-resource routes (`.../resource`, `.../resource/actions[/v2]`, `.../logs`) on a real
//! control plane: an Application `live-shopfront` (its `status.resources` written as the
//! controller writes them: no controller runs here, so nothing moves under the test) manages
//! Deployment `shopfront` (two Pods), ConfigMap `shopfront-settings` and Secret `shopfront-db`; Deployment
//! `stranger` of the same namespace is not managed and must stay out of reach. Each route with
//! Argo's RBAC pair: allowed with exactly that pair, refused with everything but it.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use plumb_testenv::pod_logs::{LogFile, LogLine, Stream};
use reqwest::Method;
use serde_json::{Value, json};

use crate::authn::AuthStack;
use crate::rbac::{check_route, route};
use crate::support::env;

const APP: &str = "live-shopfront";

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": format!("registry.example/{name}:v1")}]}}}})
}

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

/// The Pods of Deployment `name` once there are `count`, sorted by name.
async fn pods_of(client: &kube::Client, ns: &str, name: &str, count: usize) -> Vec<String> {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let start = Instant::now();
    loop {
        let list = api
            .list(&ListParams::default().labels(&format!("app={name}")))
            .await
            .expect("list Pods");
        let mut names: Vec<String> = list
            .items
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        if names.len() == count {
            names.sort();
            return names;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{name}: Pods {names:?}, want {count}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn query(ns: &str, group: &str, version: &str, kind: &str, name: &str) -> String {
    format!("namespace={ns}&group={group}&version={version}&kind={kind}&resourceName={name}")
}

fn manifest(body: &Value) -> Value {
    serde_json::from_str(
        body["manifest"]
            .as_str()
            .expect("manifest is a JSON string"),
    )
    .expect("manifest is JSON")
}

/// The frames of a logs answer.
fn frames(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

async fn logs(s: &AuthStack, token: &str, q: &str) -> (u16, String) {
    let resp = s
        .http
        .get(format!("{}/api/v1/applications/{APP}/logs?{q}", s.base))
        .bearer_auth(token)
        .send()
        .await
        .expect("GET logs");
    let code = resp.status().as_u16();
    (code, resp.text().await.expect("body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_resource_routes_act_on_the_tree_only_with_argo_rbac() {
    let s = AuthStack::start("live-routes", Default::default()).await;
    let admin = s.admin_token().await;
    let ns = s.ns.name().to_string();
    let c = &s.client;
    create::<Deployment>(c, &ns, deployment("shopfront")).await;
    create::<Deployment>(c, &ns, deployment("stranger")).await;
    create::<ConfigMap>(
        c,
        &ns,
        json!({"metadata": {"name": "shopfront-settings"}, "data": {"mode": "fast"}}),
    )
    .await;
    create::<k8s_openapi::api::core::v1::Secret>(
        c,
        &ns,
        json!({"metadata": {"name": "shopfront-db"}, "data": {"password": "aHVudGVyMi1zM2NyM3Q="}}),
    )
    .await;
    let mut app = crate::auth::app(APP, "default");
    app["spec"]["destination"]["namespace"] = json!(ns);
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&app),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let apps: Api<DynamicObject> =
        Api::namespaced_with(c.clone(), &ns, &plumb_app::application_resource());
    apps.patch_status(
        APP,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"resources": [
            {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": ns, "name": "shopfront", "status": "Synced"},
            {"version": "v1", "kind": "ConfigMap", "namespace": ns, "name": "shopfront-settings", "status": "Synced"},
            {"version": "v1", "kind": "Secret", "namespace": ns, "name": "shopfront-db", "status": "Synced"}
        ]}})),
    )
    .await
    .expect("status");
    let pods = pods_of(c, &ns, "shopfront", 2).await;
    let pod = pods[0].clone();
    let stranger_pod = pods_of(c, &ns, "stranger", 2).await.remove(0);
    let base = format!("/api/v1/applications/{APP}/resource");

    // GET: a Pod the Application does not manage but shows in its tree (owned through the
    // ReplicaSet of its Deployment).
    let (code, body) = s
        .get(
            &format!("{base}?{}", query(&ns, "", "v1", "Pod", &pod)),
            &admin,
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let live = manifest(&body);
    assert_eq!(
        (live["kind"].as_str(), live["metadata"]["name"].as_str()),
        (Some("Pod"), Some(pod.as_str()))
    );
    // A Secret: values masked, never sent.
    let (code, body) = s
        .get(
            &format!("{base}?{}", query(&ns, "", "v1", "Secret", "shopfront-db")),
            &admin,
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert!(!body.to_string().contains("aHVudGVyMi1zM2NyM3Q="), "{body}");
    assert_eq!(manifest(&body)["data"]["password"], "++++++++");
    // Outside the tree: an unmanaged Deployment, its Pod, an object of another namespace.
    for q in [
        query(&ns, "apps", "v1", "Deployment", "stranger"),
        query(&ns, "", "v1", "Pod", &stranger_pod),
        query(
            "kube-system",
            "",
            "v1",
            "ConfigMap",
            "extension-apiserver-authentication",
        ),
    ] {
        let (code, body) = s.get(&format!("{base}?{q}"), &admin).await;
        assert_eq!(code, 400, "{q}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap_or_default()
                .contains("not found as part of application"),
            "{body}"
        );
        let (code, _) = s
            .call(Method::DELETE, &format!("{base}?{q}"), Some(&admin), None)
            .await;
        assert_eq!(code, 400, "delete {q}");
        let (code, _) = s
            .call(
                Method::POST,
                &format!("{base}?{q}&patchType=application/merge-patch%2Bjson"),
                Some(&admin),
                Some(&json!("{\"metadata\":{\"labels\":{\"x\":\"y\"}}}")),
            )
            .await;
        assert_eq!(code, 400, "patch {q}");
    }
    // The wrong project is refused.
    let (code, _) = s
        .get(
            &format!("{base}?{}&project=other", query(&ns, "", "v1", "Pod", &pod)),
            &admin,
        )
        .await;
    assert_eq!(code, 403);

    resource_events_come_from_the_tree_by_uid(&s, &admin, &ns, &pod, &stranger_pod).await;
    secret_patch_errors_carry_no_values(&s, &admin, &base, &ns).await;

    // POST: a merge patch as grpc-gateway sends it (the patch as a JSON string), then a JSON patch.
    let cm_q = query(&ns, "", "v1", "ConfigMap", "shopfront-settings");
    let (code, body) = s
        .call(
            Method::POST,
            &format!("{base}?{cm_q}&patchType=application/merge-patch%2Bjson"),
            Some(&admin),
            Some(&json!("{\"data\":{\"mode\":\"slow\"}}")),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(manifest(&body)["data"]["mode"], "slow");
    let (code, body) = s
        .call(
            Method::POST,
            &format!("{base}?{cm_q}&patchType=application/json-patch%2Bjson"),
            Some(&admin),
            Some(&json!(
                "[{\"op\":\"add\",\"path\":\"/data/tier\",\"value\":\"gold\"}]"
            )),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let cms: Api<ConfigMap> = Api::namespaced(c.clone(), &ns);
    let cm = cms.get("shopfront-settings").await.expect("ConfigMap");
    let data = cm.data.expect("data");
    assert_eq!(
        (data["mode"].as_str(), data["tier"].as_str()),
        ("slow", "gold")
    );

    // Logs: the Pods of the tree (the stranger's never), merged, filtered, Argo's frames.
    let dir = tempfile::tempdir().expect("tempdir");
    let lines = |pod: &str, base_second: u32| {
        LogFile::create(
            dir.path(),
            &format!("{pod}.log"),
            &[
                LogLine {
                    time: &format!("2026-12-01T10:00:0{base_second}.000000000Z"),
                    stream: Stream::Stdout,
                    text: &format!("{pod} listening"),
                },
                LogLine {
                    time: &format!("2026-12-01T10:00:0{}.000000000Z", base_second + 2),
                    stream: Stream::Stderr,
                    text: &format!("{pod} ERROR upstream timed out"),
                },
            ],
        )
    };
    let files: Vec<LogFile> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| lines(p, i as u32))
        .collect();
    let outsider = lines(&stranger_pod, 5);
    tokio::task::block_in_place(|| {
        for (p, f) in pods.iter().zip(&files) {
            env().set_pod_logs(&ns, p, &[(&[], f)]);
        }
        env().set_pod_logs(&ns, &stranger_pod, &[(&[], &outsider)]);
    });
    let (code, text) = logs(&s, &admin, "").await;
    assert_eq!(code, 200, "{text}");
    let got = frames(&text);
    let contents: Vec<&str> = got
        .iter()
        .filter(|f| f["result"]["last"] == false)
        .filter_map(|f| f["result"]["content"].as_str())
        .collect();
    assert_eq!(
        contents,
        [
            format!("{} listening", pods[0]),
            format!("{} listening", pods[1]),
            format!("{} ERROR upstream timed out", pods[0]),
            format!("{} ERROR upstream timed out", pods[1]),
        ],
        "{text}"
    );
    assert_eq!(got[0]["result"]["podName"], pods[0].as_str());
    assert_eq!(got[0]["result"]["timeStamp"], "2026-12-01T10:00:00Z");
    assert_eq!(got.last().expect("frames")["result"]["last"], true);
    assert!(!text.contains(&stranger_pod), "{text}");
    let (_, text) = logs(
        &s,
        &admin,
        &format!("podName={}&filter=error&tailLines=5", pods[1]),
    )
    .await;
    let contents: Vec<String> = frames(&text)
        .iter()
        .filter_map(|f| f["result"]["content"].as_str().map(str::to_string))
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(contents, [format!("{} ERROR upstream timed out", pods[1])]);
    let (code, _) = logs(&s, &admin, &format!("podName={stranger_pod}")).await;
    assert_eq!(code, 200, "no Pod selected is an empty answer");
    let (code, _) = logs(&s, &admin, "untilTime=10am").await;
    assert_eq!(code, 400);
    // follow: the first lines arrive while the stream stays open.
    let mut resp = s
        .http
        .get(format!(
            "{}/api/v1/applications/{APP}/logs?follow=true&kind=Deployment&group=apps&resourceName=shopfront",
            s.base
        ))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("follow");
    assert_eq!(resp.status().as_u16(), 200);
    let mut buf = String::new();
    let start = Instant::now();
    while !buf.contains("ERROR upstream") {
        assert!(start.elapsed() < Duration::from_secs(60), "followed: {buf}");
        match tokio::time::timeout(Duration::from_secs(60), resp.chunk()).await {
            Ok(Ok(Some(chunk))) => buf.push_str(&String::from_utf8_lossy(&chunk)),
            other => panic!("follow ended early: {other:?}; {buf}"),
        }
    }
    drop(resp);

    // Force delete of a Pod of the tree (not managed: owned through the ReplicaSet): it goes,
    // the ReplicaSet makes another.
    let (code, body) = s
        .call(
            Method::DELETE,
            &format!(
                "{base}?{}&force=true",
                query(&ns, "", "v1", "Pod", &pods[1])
            ),
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let pod_api: Api<Pod> = Api::namespaced(c.clone(), &ns);
    let start = Instant::now();
    while pod_api
        .get_opt(&pods[1])
        .await
        .expect("read Pod")
        .is_some_and(|p| p.metadata.deletion_timestamp.is_none())
    {
        assert!(start.elapsed() < Duration::from_secs(60), "Pod deleted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Actions: listed with Argo's ResourceAction fields, run through v2 (with a parameter) and v1.
    let deploy_q = query(&ns, "apps", "v1", "Deployment", "shopfront");
    let (code, body) = s.get(&format!("{base}/actions?{deploy_q}"), &admin).await;
    assert_eq!(code, 200, "{body}");
    let names: Vec<&str> = body["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert!(
        names.contains(&"restart") && names.contains(&"scale"),
        "{body}"
    );
    let scale = body["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["name"] == "scale")
        .expect("scale");
    assert_eq!(scale["params"][0]["name"], "replicas", "{scale}");
    let (code, body) = s
        .call(
            Method::POST,
            &format!("{base}/actions/v2"),
            Some(&admin),
            Some(
                &json!({"name": APP, "namespace": ns, "resourceName": "shopfront", "group": "apps",
                "kind": "Deployment", "version": "v1", "action": "scale",
                "resourceActionParameters": [{"name": "replicas", "value": "3"}]}),
            ),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let deployments: Api<Deployment> = Api::namespaced(c.clone(), &ns);
    let d = deployments.get("shopfront").await.expect("Deployment");
    assert_eq!(d.spec.as_ref().and_then(|s| s.replicas), Some(3));
    let (code, body) = s
        .call(
            Method::POST,
            &format!("{base}/actions?{deploy_q}"),
            Some(&admin),
            Some(&json!("restart")),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let d = deployments.get("shopfront").await.expect("Deployment");
    let restarted = d
        .spec
        .and_then(|s| s.template.metadata)
        .and_then(|m| m.annotations)
        .and_then(|a| a.get("kubectl.kubernetes.io/restartedAt").cloned());
    assert!(restarted.is_some(), "restart sets the template annotation");
    // An action the object does not offer, and one on an object outside the tree.
    let (code, body) = s
        .call(
            Method::POST,
            &format!("{base}/actions?{cm_q}"),
            Some(&admin),
            Some(&json!("restart")),
        )
        .await;
    assert_eq!(code, 400, "{body}");
    let (code, _) = s
        .call(
            Method::POST,
            &format!(
                "{base}/actions?{}",
                query(&ns, "apps", "v1", "Deployment", "stranger")
            ),
            Some(&admin),
            Some(&json!("restart")),
        )
        .await;
    assert_eq!(code, 400);

    // RBAC: each route with Argo's pair.
    // `check_route` writes its rules for the subject `u`.
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    let obj = format!("default/{APP}");
    let obj: &'static str = Box::leak(obj.into_boxed_str());
    let secret_path: &'static str = Box::leak(
        format!("{base}?{}", query(&ns, "", "v1", "Secret", "shopfront-db")).into_boxed_str(),
    );
    let cm_path: &'static str = Box::leak(format!("{base}?{cm_q}").into_boxed_str());
    let actions_path: &'static str =
        Box::leak(format!("{base}/actions?{deploy_q}").into_boxed_str());
    let v2_path: &'static str = Box::leak(format!("{base}/actions/v2").into_boxed_str());
    // Argo 3's fine-grained actions on the Application's resources (inheritance disabled by
    // default): `update/<group>/<kind>/<namespace>/<name>`, `delete/...`.
    let cm_update: &'static str =
        Box::leak(format!("update//ConfigMap/{ns}/shopfront-settings").into_boxed_str());
    let cm_delete: &'static str =
        Box::leak(format!("delete//ConfigMap/{ns}/shopfront-settings").into_boxed_str());
    let routes = [
        route(Method::GET, secret_path, None, ("applications", "get", obj)),
        route(
            Method::POST,
            cm_path,
            Some(json!("{\"data\":{\"mode\":\"rbac\"}}")),
            ("applications", cm_update, obj),
        ),
        route(
            Method::GET,
            actions_path,
            None,
            ("applications", "get", obj),
        ),
        route(
            Method::POST,
            actions_path,
            Some(json!("restart")),
            ("applications", "action/apps/Deployment/restart", obj),
        ),
        route(
            Method::POST,
            v2_path,
            Some(
                json!({"namespace": ns, "resourceName": "shopfront", "group": "apps",
                "kind": "Deployment", "version": "v1", "action": "restart"}),
            ),
            ("applications", "action/apps/Deployment/restart", obj),
        ),
        route(
            Method::DELETE,
            cm_path,
            None,
            ("applications", cm_delete, obj),
        ),
    ];
    // Before the delete route runs: the fine-grained rules themselves.
    fine_grained_resource_rights(&s, &u, obj, cm_path, secret_path).await;
    for r in &routes {
        check_route(&s, &u, r).await;
    }
    // The delete went through with its grant: the ConfigMap is gone (foreground).
    let start = Instant::now();
    while cms
        .get_opt("shopfront-settings")
        .await
        .expect("read")
        .is_some()
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "ConfigMap deleted"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A scale action is its own RBAC action: a grant for restart does not cover it.
    s.set_policy(
        &format!("p, u, applications, action/apps/Deployment/restart, {obj}, allow\np, u, applications, get, {obj}, allow\n"),
        "",
    )
    .await;
    let (code, _) = s
        .call(
            Method::POST,
            v2_path,
            Some(&u),
            Some(
                &json!({"namespace": ns, "resourceName": "shopfront", "group": "apps",
                "kind": "Deployment", "version": "v1", "action": "scale",
                "resourceActionParameters": [{"name": "replicas", "value": "1"}]}),
            ),
        )
        .await;
    assert_eq!(code, 403);
    // Logs need `logs, get` besides `applications, get`.
    let (code, _) = logs(&s, &u, "").await;
    assert_eq!(code, 403, "applications, get alone");
    s.set_policy(
        &format!("p, u, applications, get, {obj}, allow\np, u, logs, get, {obj}, allow\n"),
        "",
    )
    .await;
    let (code, text) = logs(&s, &u, "").await;
    assert_eq!(code, 200, "{text}");
    s.set_policy(&format!("p, u, logs, get, {obj}, allow\n"), "")
        .await;
    let (code, _) = logs(&s, &u, "").await;
    assert_eq!(code, 403, "logs, get alone");
}

/// Argo's gateway fills `apiVersion` and `kind` of a created Application; create and update
/// refuse a project that does not exist with Argo's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_fills_the_type_and_writes_refuse_a_missing_project() {
    let s = AuthStack::start("app-writes", Default::default()).await;
    let admin = s.admin_token().await;
    let mut body = crate::auth::app("untyped-create", "default");
    let map = body.as_object_mut().expect("object");
    map.remove("apiVersion");
    map.remove("kind");
    let (code, created) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&body),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    assert_eq!(created["kind"], "Application");
    assert_eq!(created["apiVersion"], "argoproj.io/v1alpha1");
    let (code, refused) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&crate::auth::app("missing-project-create", "nowhere")),
        )
        .await;
    assert_eq!(code, 400, "{refused}");
    assert_eq!(
        refused["message"],
        "application references project nowhere which does not exist"
    );
    let mut moved = created.clone();
    moved["spec"]["project"] = json!("nowhere");
    let (code, refused) = s
        .call(
            Method::PUT,
            "/api/v1/applications/untyped-create",
            Some(&admin),
            Some(&moved),
        )
        .await;
    assert_eq!(code, 400, "{refused}");
    assert_eq!(
        refused["message"],
        "application references project nowhere which does not exist"
    );
    let (_, stored) = s.get("/api/v1/applications/untyped-create", &admin).await;
    assert_eq!(stored["spec"]["project"], "default", "nothing written");
}

/// Argo 3's fine-grained rights on an Application's resources
/// (`server.rbac.disableApplicationFineGrainedRBACInheritance`, default `true`): `applications,
/// update` alone does not patch a resource, `update/*` does, and a deny rule such as
/// `delete/*/Secret/*/*` holds while `delete/*` allows the rest; with the setting `false`,
/// `update` on the Application covers its resources again.
async fn fine_grained_resource_rights(
    s: &AuthStack,
    u: &str,
    obj: &str,
    cm_path: &str,
    secret_path: &str,
) {
    let patch = json!("{\"data\":{\"mode\":\"fine\"}}");
    let patch_cm = || s.call(Method::POST, cm_path, Some(u), Some(&patch));
    s.set_policy(
        &format!(
            "p, u, applications, get, {obj}, allow\np, u, applications, update, {obj}, allow\n"
        ),
        "",
    )
    .await;
    let (code, body) = patch_cm().await;
    assert_eq!(
        code, 403,
        "update on the app alone, inheritance disabled: {body}"
    );
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("applications, update//ConfigMap/")),
        "names the fine-grained action: {body}"
    );
    s.set_config_map(
        "argocd-cm",
        &[(
            "server.rbac.disableApplicationFineGrainedRBACInheritance",
            "false",
        )],
    )
    .await;
    let (code, body) = patch_cm().await;
    assert_eq!(code, 200, "update on the app, inheritance enabled: {body}");
    s.set_config_map(
        "argocd-cm",
        &[(
            "server.rbac.disableApplicationFineGrainedRBACInheritance",
            "true",
        )],
    )
    .await;
    s.set_policy(
        &format!(
            "p, u, applications, get, {obj}, allow\np, u, applications, update/*, {obj}, allow\n\
             p, u, applications, delete/*, {obj}, allow\n\
             p, u, applications, delete/*/Secret/*/*, {obj}, deny\n"
        ),
        "",
    )
    .await;
    let (code, body) = patch_cm().await;
    assert_eq!(code, 200, "update/*: {body}");
    let (code, body) = s.call(Method::DELETE, secret_path, Some(u), None).await;
    assert_eq!(code, 403, "delete/*/Secret/*/* denied: {body}");
    s.set_policy("", "").await;
}

/// `GET .../events` for one object (Argo's `ListResourceEvents`): any node of the Application's
/// tree, a Pod it does not manage included, matched by name, namespace and UID; an object
/// outside the tree, or a tree node's name with another UID, is 400 "not found as part of
/// application", so the route reads no other object's Events.
async fn resource_events_come_from_the_tree_by_uid(
    s: &AuthStack,
    admin: &str,
    ns: &str,
    pod: &str,
    stranger_pod: &str,
) {
    use k8s_openapi::api::core::v1::Event;
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), ns);
    let events: Api<Event> = Api::namespaced(s.client.clone(), ns);
    let mut uids = Vec::new();
    for (name, reason) in [(pod, "TreeNodeEvent"), (stranger_pod, "StrangerEvent")] {
        let uid = pods
            .get(name)
            .await
            .expect("pod")
            .metadata
            .uid
            .expect("uid");
        let event: Event = serde_json::from_value(json!({
            "metadata": {"name": format!("{name}.test")},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": ns,
                               "name": name, "uid": uid},
            "reason": reason, "message": format!("about {name}"), "type": "Normal",
            "firstTimestamp": "2026-12-06T10:00:00Z", "lastTimestamp": "2026-12-06T10:00:00Z"
        }))
        .expect("event");
        events
            .create(&PostParams::default(), &event)
            .await
            .expect("create event");
        uids.push(uid);
    }
    let ask = |name: &str, uid: &str| {
        let path = format!(
            "/api/v1/applications/{APP}/events?resourceNamespace={ns}&resourceName={name}&resourceUID={uid}"
        );
        async move { s.get(&path, admin).await }
    };
    let (code, body) = ask(pod, &uids[0]).await;
    assert_eq!(code, 200, "a Pod of the tree: {body}");
    let items = body["items"].as_array().expect("items");
    assert!(
        items.iter().any(|e| e["reason"] == "TreeNodeEvent"),
        "{body}"
    );
    assert!(
        items
            .iter()
            .all(|e| e["involvedObject"]["uid"] == uids[0].as_str()),
        "only the Pod's own Events: {body}"
    );
    for (name, uid) in [(stranger_pod, uids[1].as_str()), (pod, uids[1].as_str())] {
        let (code, body) = ask(name, uid).await;
        assert_eq!(code, 400, "{name} {uid}: {body}");
        assert!(
            body.to_string()
                .contains("not found as part of application"),
            "{body}"
        );
    }
}

/// A patch of a Secret that the API server refuses answers with the API server's reason, never
/// with the Secret's values (the class of Argo's advisories on Secret data in error text): a
/// JSON patch whose `test` fails on `/data/password`, and a change of the immutable `type`.
async fn secret_patch_errors_carry_no_values(s: &AuthStack, admin: &str, base: &str, ns: &str) {
    const STORED: [&str; 2] = ["aHVudGVyMi1zM2NyM3Q=", "hunter2-s3cr3t"];
    let secret_q = query(ns, "", "v1", "Secret", "shopfront-db");
    for (patch_type, patch) in [
        (
            "application/json-patch%2Bjson",
            r#"[{"op": "test", "path": "/data/password", "value": "Z3Vlc3M="}, {"op": "remove", "path": "/data/password"}]"#,
        ),
        (
            "application/merge-patch%2Bjson",
            r#"{"type": "kubernetes.io/tls"}"#,
        ),
    ] {
        let (code, body) = s
            .call(
                Method::POST,
                &format!("{base}?{secret_q}&patchType={patch_type}"),
                Some(admin),
                Some(&json!(patch)),
            )
            .await;
        assert!(code >= 400, "refused: {patch}: {code} {body}");
        let text = body.to_string();
        for v in STORED {
            assert!(
                !text.contains(v),
                "{patch}: the Secret's value in the error: {text}"
            );
        }
    }
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(s.client.clone(), ns);
    let kept = secrets.get("shopfront-db").await.expect("secret");
    assert!(
        kept.data.is_some_and(|d| d.contains_key("password")),
        "nothing was changed"
    );
}
