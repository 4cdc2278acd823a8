//! The server's renewal of browser sessions (Argo's `refreshTokenThreshold`) against the real
//! Dex used directly (`oidc.config`, `offline_access`), its ID tokens living a few seconds and
//! its state in the test's namespace (Dex's kubernetes storage; its memory storage deadlocks on
//! a refresh at the pinned commit). The refresh tokens are kept by the server, sealed, in the
//! Secret `plumb-sso-sessions`, so a second server over the same namespace continues a session
//! the first started; a session whose refresh token is gone, or whose refresh the provider
//! refuses, ends with a 401 that says why; a logged-out cookie stays refused; a tampered or
//! foreign expired token never renews anything.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams};
use plumb_server::ThrottleConfig;
use plumb_testenv::dex::{Dex, LOCAL_USER_ID, PASSWORD_HASH, free_port};
use serde_json::{Value, json};

use crate::authn::{AuthStack, claims};
use crate::sso::new_browser;
use crate::sso_gaps::direct_login;
use crate::support::env;

const ID_TOKEN_LIFETIME_SECS: i64 = 4;
/// The server accepts tokens this long past their expiry (its clock-skew bound).
const CLOCK_SKEW_SECS: i64 = 30;
const OTHER_USER: (&str, &str) = ("other@example.com", "password");

fn dex_yaml(port: u16, base: &str, kubeconfig: &Path) -> String {
    format!(
        "issuer: http://127.0.0.1:{port}/dex\nstorage: {{type: kubernetes, config: {{kubeConfigFile: '{}'}}}}\n\
         web: {{http: '127.0.0.1:{port}'}}\nexpiry: {{idTokens: '{ID_TOKEN_LIFETIME_SECS}s'}}\n\
         oauth2: {{skipApprovalScreen: true}}\n\
         connectors:\n- type: mockCallback\n  id: mock\n  name: Example\nenablePasswordDB: true\n\
         staticPasswords:\n- email: admin@example.com\n  hash: \"{PASSWORD_HASH}\"\n  username: admin\n  userID: {LOCAL_USER_ID}\n\
         - email: {}\n  hash: \"{PASSWORD_HASH}\"\n  username: other\n  userID: ssorefresh-other\n\
         staticClients:\n- id: plumb-direct\n  name: Plumb\n  secret: direct-secret\n  redirectURIs: ['{base}/auth/callback']\n",
        kubeconfig.display(),
        OTHER_USER.0
    )
}

/// The test cluster's kubeconfig with `ns` as the namespace (where Dex keeps its objects).
fn dex_kubeconfig(ns: &str, path: &Path) {
    let out = env()
        .kubectl()
        .args([
            "config",
            "view",
            "--raw",
            "--minify",
            "--flatten",
            "-o",
            "json",
        ])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut cfg: Value = serde_json::from_slice(&out.stdout).expect("kubeconfig");
    cfg["contexts"][0]["context"]["namespace"] = json!(ns);
    std::fs::write(path, cfg.to_string()).expect("write kubeconfig");
}

/// A request carrying `token` as the session cookie: (status, body, the new `argocd.token`).
async fn with_cookie(
    http: &reqwest::Client,
    base: &str,
    path: &str,
    token: &str,
) -> (u16, String, Option<String>) {
    let resp = http
        .get(format!("{base}{path}"))
        .header("cookie", format!("argocd.token={token}"))
        .send()
        .await
        .expect("request");
    let renewed = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| c.strip_prefix("argocd.token="))
        .map(|c| c.split(';').next().unwrap_or_default().to_string())
        .filter(|v| !v.is_empty());
    let status = resp.status().as_u16();
    (status, resp.text().await.expect("body"), renewed)
}

/// Waits until `token` is past its expiry and the server's clock skew.
async fn outlive(token: &str) {
    let exp = claims(token)["exp"].as_i64().expect("exp");
    let wait = exp + CLOCK_SKEW_SECS + 2 - jiff::Timestamp::now().as_second();
    if wait > 0 {
        tokio::time::sleep(Duration::from_secs(wait.unsigned_abs())).await;
    }
}

