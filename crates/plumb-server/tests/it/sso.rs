//! Single sign-on against the real Dex (built by `scripts/dex build`, run here on loopback with
//! the configuration Plumb generates from `dex.config`, proxied at `/api/dex`): authorization
//! code logins through Dex's own pages (its mockCallback connector, which returns the group
//! `authors`, and its password database), groups, subjects and project roles deciding RBAC,
//! and refused tokens and callbacks. Then bad `oidc.config` input: unparsable, an issuer that is
//! down, one that never answers, and one whose key set has no usable key.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use plumb_app::appproject_resource;
use plumb_server::ThrottleConfig;
use reqwest::Method;
use serde_json::{Value, json};

use plumb_testenv::dex::{Browser, Dex, LOCAL_USER_ID, PASSWORD_HASH, enc, form, free_port};

use crate::authn::{AuthStack, claims};

/// A browser trusting the stack's server.
pub(crate) fn new_browser(s: &AuthStack) -> Browser {
    Browser::new(&s.base, Some(&s.pem))
}

/// The mockCallback connector's user.
const MOCK_USER_ID: &str = "0-385-28089-0";

fn dex_config_text() -> String {
    format!(
        "connectors:\n- type: mockCallback\n  id: mock\n  name: Example\n\
         enablePasswordDB: true\n\
         staticPasswords:\n- email: admin@example.com\n  hash: \"{PASSWORD_HASH}\"\n  username: admin\n  userID: {LOCAL_USER_ID}\n\
         staticClients:\n- id: other-app\n  name: Other\n  secret: other-secret\n  redirectURIs: ['http://127.0.0.1:9/cb']\n"
    )
}

/// Dex with the configuration Plumb generates from the namespace's argocd-cm and argocd-secret.
pub(crate) async fn start_dex(s: &AuthStack, port: u16) -> Dex {
    let cms: Api<ConfigMap> = Api::namespaced(s.client.clone(), s.ns.name());
    let cm = cms
        .get("argocd-cm")
        .await
        .expect("argocd-cm")
        .data
        .unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let secret: BTreeMap<String, Vec<u8>> = secrets
        .get("argocd-secret")
        .await
        .expect("argocd-secret")
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    let yaml = plumb_server::generate_dex_config(&cm, &secret, &format!("127.0.0.1:{port}"))
        .expect("dex config")
        .expect("dex configured");
    let discovery = format!("http://127.0.0.1:{port}/api/dex/.well-known/openid-configuration");
    Dex::start(&yaml, &discovery).await
}

/// A full login through `/auth/login`: (the callback URL, the session token).
pub(crate) async fn sso_login(
    s: &AuthStack,
    b: &mut Browser,
    connector: &str,
    login: (&str, &str),
) -> (String, String) {
    let start = b
        .get(&format!(
            "{}/auth/login?return_url={}",
            s.base,
            enc(&format!("{}/applications", s.base))
        ))
        .await;
    assert_eq!(start.status, 303, "{}", start.body);
    assert!(b.cookies.contains_key("argocd.oauthstate"));
    let to_dex = start.location.expect("location");
    assert!(
        to_dex.starts_with(&format!("{}/api/dex/auth?", s.base)),
        "{to_dex}"
    );
    for p in [
        "code_challenge=",
        "code_challenge_method=S256",
        "nonce=",
        "state=",
        "federated%3Aid",
    ] {
        assert!(to_dex.contains(p), "{p} in {to_dex}");
    }
    let callback = b
        .follow_to(
            to_dex,
            &format!("{}/auth/callback", s.base),
            connector,
            login,
        )
        .await;
    let done = b.get(&callback).await;
    assert_eq!(done.status, 303, "{}: {callback}", done.body);
    assert_eq!(
        done.location.as_deref(),
        Some(format!("{}/applications", s.base).as_str())
    );
    assert!(
        !b.cookies.contains_key("argocd.oauthstate"),
        "the state cookie is cleared"
    );
    let token = b
        .cookies
        .get("argocd.token")
        .expect("session cookie")
        .clone();
    (callback, token)
}

