//! The REST API end to end on the payments-api example: create, sync, get (snapshot of the
//! JSON), list filters, projects, settings, managed resources (Secrets masked), manifests, the
//! resource tree, events, the watch stream, update, a second release, rollback, terminate and
//! delete, each through HTTPS as a script written against Argo CD's REST API would call it.

use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{DEADLINE, Stack};

const IMAGE: &str = "registry.acme.internal/payments-api";
const SECRET_B64: &str = "aHVudGVyMi1zM2NyM3Q=";

fn files(version: &str) -> Vec<(&'static str, String)> {
    vec![
        ("k8s/service.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: payments-api\nspec:\n  selector:\n    app: payments-api\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n".into()),
        ("k8s/configmap.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: payments-api\ndata:\n  LOG_LEVEL: info\n  CURRENCY: EUR\n".into()),
        ("k8s/secret.yaml", format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: payments-api-db\ntype: Opaque\ndata:\n  password: {SECRET_B64}\n")),
        ("k8s/deployment.yaml", format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments-api\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: payments-api\n  template:\n    metadata:\n      labels:\n        app: payments-api\n    spec:\n      containers:\n      - name: payments-api\n        image: {IMAGE}:{version}\n        ports:\n        - containerPort: 8080\n")),
    ]
}

fn application(repo: &GitRepo, dest: &str, revision: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "payments-api", "labels": {"team": "payments"}},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "k8s", "targetRevision": revision},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}}
    })
}

/// Replaces what differs between runs (names of test namespaces, the repository path, commit
/// ids, times, uids, resource versions) with placeholders, and drops managedFields.
fn scrub(v: &mut Value, replace: &[(&str, &str)]) {
    match v {
        Value::Object(map) => {
            map.remove("managedFields");
            for (k, val) in map.iter_mut() {
                let volatile = k.ends_with("At")
                    || k.ends_with("Time")
                    || k == "creationTimestamp"
                    || k == "uid"
                    || k == "resourceVersion"
                    || k == "generation";
                if volatile && !val.is_null() {
                    *val = json!(format!("<{k}>"));
                } else {
                    scrub(val, replace);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| scrub(i, replace)),
        Value::String(s) => {
            for (from, to) in replace {
                *s = s.replace(from, to);
            }
            if s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit()) {
                *s = "<commit>".into();
            }
        }
        _ => {}
    }
}

fn check_snapshot(name: &str, actual: &Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/snapshots")
        .join(name);
    let text = format!("{}\n", serde_json::to_string_pretty(actual).expect("json"));
    if std::env::var_os("PLUMB_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &text).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (PLUMB_UPDATE_SNAPSHOTS=1 writes it)",
            path.display()
        )
    });
    assert_eq!(
        text,
        expected,
        "{} differs (PLUMB_UPDATE_SNAPSHOTS=1 rewrites it)",
        path.display()
    );
}

fn synced_healthy_at(rev: &str) -> impl Fn(&Value) -> bool + '_ {
    move |a: &Value| {
        a["status"]["sync"]["status"] == "Synced"
            && a["status"]["health"]["status"] == "Healthy"
            && a["status"]["operationState"]["phase"] == "Succeeded"
            && a["status"]["sync"]["revision"] == rev
            && a["operation"].is_null()
    }
}

/// Reads lines of a streaming response until `want` matches one (or the deadline passes).
pub(crate) async fn next_event(
    resp: &mut reqwest::Response,
    buf: &mut String,
    want: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        while let Some(pos) = buf.find('\n') {
            let line: String = buf.drain(..=pos).collect();
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line.trim()).expect("stream line is JSON");
            if want(&v) {
                return v;
            }
        }
        assert!(
            start.elapsed() < DEADLINE,
            "stream event not seen; buffered: {buf}"
        );
        match tokio::time::timeout(DEADLINE, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => buf.push_str(&String::from_utf8_lossy(&chunk)),
            other => panic!("stream ended or failed: {other:?}"),
        }
    }
}

