//! Argo's `GPGKeyService` over `argocd-gpg-keys-cm`: add (a key already there skipped), list
//! without key data, get with it, delete by query, and Argo's errors for bad input.

use plumb_testenv::gpg::GpgKey;
use reqwest::Method;
use serde_json::json;

use crate::support::Stack;

#[tokio::test]
async fn gpg_keys_are_added_listed_read_and_removed_as_argo_does() {
    let stack = Stack::start("srv-gpg").await;
    let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let id = key.key_id().to_string();
    let body = json!({"keyData": key.public_key()});
    let (code, created) = stack
        .send(Method::POST, "/api/v1/gpgkeys?upsert=false", Some(&body))
        .await;
    assert_eq!(code, 200, "{created}");
    assert_eq!(created["created"]["items"][0]["keyID"], id.as_str());
    assert_eq!(
        created["created"]["items"][0]["owner"],
        "Release Bot <bot@plumb.invalid>"
    );
    assert_eq!(created["created"]["items"][0]["subType"], "ed25519");
    assert_eq!(created["skipped"], json!([]));
    let (code, again) = stack
        .send(Method::POST, "/api/v1/gpgkeys?upsert=true", Some(&body))
        .await;
    assert_eq!(code, 200, "{again}");
    assert_eq!(again["skipped"], json!([id]));
    assert_eq!(again["created"]["items"], json!([]));

    let (code, list) = stack.get("/api/v1/gpgkeys").await;
    assert_eq!(code, 200, "{list}");
    assert_eq!(list["items"][0]["keyID"], id.as_str());
    assert_eq!(list["items"][0]["fingerprint"], key.fingerprint());
    assert!(list["items"][0].get("keyData").is_none(), "{list}");
    let (code, one) = stack
        .get(&format!("/api/v1/gpgkeys/{}", key.fingerprint()))
        .await;
    assert_eq!(code, 200, "{one}");
    assert!(
        one["keyData"]
            .as_str()
            .is_some_and(|d| d.contains("BEGIN PGP PUBLIC KEY BLOCK"))
    );

    let (code, err) = stack.get("/api/v1/gpgkeys/nothex").await;
    assert_eq!(code, 400, "{err}");
    assert_eq!(err["message"], "'nothex' is not a valid GnuPG key ID");
    let (code, err) = stack
        .send(
            Method::POST,
            "/api/v1/gpgkeys",
            Some(&json!({"keyData": "  "})),
        )
        .await;
    assert_eq!(
        (code, err["message"].clone()),
        (400, json!("submitted key data is empty"))
    );
    let garbage = json!({"keyData": "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!\n"});
    let (code, err) = stack
        .send(Method::POST, "/api/v1/gpgkeys", Some(&garbage))
        .await;
    assert_eq!(code, 400, "{err}");

    let (code, gone) = stack
        .send(Method::DELETE, &format!("/api/v1/gpgkeys?keyID={id}"), None)
        .await;
    assert_eq!((code, gone), (200, json!({})));
    let (code, err) = stack.get(&format!("/api/v1/gpgkeys/{id}")).await;
    assert_eq!(code, 404, "{err}");
    assert_eq!(err["message"], format!("no such key: {id}"));
    let (code, _) = stack
        .send(Method::DELETE, &format!("/api/v1/gpgkeys/{id}"), None)
        .await;
    assert_eq!(code, 404);
}