async fn can_i(s: &AuthStack, token: &str, what: &str) -> String {
    let (code, body) = s.get(&format!("/api/v1/account/can-i/{what}"), token).await;
    assert_eq!(code, 200, "{what}: {body}");
    body["value"].as_str().expect("value").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dex_logins_groups_and_refused_tokens() {
    let port = free_port();
    let s = AuthStack::start_tuned("sso-dex", ThrottleConfig::default(), |c| {
        c.dex_server = format!("http://127.0.0.1:{port}");
    })
    .await;
    s.set_config_map(
        "argocd-cm",
        &[("url", &s.base), ("dex.config", &dex_config_text())],
    )
    .await;
    let _dex = start_dex(&s, port).await;
    let issuer = format!("{}/api/dex", s.base);

    let (code, settings) = s.call(Method::GET, "/api/v1/settings", None, None).await;
    assert_eq!(code, 200);
    assert_eq!(
        settings["dexConfig"],
        json!({"connectors": [{"name": "Example", "type": "mockCallback"}]})
    );
    assert!(settings.get("ssoUnavailable").is_none(), "{settings}");

    // The mock connector's user, in the group `authors`.
    let mut browser = new_browser(&s);
    let (callback, author) = sso_login(&s, &mut browser, "mock", ("", "")).await;
    let c = claims(&author);
    assert_eq!(c["iss"], issuer.as_str());
    assert_eq!(c["aud"], "argo-cd");
    assert_eq!(c["groups"], json!(["authors"]));
    // The cookie is the session, as the UI uses it.
    let info = browser
        .get(&format!("{}/api/v1/session/userinfo", s.base))
        .await;
    let info: Value = serde_json::from_str(&info.body).expect("json");
    assert_eq!(
        info,
        json!({"loggedIn": true, "username": MOCK_USER_ID, "iss": issuer, "groups": ["authors"]})
    );

    // A callback replayed: without the (cleared) state cookie, and with it.
    let replay = browser.get(&callback).await;
    assert_eq!(replay.status, 400);
    assert!(replay.body.contains("argocd.oauthstate"), "{}", replay.body);

    // Groups and subjects decide (Argo's scopes: groups, then email once listed).
    s.set_policy(
        &format!("g, authors, role:readonly\np, {LOCAL_USER_ID}, clusters, get, *, allow\ng, admin@example.com, role:admin\n"),
        "",
    )
    .await;
    let mut other = new_browser(&s);
    let (_, local) = sso_login(&s, &mut other, "local", ("admin@example.com", "password")).await;
    assert_eq!(claims(&local)["federated_claims"]["user_id"], LOCAL_USER_ID);
    assert_eq!(s.get("/api/v1/projects/default", &author).await.0, 200);
    assert_eq!(s.get("/api/v1/projects/default", &local).await.0, 403);
    assert_eq!(can_i(&s, &author, "projects/create/x").await, "no");
    assert_eq!(can_i(&s, &local, "clusters/get/https:%2F%2Fx").await, "yes");
    assert_eq!(can_i(&s, &local, "projects/create/x").await, "no");

    // A project role granted to the group.
    let projects: Api<DynamicObject> =
        Api::namespaced_with(s.client.clone(), s.ns.name(), &appproject_resource());
    projects
        .patch(
            "default",
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"spec": {"roles": [{"name": "deployer", "groups": ["authors"],
                "policies": ["p, proj:default:deployer, applications, sync, default/*, allow"]}]}}),
            ),
        )
        .await
        .expect("patch project");
    assert_eq!(
        can_i(&s, &author, "applications/sync/default%2Fweb").await,
        "yes"
    );
    assert_eq!(
        can_i(&s, &local, "applications/sync/default%2Fweb").await,
        "no"
    );

    s.set_config_map("argocd-rbac-cm", &[("scopes", "[groups, email]")])
        .await;
    assert_eq!(can_i(&s, &local, "projects/create/x").await, "yes");
    refused_tokens(&s, &author).await;
    let (code, body) = s
        .call(
            Method::GET,
            "/api/v1/applications",
            Some(&other_audience_token(&s).await),
            None,
        )
        .await;
    assert_eq!(code, 401, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("audience"),
        "{body}"
    );

    // Open redirects are refused before anything else.
    let evil = browser
        .get(&format!(
            "{}/auth/login?return_url={}",
            s.base,
            enc("https://evil.example.com/")
        ))
        .await;
    assert_eq!(evil.status, 400);
    assert!(
        evil.body.starts_with("Invalid redirect URL"),
        "{}",
        evil.body
    );

    // Logging out clears the cookie and leaves the session of the other browser alone.
    let out = browser.get(&format!("{}/auth/logout", s.base)).await;
    assert_eq!(out.status, 303);
    assert!(!browser.cookies.contains_key("argocd.token"));
}

