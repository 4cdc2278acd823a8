//! `PUT /api/v1/account/password` as Argo's `UpdatePassword`, and logged-out sessions that stay
//! revoked across a restart of the server (the revoked ids live in a Secret, not in memory).

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use reqwest::Method;
use serde_json::json;

use crate::authn::{AuthStack, claims};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn password_changes_and_revocations_survive_a_restart() {
    let mut s = AuthStack::start("auth-password", Default::default()).await;
    let admin = s.admin_token().await;
    s.add_account("alice", "login", "alice-pw-1").await;
    s.add_account("bob", "login", "bob-pw-1").await;
    let alice = s.login("alice", "alice-pw-1").await;
    let bob = s.login("bob", "bob-pw-1").await;
    let password = |current: &str, new: &str, name: &str| json!({"currentPassword": current, "newPassword": new, "name": name});
    let put = async |token: &str, body: serde_json::Value| {
        s.call(
            Method::PUT,
            "/api/v1/account/password",
            Some(token),
            Some(&body),
        )
        .await
    };

    // The caller's current password must match; the new one must match passwordPattern.
    let (code, body) = put(&alice, password("wrong", "alice-pw-2", "")).await;
    assert_eq!(
        (code, body["message"].as_str()),
        (400, Some("current password does not match"))
    );
    let (code, body) = put(&alice, password("alice-pw-1", "short", "")).await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "new password does not match the following expression: ^.{8,32}$"
    );
    // Another account's password needs accounts/update on it.
    let (code, body) = put(&bob, password("bob-pw-1", "alice-pw-x", "alice")).await;
    assert_eq!(code, 403, "{body}");

    let (code, body) = put(&alice, password("alice-pw-1", "alice-pw-2", "")).await;
    assert_eq!(code, 200, "{body}");
    // Sessions issued before the change are refused; the old password too.
    let (code, body) = s.get("/api/v1/account/alice", &alice).await;
    assert_eq!(code, 401, "{body}");
    let (code, _) = s.try_login("alice", "alice-pw-1").await;
    assert_eq!(code, 401);
    let alice = s.login("alice", "alice-pw-2").await;
    let (code, _) = s.get("/api/v1/account/alice", &alice).await;
    assert_eq!(code, 200);
    let secrets: Api<Secret> = Api::namespaced(s.client.clone(), s.ns.name());
    let data = secrets
        .get("argocd-secret")
        .await
        .expect("argocd-secret")
        .data
        .expect("data");
    assert!(String::from_utf8_lossy(&data["accounts.alice.password"].0).starts_with("$2"));
    assert!(data.contains_key("accounts.alice.passwordMtime"));

    // The admin (role:admin) resets bob's password with the admin's own current password.
    let admin_pw = s.admin_password().await;
    let (code, body) = put(&admin, password(&admin_pw, "bob-pw-2-new", "bob")).await;
    assert_eq!(code, 200, "{body}");
    s.login("bob", "bob-pw-2-new").await;
    // The admin's own password lives under admin.*.
    let (code, body) = put(&admin, password(&admin_pw, "admin-pw-2-new", "")).await;
    assert_eq!(code, 200, "{body}");
    let admin = s.login("admin", "admin-pw-2-new").await;

    // Logout revokes the session; a restarted server still refuses it.
    let (code, _) = s
        .call(Method::DELETE, "/api/v1/session", Some(&alice), None)
        .await;
    assert_eq!(code, 200);
    let (code, body) = s.get("/api/v1/account/alice", &alice).await;
    assert_eq!(code, 401, "{body}");
    let jti = claims(&alice)["jti"].as_str().expect("jti").to_string();
    let revoked = secrets
        .get("plumb-revoked-sessions")
        .await
        .expect("revoked list");
    assert!(revoked.data.expect("data").contains_key(&jti));
    s.restart().await;
    let (code, body) = s.get("/api/v1/account/alice", &alice).await;
    assert_eq!(code, 401, "still revoked after a restart: {body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("revoked")),
        "{body}"
    );
    let fresh = s.login("alice", "alice-pw-2").await;
    let (code, _) = s.get("/api/v1/account/alice", &fresh).await;
    assert_eq!(code, 200, "other sessions are unaffected");
    let (code, _) = s.get("/api/v1/account/admin", &admin).await;
    assert_eq!(code, 200);
}
