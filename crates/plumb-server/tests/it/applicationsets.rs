//! Argo's `ApplicationSetService` paths against the real control plane: create (idempotent,
//! upsert, Argo's refusals), get, list (projects, RBAC-filtered), resource-tree, delete, and
//! Plumb's confirm-deletion and applications routes; RBAC on `applicationsets` as Argo checks it.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_app::{application_resource, appproject_resource};
use reqwest::Method;
use serde_json::{Value, json};

use crate::authn::AuthStack;
use crate::support::{Stack, ensure_appset_crd, env};

pub(crate) fn appset(name: &str, project: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": name},
        "spec": {
            "generators": [{"list": {"elements": [{"cluster": "a"}, {"cluster": "b"}]}}],
            "template": {
                "metadata": {"name": "{{cluster}}-web"},
                "spec": {"project": project,
                         "source": {"repoURL": "https://example.com/apps.git", "path": "web"},
                         "destination": {"server": "https://kubernetes.default.svc",
                                         "namespace": "{{cluster}}"}}}}
    })
}

async fn create_project(client: &kube::Client, ns: &str, name: &str) {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &appproject_resource());
    let p: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject", "metadata": {"name": name},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}
    }))
    .expect("project");
    api.create(&PostParams::default(), &p)
        .await
        .expect("create project");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_get_list_upsert_and_delete_as_argo() {
    ensure_appset_crd();
    let s = Stack::start("asurf-appset-api").await;
    let post = |body: Value, query: &'static str| {
        let s = &s;
        async move {
            s.send(
                Method::POST,
                &format!("/api/v1/applicationsets{query}"),
                Some(&body),
            )
            .await
        }
    };
    let (code, created) = post(appset("web", "default"), "").await;
    assert_eq!(code, 200, "{created}");
    assert_eq!(created["metadata"]["namespace"], s.ns.name());
    assert_eq!(created["kind"], "ApplicationSet");
    // The same again: the existing one, unchanged.
    let (code, again) = post(appset("web", "default"), "").await;
    assert_eq!(code, 200, "{again}");
    assert_eq!(
        again["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    // A different spec: refused without upsert, with Argo's message; replaced with it.
    let mut changed = appset("web", "default");
    changed["spec"]["template"]["spec"]["source"]["path"] = json!("web-v2");
    changed["metadata"]["labels"] = json!({"team": "web"});
    let (code, body) = post(changed.clone(), "").await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "existing ApplicationSet spec is different, use upsert flag to force update"
    );
    let (code, updated) = post(changed, "?upsert=true").await;
    assert_eq!(code, 200, "{updated}");
    assert_eq!(
        updated["spec"]["template"]["spec"]["source"]["path"],
        "web-v2"
    );
    assert_eq!(updated["metadata"]["labels"]["team"], "web");
    // Argo's refusals.
    let (code, body) = post(appset("tmpl", "{{project}}"), "").await;
    assert_eq!(code, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("templated `project` fields"),
        "{body}"
    );
    let (code, body) = post(appset("noproj", "nowhere"), "").await;
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "ApplicationSet references project nowhere which does not exist"
    );
    let mut bogus = appset("bogus", "default");
    bogus["spec"]["generators"] = json!([{"bogus": {}}]);
    let (code, body) = post(bogus, "").await;
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "error validating ApplicationSets: ApplicationSet bogus contains unrecognized generators: bogus"
    );
    // Get, list with the projects filter.
    let (code, got) = s.get("/api/v1/applicationsets/web").await;
    assert_eq!(code, 200, "{got}");
    let (code, body) = s.get("/api/v1/applicationsets/nothing-here").await;
    assert_eq!(code, 404, "{body}");
    let client = env().client().await;
    create_project(&client, s.ns.name(), "team-a").await;
    assert_eq!(post(appset("team-set", "team-a"), "").await.0, 200);
    let (_, all) = s.get("/api/v1/applicationsets").await;
    let names: Vec<&str> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["team-set", "web"]);
    let (_, team) = s.get("/api/v1/applicationsets?projects=team-a").await;
    assert_eq!(team["items"].as_array().unwrap().len(), 1);
    // Delete.
    let (code, _) = s
        .send(Method::DELETE, "/api/v1/applicationsets/web", None)
        .await;
    assert_eq!(code, 200);
    let (code, _) = s.get("/api/v1/applicationsets/web").await;
    assert_eq!(code, 404);
}

