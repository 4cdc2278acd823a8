//! Argo's `ClusterService` over the real API server: a cluster created with a real
//! ServiceAccount token (the test API server under its own URL), refused when its spec differs
//! without `upsert`, updated field by field, listed with its connection state, deleted; a
//! cluster Secret with a malformed `config` listed as Failed naming the field. No answer ever
//! holds a credential.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Stack, env};

fn api_server() -> (String, String) {
    let out = env()
        .kubectl()
        .args(["config", "view", "--raw", "--minify", "-o", "json"])
        .output()
        .expect("kubectl config view");
    let cfg: Value = serde_json::from_slice(&out.stdout).expect("kubeconfig json");
    let cluster = &cfg["clusters"][0]["cluster"];
    let server = cluster["server"].as_str().expect("server").to_string();
    let ca = match cluster["certificate-authority-data"].as_str() {
        Some(d) => d.to_string(),
        None => STANDARD.encode(
            std::fs::read(cluster["certificate-authority"].as_str().expect("ca path"))
                .expect("ca file"),
        ),
    };
    (server, ca)
}

fn kubectl(args: &[&str]) -> String {
    let out = env().kubectl().args(args).output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn clusters_are_created_updated_listed_and_deleted_without_showing_credentials() {
    let stack = Stack::start("srv-clusters").await;
    let ns = stack.ns.name().to_string();
    let (server, ca) = api_server();
    kubectl(&["-n", &ns, "create", "serviceaccount", "mgr"]);
    let binding = format!("{ns}-mgr");
    kubectl(&[
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={ns}:mgr"),
    ]);
    let token = kubectl(&["-n", &ns, "create", "token", "mgr", "--duration=1h"]);
    let mut answers: Vec<Value> = Vec::new();
    let cluster = |name: &str, token: &str| {
        json!({"server": server, "name": name, "project": "",
               "config": {"bearerToken": token, "tlsClientConfig": {"caData": ca}}})
    };

    let (code, created) = stack
        .send(
            Method::POST,
            "/api/v1/clusters",
            Some(&cluster("same", &token)),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    assert_eq!(created["name"], "same");
    assert_eq!(
        created["config"],
        json!({"tlsClientConfig": {"insecure": false}})
    );
    answers.push(created);
    let secrets: Api<Secret> = Api::namespaced(env().client().await, &ns);
    let stored = secrets
        .list(&Default::default())
        .await
        .expect("secrets")
        .items
        .into_iter()
        .find(|s| {
            s.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("cluster-127.0.0.1-"))
        })
        .expect("the cluster Secret, named as Argo names it");
    assert_eq!(
        stored.metadata.annotations.as_ref().expect("annotations")["managed-by"],
        "argocd.argoproj.io"
    );

    // Same server, another spec: refused without upsert, replaced with it.
    let (code, refused) = stack
        .send(
            Method::POST,
            "/api/v1/clusters",
            Some(&cluster("other", &token)),
        )
        .await;
    assert_eq!(code, 400, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("existing cluster spec is different; use upsert flag to force update")
    );
    let (code, upserted) = stack
        .send(
            Method::POST,
            "/api/v1/clusters?upsert=true",
            Some(&cluster("other", &token)),
        )
        .await;
    assert_eq!(code, 200, "{upserted}");
    assert_eq!(upserted["name"], "other");
    answers.push(upserted);

    // updatedFields: only the labels change; the token stays (the cluster still connects).
    let (code, updated) = stack
        .send(
            Method::PUT,
            &format!("/api/v1/clusters/{}?updatedFields=labels", encode(&server)),
            Some(&json!({"server": server, "name": "ignored", "labels": {"env": "test"}})),
        )
        .await;
    assert_eq!(code, 200, "{updated}");
    assert_eq!(
        (updated["name"].clone(), updated["labels"].clone()),
        (json!("other"), json!({"env": "test"}))
    );
    answers.push(updated);

    // Bad credentials are refused before anything is stored.
    let (code, bad) = stack
        .send(Method::POST, "/api/v1/clusters", Some(&json!({"server": format!("{server}/bad"), "config": {"bearerToken": "not-a-valid-token", "tlsClientConfig": {"caData": ca}}})))
        .await;
    assert_eq!(code, 400, "{bad}");
    answers.push(bad);

    // A hand-made Secret with a malformed config: listed, Failed, the field named.
    let broken: Secret = serde_json::from_value(json!({
        "metadata": {"name": "broken", "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": "broken", "server": "https://broken.example",
                       "config": r#"{"bearerToken":"hidden-token-value","proxyUrl":"::nope"}"#}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &broken)
        .await
        .expect("create");
    let (code, list) = stack.get("/api/v1/clusters").await;
    assert_eq!(code, 200, "{list}");
    let by_server = |s: &str| {
        list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["server"] == s)
            .cloned()
            .unwrap_or_else(|| panic!("{s} not in {list:#}"))
    };
    assert_eq!(
        by_server("https://kubernetes.default.svc")["name"],
        "in-cluster"
    );
    let ours = by_server(&server);
    assert_eq!(ours["connectionState"]["status"], "Successful", "{ours:#}");
    assert!(ours["serverVersion"].is_string(), "{ours:#}");
    let failed = by_server("https://broken.example");
    assert_eq!(failed["connectionState"]["status"], "Failed");
    assert!(
        failed["connectionState"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("config.proxyUrl"),
        "{failed:#}"
    );
    answers.push(list.clone());

    let (code, got) = stack
        .get(&format!("/api/v1/clusters/{}", encode(&server)))
        .await;
    assert_eq!(code, 200, "{got}");
    answers.push(got);

    let (code, deleted) = stack
        .send(
            Method::DELETE,
            &format!("/api/v1/clusters/{}", encode(&server)),
            None,
        )
        .await;
    assert_eq!(code, 200, "{deleted}");
    let (code, _) = stack
        .get(&format!("/api/v1/clusters/{}", encode(&server)))
        .await;
    assert_eq!(code, 403, "a deleted cluster answers as an unknown one");

    for a in &answers {
        let text = a.to_string();
        for secret in [
            token.as_str(),
            "hidden-token-value",
            "not-a-valid-token",
            ca.as_str(),
        ] {
            assert!(!text.contains(secret), "a credential in an answer: {text}");
        }
    }
    kubectl(&["delete", "clusterrolebinding", &binding]);
}

fn secret_token(ns: &str, name: &str) -> String {
    let b64 = kubectl(&[
        "-n",
        ns,
        "get",
        "secret",
        name,
        "-o",
        "jsonpath={.data.token}",
    ]);
    String::from_utf8(STANDARD.decode(b64).expect("base64")).expect("utf-8")
}

/// `POST /api/v1/clusters/{server}/rotate-auth` (Argo's RotateAuth): a ServiceAccount token
/// Secret's token (what `cluster add` stores) is replaced by a new Secret's, stored in the
/// cluster Secret; the old Secret is deleted. Refused for a cluster the caller cannot see (403)
/// and for one without a bearer token (400). No token in any answer.
#[tokio::test]
async fn rotate_auth_stores_a_new_service_account_token_and_deletes_the_old_secret() {
    let stack = Stack::start("srv-rotate").await;
    let ns = stack.ns.name().to_string();
    let (server, ca) = api_server();
    kubectl(&["-n", &ns, "create", "serviceaccount", "mgr"]);
    let binding = format!("{ns}-mgr");
    kubectl(&[
        "create",
        "clusterrolebinding",
        &binding,
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={ns}:mgr"),
    ]);
    let secrets: Api<Secret> = Api::namespaced(env().client().await, &ns);
    let long_lived: Secret = serde_json::from_value(json!({
        "metadata": {"name": "mgr-long-lived-token",
                     "annotations": {"kubernetes.io/service-account.name": "mgr"}},
        "type": "kubernetes.io/service-account-token"
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &long_lived)
        .await
        .expect("create");
    let mut old = String::new();
    for _ in 0..120 {
        let s = secrets.get("mgr-long-lived-token").await.expect("get");
        if s.data.as_ref().is_some_and(|d| d.contains_key("token")) {
            old = secret_token(&ns, "mgr-long-lived-token");
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert!(!old.is_empty(), "the token controller filled the Secret");
    let mut answers = Vec::new();
    let (code, created) = stack
        .send(
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"server": server, "name": "rot",
                         "config": {"bearerToken": old, "tlsClientConfig": {"caData": ca}}})),
        )
        .await;
    assert_eq!(code, 200, "{created}");
    answers.push(created);

    let (code, unknown) = stack
        .send(
            Method::POST,
            "/api/v1/clusters/nosuch/rotate-auth?id.type=name",
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 403, "{unknown}");
    let (code, in_cluster) = stack
        .send(
            Method::POST,
            "/api/v1/clusters/https%3A%2F%2Fkubernetes.default.svc/rotate-auth",
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 400, "{in_cluster}");

    let (code, rotated) = stack
        .send(
            Method::POST,
            &format!("/api/v1/clusters/{}/rotate-auth", encode(&server)),
            Some(&json!({})),
        )
        .await;
    assert_eq!(code, 200, "{rotated}");
    assert_eq!(rotated, json!({}));
    let stored = secrets
        .list(&kube::api::ListParams::default().labels("argocd.argoproj.io/secret-type=cluster"))
        .await
        .expect("list")
        .items;
    let config: Value = serde_json::from_slice(&stored[0].data.as_ref().expect("data")["config"].0)
        .expect("config");
    let new = config["bearerToken"].as_str().expect("token").to_string();
    assert_ne!(new, old);
    assert!(
        secrets
            .get_opt("mgr-long-lived-token")
            .await
            .expect("get")
            .is_none(),
        "the old token Secret is deleted"
    );
    let sa = kubectl(&[
        "-n",
        &ns,
        "get",
        "serviceaccount",
        "mgr",
        "-o",
        "jsonpath={.secrets[0].name}",
    ]);
    assert!(sa.starts_with("mgr-long-lived-"), "{sa}");
    assert_eq!(
        secret_token(&ns, &sa),
        new,
        "the stored token is the new Secret's"
    );
    let (code, got) = stack
        .get(&format!("/api/v1/clusters/{}", encode(&server)))
        .await;
    assert_eq!(code, 200, "{got}");
    assert_eq!(got["connectionState"]["status"], "Successful", "{got:#}");
    // What `plumb cluster set rot --name rot2 --label team=a` sends: only those fields change.
    let (code, set) = stack
        .send(
            Method::PUT,
            "/api/v1/clusters/rot?id.type=name&updatedFields=name&updatedFields=labels",
            Some(&json!({"name": "rot2", "labels": {"team": "a"}})),
        )
        .await;
    assert_eq!(code, 200, "{set}");
    assert_eq!(
        (set["name"].clone(), set["labels"].clone()),
        (json!("rot2"), json!({"team": "a"}))
    );
    let (code, gone) = stack
        .send(
            Method::PUT,
            "/api/v1/clusters/rot?id.type=name&updatedFields=name",
            Some(&json!({"name": "rot3"})),
        )
        .await;
    assert_eq!(code, 403, "the old name names no cluster: {gone}");
    let stored = secrets
        .list(&kube::api::ListParams::default().labels("argocd.argoproj.io/secret-type=cluster"))
        .await
        .expect("list")
        .items;
    let config: Value = serde_json::from_slice(&stored[0].data.as_ref().expect("data")["config"].0)
        .expect("config");
    assert_eq!(
        config["bearerToken"],
        new.as_str(),
        "set keeps the credentials"
    );
    answers.extend([unknown, in_cluster, rotated, got, set, gone]);
    for a in &answers {
        let text = a.to_string();
        assert!(
            !text.contains(&old) && !text.contains(&new),
            "a token in an answer: {text}"
        );
    }
    kubectl(&["delete", "clusterrolebinding", &binding]);
}