/// Tampered, foreign-key, unknown-key, unsigned and HMAC-signed tokens are refused with
/// Argo's message. The HMAC one is signed with the server's real Dex client secret: algorithms
/// are pinned to the provider's asymmetric ones.
async fn refused_tokens(s: &AuthStack, good: &str) {
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let data = secrets
        .get("argocd-secret")
        .await
        .expect("secret")
        .data
        .expect("data");
    let digest = <sha2::Sha256 as sha2::Digest>::digest(&data["server.secretkey"].0);
    let mut client_secret = base64::engine::general_purpose::URL_SAFE.encode(digest);
    client_secret.truncate(40);
    let parts: Vec<&str> = good.split('.').collect();
    let mut payload = claims(good);
    payload["groups"] = json!(["authors", "admins"]);
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let tampered = format!("{}.{}.{}", parts[0], b64(&payload), parts[2]);
    let header: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[0])
            .expect("header"),
    )
    .expect("header json");
    let kid = header["kid"].as_str().expect("kid").to_string();
    let key = other_rsa_key();
    let sign = |kid: &str| {
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        h.kid = Some(kid.to_string());
        jsonwebtoken::encode(&h, &payload, &key).expect("sign")
    };
    let mut hs = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    hs.kid = Some(kid.clone());
    let hmac = jsonwebtoken::encode(
        &hs,
        &payload,
        &jsonwebtoken::EncodingKey::from_secret(client_secret.as_bytes()),
    )
    .expect("hs256");
    let unsigned = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "kid": kid})),
        b64(&payload)
    );
    for (what, token, needle) in [
        (
            "HS256 with the client secret",
            hmac,
            "failed to verify the token",
        ),
        ("alg none", unsigned, "failed to verify the token"),
        ("tampered", tampered, "failed to verify the token"),
        (
            "another key, Dex's kid",
            sign(&kid),
            "failed to verify the token",
        ),
        ("an unknown kid", sign("not-a-dex-key"), "does not publish"),
    ] {
        let (code, body) = s
            .call(Method::GET, "/api/v1/applications", Some(&token), None)
            .await;
        assert_eq!(code, 401, "{what}: {body}");
        let msg = body["message"].as_str().unwrap_or_default();
        assert!(msg.contains(needle), "{what}: {msg}");
        assert!(!msg.contains(&token), "{what}: the token is not echoed");
    }
}

/// An RSA key Dex never saw (openssl, as an operator would make one).
pub(crate) fn other_rsa_key() -> jsonwebtoken::EncodingKey {
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "openssl genrsa 2048 2>/dev/null | openssl rsa -traditional -outform DER",
        ])
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    jsonwebtoken::EncodingKey::from_rsa_der(&out.stdout)
}

/// An ID token Dex issued to another of its clients (audience `other-app`).
async fn other_audience_token(s: &AuthStack) -> String {
    let mut b = new_browser(s);
    let start = format!(
        "{}/api/dex/auth?client_id=other-app&redirect_uri={}&response_type=code&scope=openid+groups&state=x",
        s.base,
        enc("http://127.0.0.1:9/cb")
    );
    let cb = b
        .follow_to(start, "http://127.0.0.1:9/cb", "mock", ("", ""))
        .await;
    let code = url::Url::parse(&cb)
        .expect("url")
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.to_string())
        .expect("code");
    let resp = b
        .http
        .post(format!("{}/api/dex/token", s.base))
        .basic_auth("other-app", Some("other-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "http://127.0.0.1:9/cb"),
        ]))
        .send()
        .await
        .expect("token");
    let body: Value = serde_json::from_str(&resp.text().await.expect("body")).expect("json");
    body["id_token"].as_str().expect("id_token").to_string()
}