/// A generated Application owned by `set` (as the controller writes them).
async fn owned_app(client: &kube::Client, ns: &str, name: &str, set: &Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &application_resource());
    let app: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "ownerReferences": [{
            "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
            "name": set["metadata"]["name"], "uid": set["metadata"]["uid"],
            "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"project": "default",
                 "source": {"repoURL": "https://example.com/apps.git", "path": "web"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": name}}
    }))
    .expect("application");
    api.create(&PostParams::default(), &app)
        .await
        .expect("create application");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brake_pending_deletions_tree_and_confirmation() {
    ensure_appset_crd();
    // The test writes what the ApplicationSet controller would (owned Applications, the brake's
    // status): the real one, on by default in `plumb controller`, would race it.
    let s = Stack::start_with("asurf-appset-brake", |controller, _| {
        controller.applicationset = Some(false);
    })
    .await;
    let (code, set) = s
        .send(
            Method::POST,
            "/api/v1/applicationsets",
            Some(&appset("fleet", "default")),
        )
        .await;
    assert_eq!(code, 200, "{set}");
    let client = env().client().await;
    for name in ["a-web", "b-web", "c-web"] {
        owned_app(&client, s.ns.name(), name, &set).await;
    }
    // What the brake writes: DeletionHeld, and only a-web still generated.
    let sets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        s.ns.name(),
        &plumb_appset::api::applicationset_resource(),
    );
    let status = json!({"status": {
        "conditions": [{"type": "DeletionHeld", "status": "True", "reason": "DeletionHeld",
                        "message": "would delete b-web, c-web (2 of 3)"}],
        "resources": [{"group": "argoproj.io", "version": "v1alpha1", "kind": "Application",
                       "name": "a-web", "status": "Synced", "health": {"status": "Healthy"}}]}});
    sets.patch_status("fleet", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    let (code, owned) = s.get("/api/v1/applicationsets/fleet/applications").await;
    assert_eq!(code, 200, "{owned}");
    assert_eq!(owned["pendingDeletions"], json!(["b-web", "c-web"]));
    assert_eq!(owned["items"].as_array().unwrap().len(), 3);
    let (code, tree) = s.get("/api/v1/applicationsets/fleet/resource-tree").await;
    assert_eq!(code, 200, "{tree}");
    assert_eq!(tree["nodes"][0]["name"], "a-web");
    assert_eq!(tree["nodes"][0]["parentRefs"][0]["name"], "fleet");
    assert_eq!(tree["nodes"][0]["health"]["status"], "Healthy");
    // Confirmations: names checked, then written and added up.
    let confirm = |body: Value| {
        let s = &s;
        async move {
            s.send(
                Method::POST,
                "/api/v1/applicationsets/fleet/confirm-deletion",
                Some(&body),
            )
            .await
        }
    };
    let (code, body) = confirm(json!({"applications": ["b-web,all"]})).await;
    assert_eq!(code, 400, "{body}");
    let (code, body) = confirm(json!({})).await;
    assert_eq!(code, 400, "{body}");
    let (code, body) = confirm(json!({"applications": ["x"], "all": true})).await;
    assert_eq!(code, 400, "{body}");
    let (code, body) = confirm(json!({"applications": ["c-web"]})).await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = confirm(json!({"applications": ["b-web"]})).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["metadata"]["annotations"]["plumb.dev/confirm-deletion"],
        "b-web,c-web"
    );
    let (_, body) = confirm(json!({"all": true})).await;
    assert_eq!(
        body["metadata"]["annotations"]["plumb.dev/confirm-deletion"],
        "all"
    );
    // A failure never deletes: nothing above removed an Application.
    let apps: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), s.ns.name(), &application_resource());
    assert_eq!(
        apps.list(&Default::default())
            .await
            .expect("list")
            .items
            .len(),
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_on_applicationsets_as_argo() {
    ensure_appset_crd();
    let s = AuthStack::start("asurf-appset-rbac", Default::default()).await;
    let admin = s.admin_token().await;
    create_project(&s.client, s.ns.name(), "team-a").await;
    for (name, project) in [("a-set", "team-a"), ("d-set", "default")] {
        let (code, body) = s
            .call(
                Method::POST,
                "/api/v1/applicationsets",
                Some(&admin),
                Some(&appset(name, project)),
            )
            .await;
        assert_eq!(code, 200, "{body}");
    }
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    s.set_policy(
        "p, u, applicationsets, get, team-a/*, allow\np, u, applicationsets, create, team-a/*, allow\n",
        "",
    )
    .await;
    // The list holds only what the caller may get.
    let (code, list) = s.get("/api/v1/applicationsets", &u).await;
    assert_eq!(code, 200, "{list}");
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a-set"]);
    // Argo's message names the resource, action and object.
    let (code, body) = s.get("/api/v1/applicationsets/d-set", &u).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "permission denied: applicationsets, get, default/d-set, sub: u"
    );
    let (code, body) = s
        .call(
            Method::DELETE,
            "/api/v1/applicationsets/a-set",
            Some(&u),
            None,
        )
        .await;
    assert_eq!(code, 403, "{body}");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applicationsets/a-set/confirm-deletion",
            Some(&u),
            Some(&json!({"all": true})),
        )
        .await;
    assert_eq!(code, 403, "confirming is a delete: {body}");
    // Create in the caller's project only; an upsert of a different spec needs update too.
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applicationsets",
            Some(&u),
            Some(&appset("u-set", "default")),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applicationsets",
            Some(&u),
            Some(&appset("u-set", "team-a")),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let mut changed = appset("u-set", "team-a");
    changed["spec"]["template"]["spec"]["source"]["path"] = json!("v2");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applicationsets?upsert=true",
            Some(&u),
            Some(&changed),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "permission denied: applicationsets, update, team-a/u-set, sub: u"
    );
    // Without a session: 401 on every route.
    let (code, _) = s.get("/api/v1/applicationsets", "").await;
    assert_eq!(code, 401);
}

