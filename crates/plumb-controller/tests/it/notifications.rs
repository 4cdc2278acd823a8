//! `plumb controller` runs the notifications controller (crates/plumb-notifications, whose own
//! tests cover it in depth): a subscribed Application is announced to a real webhook receiver,
//! and the delivery is counted on the controller's `/metrics`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::{Api, PostParams};
use plumb_testenv::TestEnv;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::Controlled;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `/metrics`, or nothing while the server is not listening yet.
async fn scrape(port: u16) -> String {
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return String::new();
    };
    let mut out = String::new();
    if s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .is_ok()
    {
        let _ = s.read_to_string(&mut out).await;
    }
    out
}

#[tokio::test]
async fn the_controller_sends_notifications() {
    let received: Arc<Mutex<Vec<String>>> = Arc::default();
    let r = received.clone();
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, body: String| {
        let r = r.clone();
        async move {
            r.lock().expect("lock").push(format!("{uri} {body}"));
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });

    let env = TestEnv::shared();
    let port = free_port();
    let ctl = Controlled::start_with(env, "notify-wiring", |c| {
        c.metrics_addr = Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    })
    .await;
    let ns = ctl.ns.name().to_string();
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(ctl.client.clone(), &ns);
    let cm = json!({"metadata": {"name": "argocd-notifications-cm"}, "data": {
        "service.webhook.hook": format!("url: {url}\n"),
        "trigger.on-present": "- when: 'true'\n  oncePer: app.metadata.name\n  send: [present]\n",
        "template.present": "message: '{{.app.metadata.name}} is here'\nwebhook:\n  hook:\n    method: POST\n    path: /present\n    body: '{{.app.metadata.name}} is here'\n",
    }});
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(cm).expect("cm"),
    )
    .await
    .expect("cm");
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "announced", "annotations": {"notifications.argoproj.io/subscribe.on-present.hook": "ops"}},
        "spec": {"project": "default", "source": {"repoURL": "https://example.invalid/none.git", "path": "."},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": ns}}
    }))
    .await;
    // A deadline only, nothing is timed.
    let deadline = Instant::now() + Duration::from_secs(60);
    let series = r#"argocd_notifications_deliveries_total{trigger="on-present",service="hook",succeeded="true"} 1"#;
    loop {
        let got = received.lock().expect("lock").clone();
        let metrics = scrape(port).await;
        if !got.is_empty() && metrics.contains(series) {
            assert_eq!(got, ["/present announced is here"]);
            break;
        }
        assert!(Instant::now() < deadline, "not delivered: {got:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
