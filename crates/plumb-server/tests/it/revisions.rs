//! The routes closing #14: a commit's metadata (`revisions/{rev}/metadata`), the resource-tree
//! stream, and the server's own `/metrics` counting both under Argo's gRPC names.

use plumb_testenv::git::GitRepo;
use reqwest::Method;
use serde_json::{Value, json};

use crate::api::next_event;
use crate::support::Stack;

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n")
}

fn node_names(tree: &Value) -> Vec<String> {
    let mut names: Vec<String> = tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            format!(
                "{}/{}",
                n["kind"].as_str().unwrap_or(""),
                n["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn revision_metadata_resource_tree_stream_and_server_metrics() {
    let stack = Stack::start("srv-rev").await;
    let dest = crate::support::env().namespace("srv-rev-dest");
    let repo = GitRepo::new();
    let first = repo.commit(
        &[("k8s/a.yaml", config_map("alpha"))],
        "first release\n\nwith a body line",
    );
    repo.annotated_tag("v1.0", "release v1.0");
    let second = repo.commit(&[("k8s/b.yaml", config_map("beta"))], "add beta");
    let body = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "meta"},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "k8s", "targetRevision": "v1.0"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}
    });
    let (code, created) = stack
        .send(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&body),
        )
        .await;
    assert_eq!(code, 200, "{created}");

    // Metadata by SHA, by tag and by branch; Argo's RevisionMetadata shape.
    let (code, by_sha) = stack
        .get(&format!(
            "/api/v1/applications/meta/revisions/{first}/metadata"
        ))
        .await;
    assert_eq!(code, 200, "{by_sha}");
    assert_eq!(by_sha["author"], "Plumb Test <test@plumb.invalid>");
    assert_eq!(by_sha["message"], "first release\n\nwith a body line");
    assert_eq!(by_sha["tags"], json!(["v1.0"]));
    assert!(by_sha.get("signatureInfo").is_none(), "unsigned: {by_sha}");
    let date: jiff::Timestamp = by_sha["date"]
        .as_str()
        .expect("date")
        .parse()
        .expect("RFC 3339 date");
    assert!(date.as_second() > 1_600_000_000, "{date}");
    let (code, by_tag) = stack
        .get("/api/v1/applications/meta/revisions/v1.0/metadata")
        .await;
    assert_eq!(
        (code, &by_tag),
        (200, &by_sha),
        "the tag names the same commit"
    );
    let (code, head) = stack
        .get("/api/v1/applications/meta/revisions/HEAD/metadata")
        .await;
    assert_eq!(code, 200, "{head}");
    assert_eq!(head["message"], "add beta");
    assert!(head.get("tags").is_none(), "{head}");
    let (code, err) = stack
        .get("/api/v1/applications/meta/revisions/no-such-branch/metadata")
        .await;
    assert_eq!(code, 404, "{err}");
    assert_eq!(err["code"], 5);
    let (code, err) = stack
        .get("/api/v1/applications/meta/revisions/HEAD/metadata?sourceIndex=3")
        .await;
    assert_eq!(code, 400, "{err}");

    // The tree stream: the current tree first, then a new one when the tree changes.
    let (code, synced) = stack
        .send(
            Method::POST,
            "/api/v1/applications/meta/sync",
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200, "{synced}");
    stack
        .wait_app("meta", "synced at v1.0", |a| {
            a["status"]["sync"]["status"] == "Synced" && a["operation"].is_null()
        })
        .await;
    let mut stream = stack
        .http
        .get(stack.url("/api/v1/stream/applications/meta/resource-tree"))
        .send()
        .await
        .expect("tree stream");
    assert_eq!(stream.status().as_u16(), 200);
    let mut buf = String::new();
    let initial = next_event(&mut stream, &mut buf, |e| {
        node_names(&e["result"]).contains(&"ConfigMap/alpha".to_string())
    })
    .await;
    assert!(
        !node_names(&initial["result"]).contains(&"ConfigMap/beta".to_string()),
        "{initial}"
    );
    // Move the Application to the branch head: beta appears in the streamed tree.
    let mut moved = created.clone();
    moved["spec"]["source"]["targetRevision"] = json!("HEAD");
    let (code, err) = stack
        .send(Method::PUT, "/api/v1/applications/meta", Some(&moved))
        .await;
    assert_eq!(code, 200, "{err}");
    let (code, err) = stack
        .send(
            Method::POST,
            "/api/v1/applications/meta/sync",
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200, "{err}");
    let updated = next_event(&mut stream, &mut buf, |e| {
        node_names(&e["result"]).contains(&"ConfigMap/beta".to_string())
    })
    .await;
    assert!(
        node_names(&updated["result"]).contains(&"ConfigMap/alpha".to_string()),
        "{updated}"
    );
    drop(stream);
    let (code, _) = stack
        .get("/api/v1/stream/applications/no-such-app/resource-tree")
        .await;
    assert_eq!(code, 404, "a missing Application is an error, not a stream");
    let _ = second;

    // The server's metrics, on their own port, under Argo's gRPC names.
    let text = stack.server_metrics().await;
    let has = |line: &str| text.lines().any(|l| l.starts_with(line));
    assert!(
        has(
            "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"RevisionMetadata\",grpc_service=\"application.ApplicationService\",grpc_type=\"unary\"} 3"
        ),
        "{text}"
    );
    assert!(
        has(
            "grpc_server_handled_total{grpc_code=\"NotFound\",grpc_method=\"RevisionMetadata\",grpc_service=\"application.ApplicationService\",grpc_type=\"unary\"} 1"
        ),
        "{text}"
    );
    assert!(
        has(
            "grpc_server_started_total{grpc_method=\"WatchResourceTree\",grpc_service=\"application.ApplicationService\",grpc_type=\"server_stream\"} 2"
        ),
        "{text}"
    );
    assert!(
        has(
            "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Sync\",grpc_service=\"application.ApplicationService\",grpc_type=\"unary\"} 2"
        ),
        "{text}"
    );
    assert!(
        has(
            "plumb_server_http_requests_total{method=\"GET\",route=\"/api/v1/applications/{name}/revisions/{revision}/metadata\",code=\"200\"} 3"
        ),
        "{text}"
    );
    assert!(
        !text.contains("no-such-branch"),
        "raw paths never become labels"
    );
}