/// A Kubernetes Event about `set` (by `uid`), as the controller records them.
async fn set_event(client: &kube::Client, ns: &str, event: &str, set: &Value, uid: &str) {
    let api: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), ns);
    let e = serde_json::from_value(json!({
        "metadata": {"name": event},
        "involvedObject": {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
                           "name": set["metadata"]["name"], "namespace": ns, "uid": uid},
        "reason": "ResourceUpdated", "message": format!("{event} happened"), "type": "Normal",
        "lastTimestamp": "2026-01-01T00:00:00Z"
    }))
    .expect("event");
    api.create(&PostParams::default(), &e)
        .await
        .expect("create event");
}

/// One watch stream's frames, read line by line.
struct Frames {
    resp: reqwest::Response,
    buf: String,
}

impl Frames {
    async fn open(s: &AuthStack, query: &str, token: &str) -> Self {
        let resp = s
            .http
            .get(format!("{}/api/v1/stream/applicationsets{query}", s.base))
            .bearer_auth(token)
            .send()
            .await
            .expect("stream");
        assert_eq!(resp.status().as_u16(), 200, "{query}");
        Self {
            resp,
            buf: String::new(),
        }
    }

    /// The next frame's `result` (`None` when the stream ended). A stream that sends nothing
    /// for 60 s fails the test instead of hanging it.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(pos) = self.buf.find('\n') {
                let line: String = self.buf.drain(..=pos).collect();
                let v: Value = serde_json::from_str(line.trim()).expect("a JSON frame");
                return Some(v["result"].clone());
            }
            match tokio::time::timeout(std::time::Duration::from_secs(60), self.resp.chunk()).await
            {
                Ok(Ok(Some(chunk))) => self.buf.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(_) => return None,
                Err(_) => panic!("no frame on the stream for 60 s"),
            }
        }
    }
}

