//! Authentication end to end: the generated admin password, sessions, API keys, revocation,
//! disabled accounts, throttling, project role tokens, Kubernetes ServiceAccount tokens through
//! TokenReview, and forged, expired, unsigned and oversized tokens.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::api::{Api, DynamicObject, PostParams};
use plumb_app::appproject_resource;
use plumb_server::ThrottleConfig;
use reqwest::Method;
use serde_json::{Value, json};

use crate::authn::{AuthStack, claims};

fn lenient() -> ThrottleConfig {
    ThrottleConfig::default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_api_keys_and_revocation() {
    let s = AuthStack::start("auth-sessions", lenient()).await;

    // Public routes answer without a token; the rest need one (Argo's 401 and code 16).
    let (code, _) = s.call(Method::GET, "/api/version", None, None).await;
    assert_eq!(code, 200);
    let (code, body) = s
        .call(Method::GET, "/api/v1/applications", None, None)
        .await;
    assert_eq!((code, body["code"].as_i64()), (401, Some(16)), "{body}");
    assert_eq!(body["error"], "no session information");

    // The server generated a signing key and the admin password, as Argo does.
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let secret = secrets.get("argocd-secret").await.expect("argocd-secret");
    let data = secret.data.expect("data");
    assert!(data["server.secretkey"].0.len() >= 32);
    assert!(String::from_utf8_lossy(&data["admin.password"].0).starts_with("$2"));
    let admin = s.admin_token().await;
    let c = claims(&admin);
    assert_eq!(c["iss"], "argocd");
    assert_eq!(c["sub"], "admin:login");
    assert_eq!(c["jti"].as_str().map(str::len), Some(36));
    assert_eq!(
        c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(),
        24 * 3600
    );
    let (code, info) = s.get("/api/v1/session/userinfo", &admin).await;
    assert_eq!(code, 200);
    assert_eq!(
        info,
        json!({"loggedIn": true, "username": "admin", "iss": "argocd", "groups": []})
    );
    let (code, body) = s.try_login("admin", "wrong").await;
    assert_eq!(code, 401);
    assert_eq!(body["message"], "Invalid username or password");
    let (code, body) = s.try_login("nobody", "x").await;
    assert_eq!(
        (code, body["message"].as_str()),
        (401, Some("Invalid username or password"))
    );
    let (code, body) = s.try_login("admin", "").await;
    assert_eq!(
        (code, body["message"].as_str()),
        (401, Some("Blank passwords are not allowed"))
    );
    let (code, _) = s.try_login(&"u".repeat(33), "x").await;
    assert_eq!(code, 400);

    // Local accounts: capabilities decide what their tokens may be.
    s.add_account("alice", "apiKey, login", "alice-pw-1").await;
    s.add_account("ci", "apiKey", "ci-pw-1").await;
    let (code, body) = s.try_login("ci", "ci-pw-1").await;
    assert_eq!(code, 401, "{body}");
    assert_eq!(body["message"], "Account ci does not have login capability");
    let alice = s.login("alice", "alice-pw-1").await;
    assert_eq!(claims(&alice)["sub"], "alice:login");

    // API keys: created by admin for ci, listed, used, deleted (then refused at once).
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/account/ci/token",
            Some(&admin),
            Some(&json!({"expiresIn": "3600", "id": "deploy-key"})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let key = body["token"].as_str().expect("token").to_string();
    let c = claims(&key);
    assert_eq!(
        (c["sub"].as_str(), c["jti"].as_str()),
        (Some("ci:apiKey"), Some("deploy-key"))
    );
    assert_eq!(
        c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(),
        3600
    );
    let (code, account) = s.get("/api/v1/account/ci", &admin).await;
    assert_eq!(code, 200);
    assert_eq!(account["capabilities"], json!(["apiKey"]));
    assert_eq!(account["tokens"][0]["id"], "deploy-key");
    assert!(
        account.to_string().find("$2").is_none(),
        "no hash in {account}"
    );
    let (code, info) = s.get("/api/v1/session/userinfo", &key).await;
    assert_eq!((code, info["username"].as_str()), (200, Some("ci")));
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/account/ci/token",
            Some(&admin),
            Some(&json!({"id": "deploy-key"})),
        )
        .await;
    assert_eq!(code, 409, "a second token with the same id");
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/account/admin/token",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(code, 400, "admin has no apiKey capability: {body}");
    let (code, _) = s
        .call(
            Method::DELETE,
            "/api/v1/account/ci/token/deploy-key",
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(code, 200);
    let (code, body) = s.get("/api/v1/session/userinfo", &key).await;
    assert_eq!(
        body["loggedIn"], false,
        "userinfo is public; the key no longer counts: {code}"
    );
    let (code, body) = s.get("/api/v1/applications", &key).await;
    assert_eq!(code, 401);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("does not have token with id deploy-key"),
        "{body}"
    );

    // An account manages its own keys without any RBAC grant.
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/account/alice/token",
            Some(&alice),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/account/ci/token",
            Some(&alice),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 403, "alice may not create ci's keys");

    // Logout revokes the session.
    let alice2 = s.login("alice", "alice-pw-1").await;
    let (code, _) = s
        .call(Method::DELETE, "/api/v1/session", Some(&alice2), None)
        .await;
    assert_eq!(code, 200);
    let (code, body) = s.get("/api/v1/applications", &alice2).await;
    assert_eq!(code, 401);
    assert!(
        body["message"].as_str().unwrap().contains("revoked"),
        "{body}"
    );
    let (code, _) = s.get("/api/v1/applications", &alice).await;
    assert_eq!(code, 200, "other sessions stay valid");

    // A password change invalidates sessions issued before it.
    s.set_secret(&[("accounts.alice.passwordMtime", "2999-01-01T00:00:00Z")])
        .await;
    let (code, body) = s.get("/api/v1/applications", &alice).await;
    assert_eq!(code, 401);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("password has changed"),
        "{body}"
    );
    s.set_secret(&[("accounts.alice.passwordMtime", "2001-01-01T00:00:00Z")])
        .await;

    // Disabling an account stops its sessions and logins.
    s.set_config_map("argocd-cm", &[("accounts.alice.enabled", "false")])
        .await;
    let (code, _) = s.get("/api/v1/applications", &alice).await;
    assert_eq!(code, 401);
    let (code, body) = s.try_login("alice", "alice-pw-1").await;
    assert_eq!(
        (code, body["message"].as_str()),
        (401, Some("Account alice is disabled"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_logins_are_throttled_per_user() {
    let s = AuthStack::start(
        "auth-throttle",
        ThrottleConfig {
            max_failures: 3,
            window: Duration::from_secs(300),
            max_entries: 100,
        },
    )
    .await;
    s.add_account("bob", "login", "bob-pw").await;
    s.add_account("carol", "login", "carol-pw").await;
    for _ in 0..3 {
        let (code, _) = s.try_login("bob", "guess").await;
        assert_eq!(code, 401);
    }
    // Now even the right password is refused for bob, with the same answer.
    let (code, body) = s.try_login("bob", "bob-pw").await;
    assert_eq!(
        (code, body["message"].as_str()),
        (401, Some("Invalid username or password"))
    );
    // Other users are not affected.
    s.login("carol", "carol-pw").await;
}

/// GHSA-4439-h7jw-5cjj (issue #35 item 2): parallel guesses used to pass the failure limit
/// before any of them was counted. However many run at once, at most the limit are checked;
/// the rest are refused unchecked, with the same answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_wrong_logins_check_at_most_the_limit() {
    let s = AuthStack::start(
        "auth-concurrent",
        ThrottleConfig {
            max_failures: 5,
            window: Duration::from_secs(300),
            max_entries: 100,
        },
    )
    .await;
    s.add_account("dave", "login", "unused").await;
    // The server's own cost, so each check takes as long as a real one.
    let hash = bcrypt::hash("dave-pw", 10).expect("bcrypt");
    s.set_secret(&[("accounts.dave.password", &hash)]).await;
    s.add_account("erin", "login", "erin-pw").await;

    let guesses: Vec<String> = (0..40).map(|i| format!("guess-{i}")).collect();
    let answers = futures::future::join_all(guesses.iter().map(|g| s.try_login("dave", g))).await;
    for (code, body) in &answers {
        assert_eq!(
            (*code, body["message"].as_str()),
            (401, Some("Invalid username or password")),
            "every answer alike: {body}"
        );
    }
    let failed = s
        .metric(r#"plumb_server_logins_total{result="failed"}"#)
        .await;
    let throttled = s
        .metric(r#"plumb_server_logins_total{result="throttled"}"#)
        .await;
    assert_eq!(
        (failed, throttled),
        (5, 35),
        "40 parallel guesses: exactly the limit checked, the rest refused unchecked"
    );
    // The right password is refused now, unchecked.
    let (code, body) = s.try_login("dave", "dave-pw").await;
    assert_eq!(
        (code, body["message"].as_str()),
        (401, Some("Invalid username or password"))
    );
    assert_eq!(
        s.metric(r#"plumb_server_logins_total{result="throttled"}"#)
            .await,
        36
    );
    // Other users are not affected.
    s.login("erin", "erin-pw").await;
    assert_eq!(
        s.metric(r#"plumb_server_logins_total{result="success"}"#)
            .await,
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_expired_unsigned_and_oversized_tokens_are_refused() {
    let s = AuthStack::start("auth-forged", lenient()).await;
    let admin = s.admin_token().await;
    let c = claims(&admin);
    let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    // Same claims, another key.
    let forged = jsonwebtoken::encode(
        &header,
        &c,
        &jsonwebtoken::EncodingKey::from_secret(b"not the server's key at all......"),
    )
    .expect("encode");
    // The server's key, but expired.
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let key = secrets
        .get("argocd-secret")
        .await
        .expect("secret")
        .data
        .expect("data")["server.secretkey"]
        .0
        .clone();
    let mut old = c.clone();
    old["iat"] = json!(c["iat"].as_i64().unwrap() - 7200);
    old["nbf"] = old["iat"].clone();
    old["exp"] = json!(c["iat"].as_i64().unwrap() - 3600);
    let expired =
        jsonwebtoken::encode(&header, &old, &jsonwebtoken::EncodingKey::from_secret(&key))
            .expect("encode");
    // alg none with admin's claims.
    let b64 = |v: &Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let unsigned = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        b64(&c)
    );
    // A valid signature on a token whose id was never issued to the account.
    let mut stranger = c.clone();
    stranger["sub"] = json!("admin:apiKey");
    let unknown_key = jsonwebtoken::encode(
        &header,
        &stranger,
        &jsonwebtoken::EncodingKey::from_secret(&key),
    )
    .expect("encode");
    for (what, token, expect) in [
        ("forged", forged.as_str(), "signature"),
        ("expired", expired.as_str(), "expired"),
        ("alg none", unsigned.as_str(), "invalid token"),
        (
            "apiKey capability admin lacks",
            unknown_key.as_str(),
            "apiKey",
        ),
        ("garbage", "garbage", "Kubernetes"),
    ] {
        let (code, body) = s.get("/api/v1/applications", token).await;
        assert_eq!(code, 401, "{what}: {body}");
        let msg = body["message"].as_str().unwrap_or_default();
        assert!(msg.contains(expect), "{what}: {msg}");
    }
    // Over the server's token limit (what 20 split cookies carry, 20 x 4078 bytes): refused
    // before any parsing, over HTTP/2 too (its header list allows the longest token).
    let (code, body) = s.get("/api/v1/applications", &"a".repeat(81_561)).await;
    assert_eq!(code, 401, "oversized token: {body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("too long"),
        "{body}"
    );
    // Far over it: HTTP/2's header list limit (128 KiB) answers first (431).
    let (code, _) = s.get("/api/v1/applications", &"a".repeat(200_000)).await;
    assert!(code == 401 || code == 431, "oversized token: {code}");
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/session",
            None,
            Some(&json!({"username": "admin", "password": "p".repeat(100_000)})),
        )
        .await;
    assert_eq!(code, 401, "oversized password");
    // Not Bearer.
    let resp = s
        .http
        .get(format!("{}/api/v1/applications", s.base))
        .header("authorization", format!("Basic {admin}"))
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status().as_u16(), 401);
    // Argo's cookie works as the header does.
    let resp = s
        .http
        .get(format!("{}/api/v1/applications", s.base))
        .header("cookie", format!("argocd.token={admin}"))
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status().as_u16(), 200);
}

async fn create_project(client: &kube::Client, ns: &str, project: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &appproject_resource());
    let obj: DynamicObject = serde_json::from_value(project).expect("project");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create project");
}

pub fn app(name: &str, project: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {
            "project": project,
            "source": {"repoURL": "https://127.0.0.1:9/none.git", "path": ".", "targetRevision": "HEAD"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"},
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_role_tokens_act_within_their_project_until_deleted() {
    let s = AuthStack::start("auth-project", lenient()).await;
    let admin = s.admin_token().await;
    create_project(
        &s.client,
        s.ns.name(),
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "team"},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                 "roles": [{"name": "ci", "policies": [
                     "p, proj:team:ci, applications, get, team/*, allow",
                     "p, proj:team:ci, applications, sync, team/*, allow",
                     "p, proj:team:ci, applications, get, default/*, allow",
                 ]}]}}),
    )
    .await;
    for (name, project) in [("team-api", "team"), ("other-api", "default")] {
        let (code, body) = s
            .call(
                Method::POST,
                "/api/v1/applications?validate=false",
                Some(&admin),
                Some(&app(name, project)),
            )
            .await;
        assert_eq!(code, 200, "{body}");
    }
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/projects/team/roles/ci/token",
            Some(&admin),
            Some(&json!({"expiresIn": 0})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let token = body["token"].as_str().expect("token").to_string();
    let c = claims(&token);
    assert_eq!(
        (c["iss"].as_str(), c["sub"].as_str()),
        (Some("argocd"), Some("proj:team:ci"))
    );
    assert!(c.get("exp").is_none(), "expiresIn 0: no expiry");
    let (_, project) = s.get("/api/v1/projects/team", &admin).await;
    let recorded = &project["spec"]["roles"][0]["jwtTokens"][0];
    assert_eq!(recorded["id"], c["jti"]);
    assert_eq!(recorded["iat"], c["iat"]);

    let (code, _) = s.get("/api/v1/applications/team-api", &token).await;
    assert_eq!(code, 200);
    let (code, body) = s.get("/api/v1/applications/other-api", &token).await;
    assert_eq!(
        code, 403,
        "a project's role cannot reach another project, whatever its policy says: {body}"
    );
    let (code, list) = s.get("/api/v1/applications", &token).await;
    assert_eq!(code, 200);
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["team-api"]);
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/applications/team-api/sync",
            Some(&token),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200);
    let (code, _) = s
        .call(
            Method::DELETE,
            "/api/v1/applications/team-api",
            Some(&token),
            None,
        )
        .await;
    assert_eq!(code, 403);

    // Deleting the token from the role revokes it.
    let iat = c["iat"].as_i64().unwrap();
    let (code, body) = s
        .call(
            Method::DELETE,
            &format!(
                "/api/v1/projects/team/roles/ci/token/{iat}?id={}",
                c["jti"].as_str().unwrap()
            ),
            Some(&admin),
            None,
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = s.get("/api/v1/applications/team-api", &token).await;
    assert_eq!(code, 401, "{body}");
}

/// A token of a new ServiceAccount `name` in the test's namespace, from the TokenRequest API.
async fn service_account_token(s: &AuthStack, name: &str) -> String {
    let sas: Api<ServiceAccount> = Api::namespaced(s.client.clone(), s.ns.name());
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("sa");
    sas.create(&PostParams::default(), &sa)
        .await
        .expect("create ServiceAccount");
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let issued = sas
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .expect("TokenRequest");
    issued.status.and_then(|s| s.token).expect("a token")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubernetes_service_account_tokens_through_token_review() {
    let s = AuthStack::start("auth-k8s", lenient()).await;
    let admin = s.admin_token().await;
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&app("web", "default")),
        )
        .await;
    assert_eq!(code, 200);
    let token = service_account_token(&s, "deployer").await;
    let user = format!("system:serviceaccount:{}:deployer", s.ns.name());
    // Kubernetes tokens are opt-in: a list naming this ServiceAccount (by glob).
    s.set_config_map(
        "argocd-cm",
        &[(
            "plumb.auth.kubernetes.subjects",
            &format!("system:serviceaccount:{}:deploy*", s.ns.name()),
        )],
    )
    .await;

    let (code, info) = s.get("/api/v1/session/userinfo", &token).await;
    assert_eq!(code, 200);
    assert_eq!(info["username"], user);
    assert_eq!(info["iss"], "kubernetes");
    assert!(
        info["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "system:serviceaccounts"),
        "{info}"
    );
    // Authenticated, but no grant yet.
    let (code, _) = s.get("/api/v1/applications/web", &token).await;
    assert_eq!(code, 403);
    // A grant to the user name, and one to a group of the token.
    s.set_policy(
        &format!("p, {user}, applications, get, default/*, allow"),
        "",
    )
    .await;
    let (code, _) = s.get("/api/v1/applications/web", &token).await;
    assert_eq!(code, 200);
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/applications/web/sync",
            Some(&token),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 403);
    s.set_policy(
        &format!("g, system:serviceaccounts:{}, role:syncer\np, role:syncer, applications, sync, */*, allow", s.ns.name()),
        "",
    )
    .await;
    let (code, body) = s
        .call(
            Method::POST,
            "/api/v1/applications/web/sync",
            Some(&token),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
}

/// Issue #26 item 5: every Pod has a ServiceAccount token mounted, so Kubernetes tokens log in
/// only when argocd-cm's `plumb.auth.kubernetes.subjects` lists them, and their RBAC subject
/// can never be a local account's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubernetes_tokens_are_opt_in_and_never_local_accounts() {
    let s = AuthStack::start("auth-k8s-optin", lenient()).await;
    let admin = s.admin_token().await;
    let (code, _) = s
        .call(
            Method::POST,
            "/api/v1/applications?validate=false",
            Some(&admin),
            Some(&app("web", "default")),
        )
        .await;
    assert_eq!(code, 200);
    // A ServiceAccount named like the local admin, and one named like a local account bound
    // to role:admin.
    let admin_sa = service_account_token(&s, "admin").await;
    let builder = service_account_token(&s, "builder").await;
    s.add_account("builder", "login", "builder-pw").await;
    s.set_policy("g, builder, role:admin", "").await;

    // No list (the default): refused before any TokenReview, saying how to enable it.
    for token in [&admin_sa, &builder] {
        let (code, body) = s.get("/api/v1/applications", token).await;
        assert_eq!(code, 401, "{body}");
        let msg = body["message"].as_str().unwrap_or_default();
        assert!(msg.contains("plumb.auth.kubernetes.subjects"), "{msg}");
        let (_, info) = s.get("/api/v1/session/userinfo", token).await;
        assert_eq!(info["loggedIn"], false);
    }
    // A list naming another ServiceAccount: still refused.
    let ns = s.ns.name().to_string();
    s.set_config_map(
        "argocd-cm",
        &[(
            "plumb.auth.kubernetes.subjects",
            &format!("system:serviceaccount:{ns}:admin"),
        )],
    )
    .await;
    let (code, body) = s.get("/api/v1/applications", &builder).await;
    assert_eq!(code, 401, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!(
                "system:serviceaccount:{ns}:builder may not log in"
            )),
        "{body}"
    );
    // Listed: logged in, as its full Kubernetes name, so `g, admin, role:admin` (built in) and
    // `g, builder, role:admin` do not apply to it.
    let (code, info) = s.get("/api/v1/session/userinfo", &admin_sa).await;
    assert_eq!(code, 200);
    assert_eq!(
        info["username"],
        format!("system:serviceaccount:{ns}:admin")
    );
    let (code, body) = s.get("/api/v1/applications/web", &admin_sa).await;
    assert_eq!(
        code, 403,
        "no role:admin for a ServiceAccount named admin: {body}"
    );
    let (code, can) = s
        .get(
            "/api/v1/account/can-i/applications/delete/default/web",
            &admin_sa,
        )
        .await;
    assert_eq!((code, can["value"].as_str()), (200, Some("no")), "{can}");
    s.set_config_map(
        "argocd-cm",
        &[(
            "plumb.auth.kubernetes.subjects",
            &format!("system:serviceaccounts:{ns}"),
        )],
    )
    .await;
    let (code, info) = s.get("/api/v1/session/userinfo", &builder).await;
    assert_eq!(code, 200, "listed by its namespace's group");
    assert_eq!(
        info["username"],
        format!("system:serviceaccount:{ns}:builder")
    );
    let (code, _) = s.get("/api/v1/applications/web", &builder).await;
    assert_eq!(
        code, 403,
        "the local account builder's role:admin is not the ServiceAccount's"
    );
    // The local account itself keeps its role.
    let local = s.login("builder", "builder-pw").await;
    let (code, _) = s.get("/api/v1/applications/web", &local).await;
    assert_eq!(code, 200);
}
