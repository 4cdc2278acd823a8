//! The plugin generator against a real HTTP plugin served on loopback.

use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use plumb_appset::Limits;
use plumb_testenv::TestEnv;
use serde_json::{Value, json};

use crate::agen_support::{apply, appset, context, params};

/// A plugin service: echoes its input as Argo's docs' example does, and misbehaves on request
/// (`mode` of the input parameters: `hang`, `huge`, `garbage`, `echo`: a 500 repeating the
/// request's Authorization header, as a careless plugin's error page does).
async fn getparams(headers: HeaderMap, body: String) -> (StatusCode, String) {
    if headers.get("authorization").and_then(|v| v.to_str().ok())
        != Some("Bearer agen-plugin-token")
    {
        return (StatusCode::FORBIDDEN, "bad token".into());
    }
    let req: Value = serde_json::from_str(&body).unwrap_or_default();
    let input = &req["input"]["parameters"];
    match input["mode"].as_str() {
        Some("hang") => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            (StatusCode::OK, String::new())
        }
        Some("huge") => (
            StatusCode::OK,
            format!(
                "{{\"output\":{{\"parameters\":[{{\"x\":\"{}\"}}]}}}}",
                "a".repeat(10 << 20)
            ),
        ),
        Some("garbage") => (StatusCode::OK, "<html>not json</html>".into()),
        Some("echo") => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("refused: {:?}", headers.get("authorization")),
        ),
        _ => {
            let out = json!({"output": {"parameters": [
                {"app": req["applicationSetName"], "key1": input["key1"], "nested": {"n": 2}},
                {"app": "second", "key1": "other", "nested": {"n": 3}}
            ]}});
            (StatusCode::OK, out.to_string())
        }
    }
}

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("the bound address");
    let app = Router::new().route("/api/v1/getparams.execute", post(getparams));
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

#[tokio::test]
async fn plugin_params_token_and_hostile_answers() {
    let ns = TestEnv::shared().namespace("agen-plugin");
    let ns = ns.name();
    let base = serve().await;
    apply(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata: {{name: agen-plugin, namespace: {ns}}}\nstringData: {{token: agen-plugin-token}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: agen-plugin, namespace: {ns}}}\ndata: {{baseUrl: '{base}', token: '$agen-plugin:token'}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: agen-plugin-badtoken, namespace: {ns}}}\ndata: {{baseUrl: '{base}', token: '$agen-plugin:absent'}}\n"
    ));
    let cache = tempfile::tempdir().unwrap();
    let limits = Limits {
        http_timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    let ctx = context(ns, &cache, limits).await;
    let generator = |mode: &str| json!([{"plugin": {"configMapRef": {"name": "agen-plugin"}, "input": {"parameters": {"key1": "value1", "mode": mode}}, "values": {"v": "{{key1}}-x"}}}]);

    let out = params(&appset(ns, false, generator("ok")), &ctx)
        .await
        .unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["app"], "agen-test");
    assert_eq!(out[0]["key1"], "value1");
    assert_eq!(out[0]["nested.n"], "2");
    assert_eq!(out[0]["values.v"], "value1-x");
    assert_eq!(out[0]["generator"]["input"]["parameters"]["key1"], "value1");
    // With Go templates the answer keeps its shape.
    let plain = json!([{"plugin": {"configMapRef": {"name": "agen-plugin"}, "input": {"parameters": {"key1": "v"}}}}]);
    let out = params(&appset(ns, true, plain), &ctx).await.unwrap();
    assert_eq!(out[1]["nested"]["n"], 3);

    for (mode, want) in [
        ("hang", "no answer within"),
        ("huge", "larger than"),
        ("garbage", "not a getparams.execute response"),
        ("echo", "Bearer <token>"),
    ] {
        let err = params(&appset(ns, false, generator(mode)), &ctx)
            .await
            .unwrap_err();
        assert!(err.contains(want), "{mode}: {err}");
        assert!(!err.contains("agen-plugin-token"), "{mode}: {err}");
    }
    let bad = json!([{"plugin": {"configMapRef": {"name": "agen-plugin-badtoken"}}}]);
    let err = params(&appset(ns, false, bad), &ctx).await.unwrap_err();
    assert!(
        err.contains("\"absent\"") && !err.contains("agen-plugin-token"),
        "{err}"
    );
}
