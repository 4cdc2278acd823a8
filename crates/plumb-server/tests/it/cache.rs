//! The server's Application cache (the list and get routes answer from a watch-fed copy): a
//! read through the server after the server's own write sees that write (create, update,
//! patch, sync, delete), changes made directly in the cluster appear without a restart, an
//! Application the cache has not seen yet is still found by name, and the filters answer as
//! before. No controller runs, so nothing but the test writes the Applications.

use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{DEADLINE, client_trusting, create_default_project, env, read, server_config};

/// Application names no other test uses (the tracking instance is the name, cluster-wide).
const VIA_SERVER: &str = "cache-ryw";
const DIRECT: &str = "cache-direct";
const UNSEEN: &str = "cache-unseen";

fn application(name: &str, path: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "labels": {"suite": "cache"}},
        "spec": {"project": "default",
                 "source": {"repoURL": "https://git.acme.internal/platform/apps.git", "path": path, "targetRevision": "main"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": "cache-dest"}}
    })
}

fn rv(v: &Value) -> u64 {
    v.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no numeric resourceVersion in {v}"))
}

struct Server {
    http: reqwest::Client,
    base: String,
}

impl Server {
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> (u16, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        read(req.send().await.expect("request")).await
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(Method::GET, path, None).await
    }

    /// The list's item named `name`, if listed.
    async fn listed(&self, name: &str) -> Option<Value> {
        let (code, list) = self.get("/api/v1/applications").await;
        assert_eq!(code, 200, "{list}");
        list["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|a| a["metadata"]["name"] == name)
            .cloned()
    }

    /// Polls the list until `cond` holds for the item `name` (or its absence).
    async fn wait_listed(&self, name: &str, what: &str, cond: impl Fn(Option<&Value>) -> bool) {
        let start = Instant::now();
        loop {
            let item = self.listed(name).await;
            if cond(item.as_ref()) {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{name}: {what} not listed within {DEADLINE:?}; last: {item:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_after_the_servers_writes_see_them_and_cluster_changes_appear() {
    let env = env();
    let ns = env.namespace("cache");
    let client = env.client().await;
    create_default_project(&client, ns.name()).await;
    let running = plumb_server::serve(client.clone(), server_config(ns.name()))
        .await
        .expect("server starts");
    let s = Server {
        http: client_trusting(running.certificate_pem.as_deref().expect("TLS")),
        base: format!("https://localhost:{}", running.addr.port()),
    };
    let one = format!("/api/v1/applications/{VIA_SERVER}");

    // Create, then at once the list and the get hold it, at the written version or newer.
    let (code, created) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&application(VIA_SERVER, "apps/v1")),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    let item = s
        .listed(VIA_SERVER)
        .await
        .expect("listed right after create");
    assert!(rv(&item) >= rv(&created), "{item}");
    assert_eq!(item["kind"], "Application");
    let (code, got) = s.get(&one).await;
    assert_eq!(code, 200, "{got}");
    assert!(rv(&got) >= rv(&created));

    // Update (PUT) and patch: the next read has the new spec and labels.
    for i in 2..5 {
        let mut changed = got.clone();
        changed["spec"]["source"]["path"] = json!(format!("apps/v{i}"));
        let (code, updated) = s.call(Method::PUT, &one, Some(&changed)).await;
        assert_eq!(code, 200, "{updated}");
        let item = s.listed(VIA_SERVER).await.expect("listed");
        assert_eq!(item["spec"]["source"]["path"], format!("apps/v{i}"));
        assert!(rv(&item) >= rv(&updated));
        let (_, got) = s.get(&one).await;
        assert_eq!(got["spec"]["source"]["path"], format!("apps/v{i}"));
    }
    let (code, patched) = s
        .call(
            Method::PATCH,
            &one,
            Some(&json!({"patchType": "merge", "patch": json!({"metadata": {"labels": {"tier": "gold"}}}).to_string()})),
        )
        .await;
    assert_eq!(code, 200, "{patched}");
    let (code, list) = s.get("/api/v1/applications?selector=tier%3Dgold").await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["items"][0]["metadata"]["name"], VIA_SERVER);
    let item = s.listed(VIA_SERVER).await.expect("listed");
    assert_eq!(item["metadata"]["labels"]["tier"], "gold");

    // Sync: the requested operation is in the next read (no controller takes it here).
    let (code, synced) = s
        .call(
            Method::POST,
            &format!("{one}/sync"),
            Some(&json!({"prune": true})),
        )
        .await;
    assert_eq!(code, 200, "{synced}");
    let (_, got) = s.get(&one).await;
    assert_eq!(got["operation"]["sync"]["prune"], true, "{got}");
    let item = s.listed(VIA_SERVER).await.expect("listed");
    assert_eq!(item["operation"]["sync"]["prune"], true);

    // Delete (no finalizer: gone at once): the next list and get no longer have it.
    let (code, body) = s
        .call(Method::DELETE, &format!("{one}?cascade=false"), None)
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(s.listed(VIA_SERVER).await, None, "listed after its delete");
    let (code, body) = s.get(&one).await;
    assert_eq!(code, 404, "{body}");
    assert_eq!(
        body["message"],
        format!("applications.argoproj.io \"{VIA_SERVER}\" not found")
    );

    // Changes made directly in the cluster appear without a restart.
    let apps: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns.name(),
        &plumb_app::application_resource(),
    );
    let obj: DynamicObject =
        serde_json::from_value(application(DIRECT, "apps/direct")).expect("object");
    apps.create(&PostParams::default(), &obj)
        .await
        .expect("create directly");
    s.wait_listed(DIRECT, "created in the cluster", |i| i.is_some())
        .await;
    apps.patch(
        DIRECT,
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"source": {"path": "apps/direct-2"}}})),
    )
    .await
    .expect("patch directly");
    s.wait_listed(DIRECT, "changed in the cluster", |i| {
        i.is_some_and(|a| a["spec"]["source"]["path"] == "apps/direct-2")
    })
    .await;
    apps.delete(DIRECT, &DeleteParams::default())
        .await
        .expect("delete directly");
    s.wait_listed(DIRECT, "deleted in the cluster", |i| i.is_none())
        .await;

    // One made directly a moment ago is found by name even before the watch delivers it (the
    // get falls back to the API server for a name the cache does not hold).
    let obj: DynamicObject =
        serde_json::from_value(application(UNSEEN, "apps/unseen")).expect("object");
    apps.create(&PostParams::default(), &obj)
        .await
        .expect("create directly");
    let (code, got) = s.get(&format!("/api/v1/applications/{UNSEEN}")).await;
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["spec"]["source"]["path"], "apps/unseen");
    assert_eq!(got["kind"], "Application");

    // The filters answer from the cache as they did from the API server.
    let (_, list) = s.get(&format!("/api/v1/applications?name={UNSEEN}")).await;
    let names: Vec<&str> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|a| a["metadata"]["name"].as_str())
        .collect();
    assert!(names.is_empty() || names == [UNSEEN], "{names:?}");
    s.wait_listed(UNSEEN, "created in the cluster", |i| i.is_some())
        .await;
    let (_, list) = s
        .get(&format!(
            "/api/v1/applications?name={UNSEEN}&projects=default"
        ))
        .await;
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1), "{list}");
    let (_, list) = s.get("/api/v1/applications?projects=other").await;
    assert_eq!(list["items"], json!([]), "{list}");
    let (_, list) = s
        .get("/api/v1/applications?fields=metadata.resourceVersion,items.metadata.name")
        .await;
    assert_eq!(list["items"], json!([{"metadata": {"name": UNSEEN}}]));
    assert!(
        list["metadata"]["resourceVersion"]
            .as_str()
            .is_some_and(|v| v.parse::<u64>().is_ok()),
        "the list's resourceVersion, for the stream to resume from: {list}"
    );
    running.shutdown().await;
}