#[tokio::test]
async fn payments_api_through_the_rest_api() {
    let stack = Stack::start("srv-api").await;
    let env = crate::support::env();
    let dest = env.namespace("srv-payments");
    let repo = GitRepo::new();
    let v132 = repo.commit(&files("v1.3.2"), "payments-api v1.3.2");
    repo.tag("v1.3.2");
    let v140 = repo.commit(&files("v1.4.0"), "payments-api v1.4.0");
    repo.tag("v1.4.0");
    let app = "/api/v1/applications/payments-api";

    // Version and settings.
    let (code, version) = stack.get("/api/version").await;
    assert_eq!(code, 200);
    assert!(
        version["Version"]
            .as_str()
            .is_some_and(|v| v.starts_with('v')),
        "{version}"
    );
    let (code, settings) = stack.get("/api/v1/settings").await;
    assert_eq!(code, 200);
    assert_eq!(settings["controllerNamespace"], stack.ns.name());
    assert_eq!(settings["appLabelKey"], "app.kubernetes.io/instance");

    // The watch stream, opened before the Application exists.
    let mut stream = stack
        .http
        .get(stack.url("/api/v1/stream/applications?name=payments-api"))
        .send()
        .await
        .expect("stream");
    assert_eq!(stream.status().as_u16(), 200);
    let mut buf = String::new();

    // Create; a second create with the same spec returns it, a different one needs upsert.
    let body = application(&repo, dest.name(), "v1.3.2");
    let (code, created) = stack
        .send(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&body),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    assert_eq!(created["metadata"]["namespace"], stack.ns.name());
    let (code, _) = stack
        .send(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&body),
        )
        .await;
    assert_eq!(code, 200);
    let different = application(&repo, dest.name(), "v1.4.0");
    let (code, err) = stack
        .send(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&different),
        )
        .await;
    assert_eq!(code, 400, "{err}");
    assert_eq!(
        err["message"],
        "existing application spec is different, use upsert flag to force update"
    );
    assert_eq!(err["code"], 3);
    // What Argo refuses before writing, each message naming its field (the web UI's form
    // shows it next to that field).
    for (edit, message) in [
        (
            json!({"spec": {"project": "no-such-project"}}),
            "application references project no-such-project which does not exist",
        ),
        (
            json!({"spec": {"destination": {"name": "in-cluster"}}}),
            "application destination can't have both name and server defined",
        ),
        (
            json!({"spec": {"destination": {"server": null}}}),
            "spec.destination: a server or name is required",
        ),
        (
            json!({"spec": {"source": {"repoURL": ""}}}),
            "spec.source.repoURL is required",
        ),
    ] {
        let mut bad = application(&repo, dest.name(), "v1.3.2");
        bad["metadata"]["name"] = json!("payments-api-invalid");
        json_patch::merge(&mut bad, &edit);
        let (code, err) = stack
            .send(
                Method::POST,
                "/api/v1/applications?validate=false",
                Some(&bad),
            )
            .await;
        assert_eq!(
            (code, err["message"].as_str()),
            (400, Some(message)),
            "{edit}: {err}"
        );
    }
    let added = next_event(&mut stream, &mut buf, |e| e["result"]["type"] == "ADDED").await;
    assert_eq!(
        added["result"]["application"]["metadata"]["name"],
        "payments-api"
    );

    // Sync at v1.3.2.
    let (code, synced) = stack
        .send(
            Method::POST,
            &format!("{app}/sync"),
            Some(&json!({"name": "payments-api", "prune": true})),
        )
        .await;
    assert_eq!(code, 200, "{synced}");
    assert_eq!(synced["operation"]["sync"]["prune"], true);
    let mut done = stack
        .wait_app("payments-api", "synced at v1.3.2", synced_healthy_at(&v132))
        .await;
    let modified = next_event(&mut stream, &mut buf, |e| {
        e["result"]["type"] == "MODIFIED"
            && e["result"]["application"]["status"]["sync"]["status"] == "Synced"
    })
    .await;
    assert_eq!(
        modified["result"]["application"]["metadata"]["name"],
        "payments-api"
    );

    // The Application as the API returns it, against the snapshot.
    let replace = [
        (stack.ns.name(), "<control-namespace>"),
        (dest.name(), "<destination>"),
    ];
    let repo_url = repo.url();
    let mut replace: Vec<(&str, &str)> = replace.to_vec();
    replace.push((repo_url.as_str(), "<repo>"));
    scrub(&mut done, &replace);
    check_snapshot("payments-api.json", &done);

    // List and its filters.
    let names = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                i["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    for (query, expected) in [
        ("", vec!["payments-api"]),
        ("?projects=default", vec!["payments-api"]),
        ("?projects=other", vec![]),
        ("?projects=other&projects=default", vec!["payments-api"]),
        ("?name=payments-api", vec!["payments-api"]),
        ("?name=checkout", vec![]),
        ("?selector=team%3Dpayments", vec!["payments-api"]),
        ("?selector=team%3Dcheckout", vec![]),
    ] {
        let (code, list) = stack.get(&format!("/api/v1/applications{query}")).await;
        assert_eq!(code, 200, "{query}: {list}");
        assert!(list["metadata"].is_object(), "{query}: {list}");
        assert_eq!(names(&list), expected, "{query}");
    }

    // Projects.
    let (code, projects) = stack.get("/api/v1/projects").await;
    assert_eq!(code, 200);
    assert_eq!(projects["items"][0]["metadata"]["name"], "default");
    let (code, project) = stack.get("/api/v1/projects/default").await;
    assert_eq!(
        (code, &project["spec"]["sourceRepos"]),
        (200, &json!(["*"]))
    );
    let (code, err) = stack.get("/api/v1/projects/nope").await;
    assert_eq!((code, &err["code"]), (404, &json!(5)), "{err}");

    // Managed resources: in sync, Secret masked everywhere.
    let resp = stack
        .http
        .get(stack.url(&format!("{app}/managed-resources")))
        .send()
        .await
        .expect("GET");
    let text = resp.text().await.expect("body");
    assert!(
        !text.contains(SECRET_B64) && !text.contains("hunter2"),
        "Secret value leaked: {text}"
    );
    let managed: Value = serde_json::from_str(&text).expect("json");
    let items = managed["items"].as_array().expect("items");
    let kinds: Vec<&str> = items
        .iter()
        .map(|i| i["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        ["ConfigMap", "Secret", "Service", "Deployment"],
        "{managed}"
    );
    for item in items {
        assert!(item.get("modified").is_none(), "{item}");
        let live: Value = serde_json::from_str(item["liveState"].as_str().expect("liveState"))
            .expect("JSON text");
        assert_eq!(live["metadata"]["name"], item["name"]);
        let predicted: Value =
            serde_json::from_str(item["predictedLiveState"].as_str().expect("predicted"))
                .expect("JSON text");
        assert_eq!(predicted["kind"], item["kind"]);
    }
    let secret = items
        .iter()
        .find(|i| i["kind"] == "Secret")
        .expect("secret");
    let target: Value =
        serde_json::from_str(secret["targetState"].as_str().expect("target")).expect("JSON");
    assert_eq!(target["data"]["password"], "++++++++");

    // A tamper shows as a modified object with the field in its diff.
    env.kubectl()
        .args([
            "-n",
            dest.name(),
            "patch",
            "configmap",
            "payments-api",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"LOG_LEVEL":"debug"}}"#,
        ])
        .output()
        .expect("kubectl");
    let (code, managed) = stack.get(&format!("{app}/managed-resources")).await;
    assert_eq!(code, 200);
    let cm = managed["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["kind"] == "ConfigMap")
        .expect("cm")
        .clone();
    assert_eq!(cm["modified"], true, "{cm}");
    assert!(
        cm["diff"].as_str().is_some_and(|d| d.contains("LOG_LEVEL")),
        "{cm}"
    );

    // Manifests of another revision, Secret masked.
    let (code, manifests) = stack.get(&format!("{app}/manifests?revision=v1.4.0")).await;
    assert_eq!(code, 200, "{manifests}");
    assert_eq!(manifests["revision"], v140.as_str());
    assert_eq!(manifests["sourceType"], "Directory");
    let docs: Vec<Value> = manifests["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .map(|m| serde_json::from_str(m.as_str().expect("text")).expect("JSON"))
        .collect();
    assert_eq!(docs.len(), 4);
    assert!(
        docs.iter()
            .any(|d| d["spec"]["template"]["spec"]["containers"][0]["image"]
                == format!("{IMAGE}:v1.4.0"))
    );
    assert!(!manifests.to_string().contains(SECRET_B64));

    // The resource tree: Deployment -> ReplicaSet -> Pods.
    let start = Instant::now();
    let tree = loop {
        let (code, tree) = stack.get(&format!("{app}/resource-tree")).await;
        assert_eq!(code, 200, "{tree}");
        let pods = tree["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .filter(|n| n["kind"] == "Pod")
            .count();
        if pods == 2 {
            break tree;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "two Pods never in the tree: {tree}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let nodes = tree["nodes"].as_array().expect("nodes");
    let node = |kind: &str| {
        nodes
            .iter()
            .find(|n| n["kind"] == kind)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let deploy = node("Deployment");
    let rs = node("ReplicaSet");
    assert_eq!(rs["parentRefs"][0]["uid"], deploy["uid"], "{tree}");
    assert_eq!(rs["parentRefs"][0]["kind"], "Deployment");
    assert_eq!(node("Pod")["parentRefs"][0]["uid"], rs["uid"], "{tree}");
    assert_eq!(node("Pod")["images"], json!([format!("{IMAGE}:v1.3.2")]));
    assert_eq!(deploy["health"]["status"], "Healthy");
    assert!(node("Secret").get("parentRefs").is_none());

    // Events of the Application (the controller's OperationStarted/OperationCompleted...).
    let (code, events) = stack.get(&format!("{app}/events")).await;
    assert_eq!(code, 200, "{events}");
    let reasons: Vec<&str> = events["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|e| e["reason"].as_str())
        .collect();
    assert!(reasons.contains(&"OperationStarted"), "{events}");
    assert!(
        events["items"]
            .as_array()
            .expect("items")
            .iter()
            .all(|e| e["involvedObject"]["name"] == "payments-api")
    );

    // Update to v1.4.0 (PUT), sync, then roll back to the first deployment.
    let (_, current) = stack.get(app).await;
    let mut updated = current.clone();
    updated["spec"]["source"]["targetRevision"] = json!("v1.4.0");
    let (code, put) = stack.send(Method::PUT, app, Some(&updated)).await;
    assert_eq!(code, 200, "{put}");
    assert_eq!(put["spec"]["source"]["targetRevision"], "v1.4.0");
    let (code, _) = stack
        .send(Method::POST, &format!("{app}/sync"), Some(&json!({})))
        .await;
    assert_eq!(code, 200);
    let released = stack
        .wait_app("payments-api", "synced at v1.4.0", synced_healthy_at(&v140))
        .await;
    let history = released["status"]["history"].as_array().expect("history");
    assert_eq!(history.len(), 2, "{history:?}");
    let first_id = history[0]["id"].clone();
    let (code, rolled) = stack
        .send(
            Method::POST,
            &format!("{app}/rollback"),
            Some(&json!({"name": "payments-api", "id": first_id.to_string()})),
        )
        .await;
    assert_eq!(code, 200, "{rolled}");
    assert_eq!(rolled["operation"]["sync"]["revision"], v132.as_str());
    assert_eq!(
        rolled["operation"]["sync"]["syncStrategy"],
        json!({"apply": {}})
    );
    stack
        .wait_app("payments-api", "rolled back to v1.3.2", |a| {
            a["operation"].is_null()
                && a["status"]["operationState"]["phase"] == "Succeeded"
                && a["status"]["operationState"]["syncResult"]["revision"] == v132.as_str()
        })
        .await;
    let (code, err) = stack
        .send(
            Method::POST,
            &format!("{app}/rollback"),
            Some(&json!({"id": "99"})),
        )
        .await;
    assert_eq!(code, 400, "{err}");
    assert_eq!(
        err["message"],
        "Application 'payments-api' does not have deployment id '99' in history"
    );

    // Nothing to terminate.
    let (code, err) = stack
        .send(Method::DELETE, &format!("{app}/operation"), None)
        .await;
    assert_eq!(code, 400, "{err}");
    assert_eq!(
        err["message"],
        "Unable to terminate operation. No operation is in progress"
    );

    // Unknown Application: Argo's NotFound.
    let (code, err) = stack.get("/api/v1/applications/nope").await;
    assert_eq!((code, &err["code"]), (404, &json!(5)), "{err}");

    // Delete with cascade: the resources go, then the Application.
    let (code, _) = stack
        .send(Method::DELETE, &format!("{app}?cascade=true"), None)
        .await;
    assert_eq!(code, 200);
    let start = Instant::now();
    loop {
        let (code, _) = stack.get(app).await;
        if code == 404 {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "Application never deleted");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let left = env
        .kubectl()
        .args([
            "-n",
            dest.name(),
            "get",
            "deployment,configmap/payments-api",
            "-o",
            "name",
            "--ignore-not-found",
        ])
        .output()
        .expect("kubectl");
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "resources left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    next_event(&mut stream, &mut buf, |e| e["result"]["type"] == "DELETED").await;
}
