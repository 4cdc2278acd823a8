//! Cross-site use of the session cookie (CVE-2024-22424, issue #26 item 4) and the headers
//! against framing (issue #35 item 6), on a real server: API writes with a body of another
//! content type than `server.api.content.types` are refused with Argo's 415; writes the cookie
//! authenticates from another origin are refused with 403; nothing is synced by either; bearer
//! tokens, the server's own origin and webhooks keep working.

use reqwest::Method;
use serde_json::{Value, json};

use crate::auth::app;
use crate::authn::AuthStack;

/// A request with the admin's session cookie (as a browser sends it), `content_type` and
/// `origin` when given.
async fn with_cookie(
    s: &AuthStack,
    cookie: &str,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    origin: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut req = s
        .http
        .request(method, format!("{}{path}", s.base))
        .header("cookie", format!("argocd.token={cookie}"))
        .body(body.to_string());
    if let Some(t) = content_type {
        req = req.header("content-type", t);
    }
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    let resp = req.send().await.expect("request");
    (
        resp.status().as_u16(),
        resp.text().await.unwrap_or_default(),
    )
}

/// Whether an operation was requested on the Application.
async fn operation(s: &AuthStack, token: &str, name: &str) -> Value {
    let (code, app) = s.get(&format!("/api/v1/applications/{name}"), token).await;
    assert_eq!(code, 200, "{app}");
    app["operation"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_site_writes_with_the_session_cookie_are_refused() {
    let mut s = AuthStack::start("csrf", Default::default()).await;
    let admin = s.admin_token().await;
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&app("web", "default")),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let sync = "/api/v1/applications/web/sync";
    let prune = r#"{"prune": true}"#;

    // What a form on a sibling subdomain can send: text/plain or form bodies, the cookie
    // attached. Argo's 415, and nothing synced.
    for (what, content_type, body) in [
        ("text/plain", Some("text/plain"), prune),
        (
            "text/plain with charset",
            Some("text/plain; charset=utf-8"),
            prune,
        ),
        (
            "form",
            Some("application/x-www-form-urlencoded"),
            "prune=true",
        ),
        ("empty form", Some("application/x-www-form-urlencoded"), ""),
        (
            "multipart",
            Some("multipart/form-data; boundary=x"),
            "--x--",
        ),
        ("no content type", None, prune),
    ] {
        let (code, text) =
            with_cookie(&s, &admin, Method::POST, sync, content_type, None, body).await;
        assert_eq!(
            (code, text.as_str()),
            (415, "Invalid content type\n"),
            "{what}"
        );
    }
    assert_eq!(operation(&s, &admin, "web").await, Value::Null);

    // JSON from another origin with the cookie (a page that got past the content type, or a
    // body-less request): 403, nothing synced.
    for origin in [
        "https://x.localhost",
        "http://localhost",
        "https://evil.example",
        "null",
    ] {
        let (code, text) = with_cookie(
            &s,
            &admin,
            Method::POST,
            sync,
            Some("application/json"),
            Some(origin),
            prune,
        )
        .await;
        assert_eq!(code, 403, "{origin}: {text}");
        assert!(text.contains("not this server's origin"), "{text}");
        let (code, _) = with_cookie(&s, &admin, Method::POST, sync, None, Some(origin), "").await;
        assert_eq!(code, 403, "{origin}, no body");
    }
    let logout = s
        .http
        .request(Method::DELETE, format!("{}/api/v1/session", s.base))
        .header("cookie", format!("argocd.token={admin}"))
        .header("origin", "https://x.localhost")
        .send()
        .await
        .expect("logout");
    assert_eq!(logout.status().as_u16(), 403, "cross-site logout");
    assert_eq!(operation(&s, &admin, "web").await, Value::Null);

    // A bearer token is never attached by a browser: JSON with it works from anywhere.
    let resp = s
        .http
        .post(format!("{}{sync}", s.base))
        .bearer_auth(&admin)
        .header("origin", "https://evil.example")
        .header("content-type", "application/json")
        .body(r#"{"dryRun": true}"#)
        .send()
        .await
        .expect("sync");
    assert_eq!(resp.status().as_u16(), 200);
    // Bearer tokens with a non-JSON body are refused too (Argo's check is on the body).
    let resp = s
        .http
        .post(format!("{}{sync}", s.base))
        .bearer_auth(&admin)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .expect("sync");
    assert_eq!(resp.status().as_u16(), 415);
    assert_ne!(operation(&s, &admin, "web").await, Value::Null);
    // The server's own origin (the web UI) with the cookie works, and so does argocd-cm's url.
    let own = s.origin().to_string();
    let patch = |label: &str| {
        json!({"patchType": "merge", "patch": json!({"metadata": {"labels": {"via": label}}}).to_string()})
            .to_string()
    };
    let web = "/api/v1/applications/web";
    let (code, text) = with_cookie(
        &s,
        &admin,
        Method::PATCH,
        web,
        Some("application/json"),
        Some(&own),
        &patch("own-origin"),
    )
    .await;
    assert_eq!(code, 200, "{text}");
    s.set_config_map("argocd-cm", &[("url", "https://cd.example.com/argocd")])
        .await;
    let (code, text) = with_cookie(
        &s,
        &admin,
        Method::PATCH,
        web,
        Some("application/json"),
        Some("https://cd.example.com"),
        &patch("url"),
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let (_, patched) = s.get(web, &admin).await;
    assert_eq!(patched["metadata"]["labels"]["via"], "url");

    // Webhooks take the content types Git providers send.
    let resp = s
        .http
        .post(format!("{}/api/webhook", s.base))
        .header("x-github-event", "ping")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("payload=%7B%7D")
        .send()
        .await
        .expect("webhook");
    assert_eq!(resp.status().as_u16(), 200);

    // An empty server.api.content.types disables the check, as Argo's (read at start).
    s.set_config_map("argocd-cmd-params-cm", &[("server.api.content.types", "")])
        .await;
    s.restart().await;
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&app("other", "default")),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let resp = s
        .http
        .post(format!("{}/api/v1/applications/other/sync", s.base))
        .bearer_auth(&admin)
        .header("content-type", "text/plain")
        .body(r#"{"dryRun": true}"#)
        .send()
        .await
        .expect("sync");
    assert_eq!(resp.status().as_u16(), 200);
    assert_ne!(operation(&s, &admin, "other").await, Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_forbids_framing_by_other_sites() {
    let s = AuthStack::start("frame-headers", Default::default()).await;
    let admin = s.admin_token().await;
    let cases = [
        (Method::GET, "/", None, None),
        (Method::GET, "/applications/argocd/web", None, None),
        (Method::GET, "/api/version", None, None),
        (
            Method::GET,
            "/api/v1/applications",
            Some(admin.as_str()),
            None,
        ),
        (Method::GET, "/api/v1/applications", None, None),
        (Method::GET, "/api/v1/nothing", Some(admin.as_str()), None),
        (Method::POST, "/api/v1/session", None, Some("text/plain")),
    ];
    for (method, path, token, content_type) in cases {
        let mut req = s.http.request(method.clone(), format!("{}{path}", s.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(c) = content_type {
            req = req.header("content-type", c).body(json!({}).to_string());
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let h = resp.headers();
        let header = |name: &str| {
            h.get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(
            header("x-frame-options"),
            "sameorigin",
            "{method} {path} ({status})"
        );
        assert_eq!(
            header("content-security-policy"),
            "frame-ancestors 'self';",
            "{method} {path} ({status})"
        );
        assert_eq!(
            header("x-content-type-options"),
            "nosniff",
            "{method} {path}"
        );
    }
}