/// An issuer for the bad-input cases: discovery naming a key set with only an encryption key,
/// and, under `/slow`, an issuer that never answers.
async fn bad_issuer() -> String {
    use axum::routing::get;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let b = base.clone();
    let app = axum::Router::new()
        .route(
            "/nokeys/.well-known/openid-configuration",
            get(move || {
                let b = b.clone();
                async move {
                axum::Json(json!({
                    "issuer": format!("{b}/nokeys"),
                    "authorization_endpoint": format!("{b}/nokeys/auth"),
                    "token_endpoint": format!("{b}/nokeys/token"),
                    "jwks_uri": format!("{b}/nokeys/keys"),
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["RS256"],
                }))
                }
            }),
        )
        .route(
            "/nokeys/keys",
            get(|| async {
                axum::Json(json!({"keys": [{"kty": "RSA", "use": "enc", "kid": "e", "n": "sXch", "e": "AQAB"}]}))
            }),
        )
        .route(
            "/slow/.well-known/openid-configuration",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "never"
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_oidc_configurations_leave_local_accounts_working() {
    let s = AuthStack::start_tuned("sso-bad", ThrottleConfig::default(), |c| {
        c.limits.request_timeout = Duration::from_secs(6);
    })
    .await;
    const SECRET: &str = "TOPSECRET-client-value";
    s.set_secret(&[("oidc.client.secret", SECRET)]).await;
    let issuer = bad_issuer().await;
    let down = format!("http://127.0.0.1:{}", free_port());
    let oidc = |issuer: &str| {
        format!(
            "name: Corp\nissuer: {issuer}\nclientID: plumb\nclientSecret: $oidc.client.secret\n"
        )
    };
    for (what, config, needle) in [
        (
            "unparsable",
            "issuer: [unclosed\n".to_string(),
            "oidc.config",
        ),
        (
            "no issuer",
            "clientID: plumb\n".to_string(),
            "issuer is required",
        ),
        ("issuer down", oidc(&down), "discovery"),
        (
            "issuer never answers",
            oidc(&format!("{issuer}/slow")),
            "did not answer within 2s",
        ),
        (
            "no usable key",
            oidc(&format!("{issuer}/nokeys")),
            "no key usable",
        ),
    ] {
        s.set_config_map("argocd-cm", &[("url", &s.base), ("oidc.config", &config)])
            .await;
        let (code, settings) = s.call(Method::GET, "/api/v1/settings", None, None).await;
        assert_eq!(code, 200, "{what}: {settings}");
        let why = settings["ssoUnavailable"].as_str().unwrap_or_default();
        assert!(why.contains(needle), "{what}: {settings}");
        let resp = s
            .http
            .get(format!("{}/auth/login", s.base))
            .send()
            .await
            .expect("login");
        assert_eq!(resp.status(), 503, "{what}");
        let page = resp.text().await.expect("text");
        assert!(
            page.starts_with("single sign-on is unavailable") && page.contains(needle),
            "{what}: {page}"
        );
        for text in [settings.to_string(), page] {
            assert!(
                !text.contains(SECRET),
                "{what}: the client secret leaked: {text}"
            );
        }
        // Local accounts do not depend on the provider.
        let admin = s.admin_token().await;
        assert_eq!(
            s.get("/api/v1/session/userinfo", &admin).await.1["username"],
            "admin"
        );
    }
    // The working shape is shown as Argo shows it, without the secret.
    s.set_config_map(
        "argocd-cm",
        &[(
            "oidc.config",
            &format!("{}requestedScopes: [openid, groups]\n", oidc(&down)),
        )],
    )
    .await;
    let (_, settings) = s.call(Method::GET, "/api/v1/settings", None, None).await;
    assert_eq!(
        settings["oidcConfig"],
        json!({"name": "Corp", "issuer": down, "clientID": "plumb", "scopes": ["openid", "groups"]})
    );
    assert!(!settings.to_string().contains(SECRET));
    // Anonymous access, when enabled, gets policy.default only.
    assert_eq!(
        s.call(Method::GET, "/api/v1/projects/default", None, None)
            .await
            .0,
        401
    );
    s.set_config_map("argocd-cm", &[("users.anonymous.enabled", "true")])
        .await;
    s.set_policy("", "role:readonly").await;
    assert_eq!(
        s.call(Method::GET, "/api/v1/projects/default", None, None)
            .await
            .0,
        200
    );
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects",
            None,
            Some(&json!({"project": {"metadata": {"name": "sso-anon"}, "spec": {}}})),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    // An organisation on SSO only turns the built-in admin off.
    let password = s.admin_password().await;
    s.set_config_map("argocd-cm", &[("admin.enabled", "false")])
        .await;
    let (code, body) = s.try_login("admin", &password).await;
    assert_eq!(code, 401, "{body}");
    assert_eq!(body["message"], "Account admin is disabled");
}