fn kind_and_name(result: &Value) -> (String, String) {
    (
        result["type"].as_str().unwrap_or_default().to_string(),
        result["applicationSet"]["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_and_watch_stream_as_argo() {
    ensure_appset_crd();
    // No controller: the test alone changes the sets, so the stream's frames are known.
    let mut s = AuthStack::start("aapi-appset-watch", Default::default()).await;
    let admin = s.admin_token().await;
    create_project(&s.client, s.ns.name(), "team-a").await;
    let mut sets = std::collections::BTreeMap::new();
    for (name, project) in [("a-set", "team-a"), ("d-set", "default")] {
        let (code, body) = s
            .call(
                Method::POST,
                "/api/v1/applicationsets",
                Some(&admin),
                Some(&appset(name, project)),
            )
            .await;
        assert_eq!(code, 200, "{body}");
        sets.insert(name, body);
    }
    s.add_account("u", "apiKey, login", "u-pw").await;
    let u = s.login("u", "u-pw").await;
    s.set_policy("p, u, applicationsets, get, team-a/*, allow\n", "")
        .await;

    // Events: those of the set (by UID), not those of an older set of the same name.
    let a = &sets["a-set"];
    let uid = a["metadata"]["uid"].as_str().unwrap();
    set_event(&s.client, s.ns.name(), "a-set.1", a, uid).await;
    set_event(&s.client, s.ns.name(), "a-set.old", a, "0000-old-uid").await;
    let (code, list) = s.get("/api/v1/applicationsets/a-set/events", &u).await;
    assert_eq!(code, 200, "{list}");
    let messages: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["a-set.1 happened"], "{list}");
    let path = format!(
        "/api/v1/applicationsets/a-set/events?appsetNamespace={}",
        s.ns.name()
    );
    assert_eq!(s.get(&path, &u).await.0, 200);
    let (code, body) = s.get("/api/v1/applicationsets/d-set/events", &u).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "permission denied: applicationsets, get, default/d-set, sub: u"
    );
    let (code, _) = s.get("/api/v1/applicationsets/none/events", &u).await;
    assert_eq!(code, 404);
    let (code, _) = s
        .get(
            "/api/v1/applicationsets/a-set/events?appsetNamespace=kube-system",
            &u,
        )
        .await;
    assert_eq!(code, 403, "a namespace the server does not serve");

    // The stream: without `name`, as Argo, only changes; only the sets the caller may get.
    let mut all = Frames::open(&s, "", &u).await;
    let mut named = Frames::open(&s, "?name=a-set", &u).await;
    let first = named.next().await.expect("the named set first");
    assert_eq!(kind_and_name(&first), ("ADDED".into(), "a-set".into()));
    assert_eq!(
        first["applicationSet"]["spec"]["template"]["spec"]["project"],
        "team-a"
    );
    let sets_api: Api<DynamicObject> = Api::namespaced_with(
        s.client.clone(),
        s.ns.name(),
        &plumb_appset::api::applicationset_resource(),
    );
    // d-set changes first: were it streamed to u, it would come before a-set's change.
    for name in ["d-set", "a-set"] {
        sets_api
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"metadata": {"labels": {"touched": "yes"}}})),
            )
            .await
            .expect("label");
    }
    let changed = all.next().await.expect("a frame");
    assert_eq!(kind_and_name(&changed), ("MODIFIED".into(), "a-set".into()));
    assert_eq!(
        changed["applicationSet"]["metadata"]["labels"]["touched"],
        "yes"
    );
    let changed = named.next().await.expect("a frame");
    assert_eq!(kind_and_name(&changed), ("MODIFIED".into(), "a-set".into()));
    for name in ["d-set", "a-set"] {
        let (code, body) = s
            .call(
                Method::DELETE,
                &format!("/api/v1/applicationsets/{name}"),
                Some(&admin),
                None,
            )
            .await;
        assert_eq!(code, 200, "{body}");
    }
    let gone = all.next().await.expect("a frame");
    assert_eq!(kind_and_name(&gone), ("DELETED".into(), "a-set".into()));

    // Refusals before any streaming: a bad selector, name or namespace; no session.
    for (query, want) in [
        ("?selector=a%20in%20(", 400),
        ("?name=..%2Fx", 400),
        ("?appSetNamespace=kube-system", 403),
    ] {
        let resp = s
            .http
            .get(format!("{}/api/v1/stream/applicationsets{query}", s.base))
            .bearer_auth(&u)
            .send()
            .await
            .expect("stream");
        assert_eq!(resp.status().as_u16(), want, "{query}");
    }
    let resp = s
        .http
        .get(format!("{}/api/v1/stream/applicationsets", s.base))
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status().as_u16(), 401);

    // A client that goes away leaves the server answering; an open stream ends on shutdown.
    drop(named);
    assert_eq!(s.get("/api/v1/applicationsets", &u).await.0, 200);
    s.restart().await;
    assert!(
        all.next().await.is_none(),
        "the stream ended with the server"
    );
}
