//! Faults: a generator that fails (a repository that cannot be reached, a plugin answering 500,
//! garbage or nothing) sets ErrorOccurred naming it and deletes nothing even under
//! `create-delete`; the controller survives its API server going away (every watch closed) and
//! reconciles again once it is back.

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use plumb_testenv::{Component, TestEnv};
use serde_json::{Value, json};

use super::support::{Running, eventually, list_set, versions};

/// A plugin service misbehaving as its input asks (`mode`: `500`, `garbage`, `hang`).
async fn getparams(body: String) -> (StatusCode, String) {
    let req: Value = serde_json::from_str(&body).unwrap_or_default();
    match req["input"]["parameters"]["mode"].as_str() {
        Some("500") => (StatusCode::INTERNAL_SERVER_ERROR, "plugin broke".into()),
        Some("hang") => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            (StatusCode::OK, String::new())
        }
        _ => (StatusCode::OK, "<html>not json</html>".into()),
    }
}

async fn serve_plugin() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("the bound address");
    let app = Router::new().route("/api/v1/getparams.execute", post(getparams));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn plugin_config(r: &Running, base: &str) {
    let secret = format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: actlt-gen, namespace: {ns}}}\nstringData: {{token: actlt-plugin-s3cr3t}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: actlt-gen, namespace: {ns}}}\ndata: {{baseUrl: '{base}', token: '$actlt-gen:token'}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: actlt-gen-hang, namespace: {ns}}}\ndata: {{baseUrl: '{base}', token: '$actlt-gen:token', requestTimeout: '2'}}\n",
        ns = r.ns.name()
    );
    crate::agen_support::apply(&secret);
}

/// The set's generators: the list now without `b`, and the failing `generator`.
fn failing(generator: Value) -> Value {
    json!({"spec": {"generators": [
        {"list": {"elements": [{"name": "a", "path": "a"}]}},
        generator
    ]}})
}

#[tokio::test]
async fn failing_generators_are_named_and_delete_nothing() {
    let r = Running::start("actlt-generr", |_| {}).await;
    plugin_config(&r, &serve_plugin().await).await;
    let policy = json!({"syncPolicy": {"applicationsSync": "create-delete"}});
    r.create_set(list_set("s", &[("a", "a"), ("b", "b")], policy))
        .await;
    eventually("a and b", || async {
        (r.app_names().await == ["a", "b"]).then_some(())
    })
    .await;
    let before = versions(&r).await;
    // The hanging plugin's ConfigMap asks for a 2 s timeout: below the HTTP client's own 30 s,
    // so the message is always the plugin's "no answer within".
    let plugin = |mode: &str| {
        let cm = if mode == "hang" {
            "actlt-gen-hang"
        } else {
            "actlt-gen"
        };
        json!({"plugin": {"configMapRef": {"name": cm}, "input": {"parameters": {"mode": mode}}}})
    };
    let cases = [
        (
            json!({"git": {"repoURL": "http://127.0.0.1:9/actlt-nothing", "revision": "HEAD",
                           "directories": [{"path": "*"}]}}),
            "127.0.0.1:9/actlt-nothing",
        ),
        (plugin("500"), "500"),
        (plugin("garbage"), "not a getparams.execute response"),
        (plugin("hang"), "no answer within"),
    ];
    for (generator, says) in cases {
        r.patch_set("s", failing(generator.clone())).await;
        let cond = eventually(&format!("ErrorOccurred saying {says}"), || async {
            r.condition("s", "ErrorOccurred").await.filter(|c| {
                c["status"] == "True" && c["message"].as_str().is_some_and(|m| m.contains(says))
            })
        })
        .await;
        let message = cond["message"].as_str().unwrap_or_default();
        let kind = generator
            .as_object()
            .and_then(|o| o.keys().next().cloned())
            .unwrap_or_default();
        assert!(message.contains(&kind), "the generator is named: {message}");
        assert!(!message.contains("actlt-plugin-s3cr3t"), "{message}");
        assert_eq!(
            versions(&r).await,
            before,
            "{says}: an Application was written"
        );
    }
}

/// The API server restarts (every watch and connection closed): the controller reconnects,
/// relists and reconciles a change made afterwards.
#[tokio::test]
async fn the_controller_survives_an_api_server_restart() {
    let env = TestEnv::private().unwrap_or_else(|e| panic!("no private control plane: {e}"));
    let r = Running::start_on(&env, "actlt-restart", |_| {}, std::sync::Arc::new(|| true)).await;
    r.create_set(list_set("s", &[("a", "a")], json!({}))).await;
    eventually("a", || async {
        (r.app_names().await == ["a"]).then_some(())
    })
    .await;
    env.restart(Component::KubeApiserver)
        .unwrap_or_else(|e| panic!("{e}"));
    // The API server answers again (the restart waits for it); the watches come back on their
    // own backoff.
    r.patch_set(
        "s",
        json!({"spec": {"generators": [{"list": {"elements": [
            {"name": "a", "path": "a"}, {"name": "b", "path": "b"}]}}]}}),
    )
    .await;
    eventually("b after the restart", || async {
        (r.app_names().await == ["a", "b"]).then_some(())
    })
    .await;
    // Stopped for a while (requests fail, watches retry), then started: still reconciling.
    env.stop(Component::KubeApiserver)
        .unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    env.start_component(Component::KubeApiserver)
        .unwrap_or_else(|e| panic!("{e}"));
    r.patch_set(
        "s",
        json!({"spec": {"generators": [{"list": {"elements": [
            {"name": "a", "path": "a"}, {"name": "b", "path": "b"}, {"name": "c", "path": "c"}]}}]}}),
    )
    .await;
    eventually("c after the outage", || async {
        (r.app_names().await == ["a", "b", "c"]).then_some(())
    })
    .await;
}
