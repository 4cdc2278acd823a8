//! The webhook service against a real HTTP receiver on loopback: request shape (method, path,
//! body, headers, basic auth), go-retryablehttp's retries, and errors that keep secrets out.

mod common;

use std::collections::BTreeMap;

use base64::Engine as _;
use plumb_notifications::{
    Config, Destination, Engine, Templates, WebhookOptions, WebhookService, template_data,
};
use serde_json::json;

fn service(url: &str, extra: serde_json::Value) -> WebhookService {
    let mut options = json!({"url": url, "retryWaitMin": 1_000_000, "retryWaitMax": "20ms"});
    for (k, v) in extra.as_object().expect("object") {
        options[k] = v.clone();
    }
    WebhookService::new(
        "hook",
        WebhookOptions::parse("hook", &options).expect("options"),
    )
    .expect("service")
}

#[tokio::test]
async fn sends_argos_request_with_headers_and_basic_auth() {
    let rx = common::Receiver::start().await;
    // Through the configuration path: `$secret` references resolved from the Secret.
    let cm = BTreeMap::from([
        (
            "service.webhook.hook".to_string(),
            format!(
                "url: {}/base/\nheaders:\n- name: X-Token\n  value: $token\n- name: Content-Type\n  value: application/json\nbasicAuth:\n  username: argo\n  password: $password\n",
                rx.url
            ),
        ),
        (
            "template.t".to_string(),
            "message: plain\nwebhook:\n  hook:\n    method: POST\n    path: /apps/{{.app.metadata.name}}\n    body: |\n      {\"app\": \"{{.app.metadata.name}}\", \"to\": \"{{.recipient}}\"}\n".to_string(),
        ),
    ]);
    let secret = BTreeMap::from([
        ("token".to_string(), b"t0k3n".to_vec()),
        ("password".to_string(), b"pa55".to_vec()),
    ]);
    let (cfg, errors) = Config::parse(&cm, &secret);
    assert!(errors.is_empty(), "{errors:?}");
    let engine = Engine::new(cfg.clone(), Vec::new());
    assert!(engine.errors.is_empty(), "{:?}", engine.errors);
    let opts = WebhookOptions::parse("hook", &cfg.services["hook"].options).expect("options");
    let svc = WebhookService::new("hook", opts).expect("service");
    let app = json!({"metadata": {"name": "guestbook"}});
    let data = template_data(&app, &json!({}), &cfg.context, &cfg.secrets, "hook", "r1");
    let n = engine
        .templates
        .render(&["t".to_string()], &data)
        .expect("render");
    let dest = Destination {
        service: "hook".into(),
        recipient: "r1".into(),
    };
    svc.send(&n, &dest).await.expect("sent");
    let got = rx.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].method, "POST");
    assert_eq!(got[0].path, "/base/apps/guestbook");
    assert_eq!(got[0].body, "{\"app\": \"guestbook\", \"to\": \"r1\"}\n");
    assert_eq!(got[0].headers["x-token"], "t0k3n");
    assert_eq!(got[0].headers["content-type"], "application/json");
    let basic = base64::engine::general_purpose::STANDARD.encode("argo:pa55");
    assert_eq!(
        got[0].headers["authorization"],
        format!("Basic {basic}").as_str()
    );

    // Without a webhook section for the service: GET with the message as body.
    let (t, _) = Templates::compile(&BTreeMap::from([(
        "m".to_string(),
        json!({"message": "hello"}),
    )]));
    let n = t.render(&["m".to_string()], &data).expect("render");
    svc.send(&n, &dest).await.expect("sent");
    let got = rx.received();
    assert_eq!(
        (
            got[1].method.as_str(),
            got[1].path.as_str(),
            got[1].body.as_str()
        ),
        ("GET", "/base/", "hello")
    );
}

#[tokio::test]
async fn retries_5xx_and_429_then_succeeds() {
    let rx = common::Receiver::start().await;
    rx.answer(&[500, 429, 503]);
    let svc = service(&rx.url, json!({"retryMax": 3}));
    let n = plumb_notifications::Notification {
        message: "m".into(),
        ..Default::default()
    };
    let dest = Destination {
        service: "hook".into(),
        recipient: String::new(),
    };
    svc.send(&n, &dest)
        .await
        .expect("delivered on the fourth attempt");
    assert_eq!(rx.received().len(), 4);
}

#[tokio::test]
async fn gives_up_after_retry_max_and_does_not_retry_4xx() {
    let rx = common::Receiver::start().await;
    rx.answer(&[502, 502, 502]);
    let svc = service(
        &format!("{}/secret-path-s3cr3t?key=s3cr3t", rx.url),
        json!({"retryMax": 2}),
    );
    let n = plumb_notifications::Notification {
        message: "m".into(),
        ..Default::default()
    };
    let dest = Destination {
        service: "hook".into(),
        recipient: String::new(),
    };
    let err = svc.send(&n, &dest).await.expect_err("fails").to_string();
    assert_eq!(rx.received().len(), 3);
    assert!(
        err.starts_with("service hook: GET 127.0.0.1 giving up after 3 attempt(s)"),
        "{err}"
    );
    assert!(!err.contains("s3cr3t"), "{err}");

    rx.answer(&[404, 501]);
    let err = svc.send(&n, &dest).await.expect_err("404").to_string();
    assert!(err.contains("failed with error code 404"), "{err}");
    let err = svc.send(&n, &dest).await.expect_err("501").to_string();
    assert!(err.contains("failed with error code 501"), "{err}");
    assert_eq!(rx.received().len(), 5);
}

#[tokio::test]
async fn connection_refused_is_retried_and_reported_without_the_url() {
    // A port nothing listens on: bind, note, drop.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let svc = service(
        &format!("http://127.0.0.1:{port}/hooks/s3cr3t"),
        json!({"retryMax": 1}),
    );
    let n = plumb_notifications::Notification::default();
    let dest = Destination {
        service: "hook".into(),
        recipient: String::new(),
    };
    let err = svc.send(&n, &dest).await.expect_err("refused").to_string();
    assert!(err.contains("giving up after 2 attempt(s)"), "{err}");
    assert!(!err.contains("s3cr3t"), "{err}");
}

#[test]
fn backoff_as_go_retryablehttp() {
    let opts = WebhookOptions::parse("hook", &json!({"url": "http://x"})).expect("defaults");
    assert_eq!(
        (
            opts.retry_max,
            opts.retry_wait_min.as_secs(),
            opts.retry_wait_max.as_secs()
        ),
        (3, 1, 5)
    );
    let svc = WebhookService::new("hook", opts).expect("service");
    let secs: Vec<u64> = (0..5).map(|a| svc.backoff(a, None).as_secs()).collect();
    assert_eq!(secs, [1, 2, 4, 5, 5]);
    assert_eq!(
        svc.backoff(0, Some(std::time::Duration::from_secs(3600)))
            .as_secs(),
        5
    );
    let bad = WebhookOptions::parse("hook", &json!({"url": "http://x", "retryWaitMin": "soon"}));
    assert!(
        bad.err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .starts_with("service hook: retryWaitMin")
    );
    assert!(WebhookOptions::parse("hook", &json!({"url": "not a url"})).is_err());
}