/// Dex's refresh tokens in the namespace: (object name, the user's email, the token's secret).
fn dex_refresh_tokens(ns: &str) -> Vec<(String, String, String)> {
    let out = env()
        .kubectl()
        .args([
            "get",
            "refreshtokens.dex.coreos.com",
            "-n",
            ns,
            "-o",
            "json",
        ])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("json");
    list["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|i| {
            let s = |p: &str| {
                i.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            (s("/metadata/name"), s("/claims/email"), s("/token"))
        })
        .collect()
}

/// `token` with its signature's last characters changed.
fn tampered(token: &str) -> String {
    let mut t = token.to_string();
    let tail = if t.ends_with("AAAA") { "BBBB" } else { "AAAA" };
    t.replace_range(t.len() - 4.., tail);
    t
}

/// An expired token of the same issuer, audience and subject signed by another key.
fn foreign(token: &str) -> String {
    let claims = claims(token);
    let key = crate::sso::other_rsa_key();
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    h.kid = serde_json::from_slice::<Value>(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token.split('.').next().expect("header"))
            .expect("base64"),
    )
    .expect("json")["kid"]
        .as_str()
        .map(str::to_string);
    jsonwebtoken::encode(&h, &claims, &key).expect("sign")
}

// length: one session's story against one Dex and two servers, in the order the waits allow
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_sessions_are_renewed_by_the_server() {
    crate::logs::capture();
    let port = free_port();
    let s = AuthStack::start("sso-refresh", ThrottleConfig::default()).await;
    let ns = s.ns.name().to_string();
    s.set_secret(&[("oidc.direct.secret", "direct-secret")])
        .await;
    let oidc = format!(
        "name: Dex\nissuer: http://127.0.0.1:{port}/dex\nclientID: plumb-direct\nclientSecret: $oidc.direct.secret\n\
         requestedScopes: [openid, profile, email, groups, offline_access]\nrefreshTokenThreshold: 1h\n"
    );
    s.set_config_map("argocd-cm", &[("url", &s.base), ("oidc.config", &oidc)])
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    dex_kubeconfig(&ns, &kubeconfig);
    let dex = Dex::start(
        &dex_yaml(port, &s.base, &kubeconfig),
        &format!("http://127.0.0.1:{port}/dex/.well-known/openid-configuration"),
    )
    .await;

    // Three users log in; their refresh tokens are kept sealed, never in the clear.
    let mut author = new_browser(&s);
    let first = direct_login(&s, &mut author, "mock", ("", "")).await;
    let mut admin = new_browser(&s);
    let admin_token =
        direct_login(&s, &mut admin, "local", ("admin@example.com", "password")).await;
    let mut other = new_browser(&s);
    let other_token = direct_login(&s, &mut other, "local", OTHER_USER).await;
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), &ns);
    let stored = secrets
        .get("plumb-sso-sessions")
        .await
        .expect("the session store");
    let values: Vec<String> = stored
        .data
        .unwrap_or_default()
        .values()
        .map(|v| String::from_utf8_lossy(&v.0).into_owned())
        .collect();
    assert_eq!(values.len(), 3, "one entry per session");
    let dex_tokens = dex_refresh_tokens(&ns);
    assert!(dex_tokens.len() >= 3, "{dex_tokens:?}");
    for v in &values {
        for (_, _, secret) in &dex_tokens {
            assert!(
                !secret.is_empty() && !v.contains(secret.as_str()),
                "a refresh token in the clear"
            );
        }
        assert!(!v.contains("admin@example.com") && !v.contains(&first));
    }

    // Within refreshTokenThreshold (1h here, longer than the token lives): the first request
    // renews the session early and answers as the same user with a new cookie.
    let (code, body, renewed) =
        with_cookie(&s.http, &s.base, "/api/v1/session/userinfo", &first).await;
    assert_eq!(code, 200, "{body}");
    let early = renewed.expect("a renewed cookie");
    assert_ne!(early, first);
    assert_eq!(claims(&early)["sub"], claims(&first)["sub"]);
    assert!(claims(&early)["exp"].as_i64() >= claims(&first)["exp"].as_i64());
    let info: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(info["groups"], json!(["authors"]), "{info}");

    // Every token expires, beyond the clock skew. A second server over the same namespace
    // continues the session the first started, with a new cookie.
    outlive(&early).await;
    outlive(&admin_token).await;
    outlive(&other_token).await;
    let (second, second_base, second_http) = s.another_server().await;
    let (code, body, renewed) =
        with_cookie(&second_http, &second_base, "/api/v1/applications", &early).await;
    assert_eq!(code, 200, "{body}");
    let late = renewed.expect("the expired session renewed");
    assert!(claims(&late)["exp"].as_i64() > claims(&early)["exp"].as_i64());
    // The new cookie is a session on the first server too; as a bearer token, an expired
    // token is never renewed (the CLI renews its own).
    let (code, body, _) = with_cookie(&s.http, &s.base, "/api/v1/applications", &late).await;
    assert_eq!(code, 200, "{body}");
    let (code, _) = s.get("/api/v1/applications", &admin_token).await;
    assert_eq!(code, 401);

    // Hostile: a tampered expired token and a foreign-signed one (same issuer, subject and key
    // id) renew nothing.
    for bad in [tampered(&admin_token), foreign(&admin_token)] {
        let (code, body, renewed) =
            with_cookie(&s.http, &s.base, "/api/v1/applications", &bad).await;
        assert_eq!(code, 401, "{body}");
        assert!(renewed.is_none());
        assert!(body.contains("failed to verify the token"), "{body}");
        assert!(
            !body.contains(&bad[bad.len() - 20..]),
            "the token is not echoed"
        );
    }

    // The provider refuses the refresh (Dex forgot the user's refresh token): 401, saying so.
    for (name, email, _) in dex_refresh_tokens(&ns) {
        if email == "admin@example.com" {
            let out = env()
                .kubectl()
                .args(["delete", "refreshtokens.dex.coreos.com", &name, "-n", &ns])
                .output()
                .expect("kubectl");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let (code, body, renewed) =
        with_cookie(&s.http, &s.base, "/api/v1/applications", &admin_token).await;
    assert_eq!(code, 401, "{body}");
    assert!(renewed.is_none());
    assert!(body.contains("renewing its session failed"), "{body}");
    assert!(body.contains("log in again"), "{body}");

    // Logout: the cookie is cleared, and a copy of it is refused (revoked), expired copies too.
    author.cookies.insert("argocd.token".into(), late.clone());
    let out = author.get(&format!("{}/auth/logout", s.base)).await;
    assert_eq!(out.status, 303, "{}", out.body);
    let (code, body, _) = with_cookie(&s.http, &s.base, "/api/v1/applications", &late).await;
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("revoked"), "{body}");
    let (code, body, _) =
        with_cookie(&second_http, &second_base, "/api/v1/applications", &early).await;
    assert_eq!(code, 401, "{body}");

    // The store loses the session (its entry removed): 401, naming why.
    secrets
        .delete("plumb-sso-sessions", &DeleteParams::default())
        .await
        .expect("delete the store");
    let (code, body, renewed) =
        with_cookie(&s.http, &s.base, "/api/v1/applications", &other_token).await;
    assert_eq!(code, 401, "{body}");
    assert!(renewed.is_none());
    assert!(body.contains("no refresh token is kept"), "{body}");
    second.shutdown().await;
    drop(dex);

    // Nothing secret reached the logs (debug level): the client secret, the refresh tokens,
    // the ID tokens of every step.
    let logs = crate::logs::text();
    assert!(logs.contains("plumb_server"), "the capture works: {logs}");
    let mut secret: Vec<&str> = vec![
        "direct-secret",
        &first,
        &early,
        &late,
        &admin_token,
        &other_token,
    ];
    secret.extend(dex_tokens.iter().map(|(_, _, t)| t.as_str()));
    for s in secret {
        assert!(
            !logs.contains(s),
            "a secret in the logs: {}...",
            &s[..s.len().min(8)]
        );
    }
}
