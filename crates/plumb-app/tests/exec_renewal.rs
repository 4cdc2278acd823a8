//! An exec credential plugin (a real shell script) that returns client certificate pairs,
//! against the real API server: the pair is used until its `expirationTimestamp` passes, then
//! the plugin runs again and the new pair is presented on new connections, as client-go does.
//! The certificates are real: signed by the control plane through CertificateSigningRequests.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use plumb_app::ClusterSecret;
use plumb_app::clusters::{ExecAuth, ExecLimits};
use plumb_testenv::TestEnv;
use serde_json::{Value, json};

/// A key and a certificate for user `cn`, signed by the control plane's client signer.
async fn client_pair(env: &TestEnv, cn: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    let csr = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    let csrs: Api<CertificateSigningRequest> = Api::all(env.client().await);
    let object: CertificateSigningRequest = serde_json::from_value(json!({
        "metadata": {"name": cn},
        "spec": {"request": ByteString(csr.into_bytes()), "signerName": "kubernetes.io/kube-apiserver-client",
                 "usages": ["client auth"], "expirationSeconds": 3600}
    }))
    .expect("csr object");
    csrs.create(&PostParams::default(), &object)
        .await
        .expect("create CSR");
    let approved = env
        .kubectl()
        .args(["certificate", "approve", cn])
        .output()
        .expect("kubectl");
    assert!(approved.status.success(), "{approved:?}");
    for _ in 0..120 {
        let got = csrs.get(cn).await.expect("read CSR");
        if let Some(cert) = got.status.and_then(|s| s.certificate) {
            let _ = csrs.delete(cn, &Default::default()).await;
            return (String::from_utf8(cert.0).expect("PEM"), key.serialize_pem());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("the control plane did not sign CSR {cn}");
}

fn exec_credential(cert: &str, key: &str, expires: &str) -> String {
    json!({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
           "status": {"clientCertificateData": cert, "clientKeyData": key,
                      "expirationTimestamp": expires}})
    .to_string()
}

async fn whoami(client: &kube::Client) -> String {
    let reviews: Api<SelfSubjectReview> = Api::all(client.clone());
    let review = reviews
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .expect("SelfSubjectReview");
    review
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .unwrap_or_default()
}

fn runs(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("count"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[tokio::test]
async fn a_certificate_pair_from_an_exec_plugin_is_renewed_when_it_expires() {
    let env = TestEnv::shared();
    let ns = env.namespace("exec-renewal");
    let (alice, bob) = (format!("{}-alice", ns.name()), format!("{}-bob", ns.name()));
    let (alice_cert, alice_key) = client_pair(env, &alice).await;
    let (bob_cert, bob_key) = client_pair(env, &bob).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(
        d.join("first.json"),
        exec_credential(&alice_cert, &alice_key, "2099-01-01T00:00:00Z"),
    )
    .expect("write");
    std::fs::write(
        d.join("next.json"),
        exec_credential(&bob_cert, &bob_key, "2199-01-01T00:00:00Z"),
    )
    .expect("write");
    let plugin = d.join("plugin.sh");
    std::fs::write(
        &plugin,
        "#!/bin/sh\nn=$(cat \"$DIR/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$DIR/count\"\nif [ $n = 1 ]; then cat \"$DIR/first.json\"; else cat \"$DIR/next.json\"; fi\n",
    )
    .expect("write");
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");

    let raw: Value = serde_json::from_slice(
        &env.kubectl()
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
            .expect("kubectl")
            .stdout,
    )
    .expect("kubeconfig");
    let cluster = &raw["clusters"][0]["cluster"];
    let config = json!({
        "tlsClientConfig": {"caData": cluster["certificate-authority-data"]},
        "execProviderConfig": {"command": plugin.display().to_string(),
                               "env": {"DIR": d.display().to_string()},
                               "apiVersion": "client.authentication.k8s.io/v1"}
    });
    let secret = Secret {
        data: Some(
            [
                (
                    "server",
                    cluster["server"].as_str().expect("server").to_string(),
                ),
                ("name", "renewing".to_string()),
                ("config", config.to_string()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), ByteString(v.into_bytes())))
            .collect(),
        ),
        ..Default::default()
    };
    let parsed = ClusterSecret::from_secret(&secret).expect("cluster");
    let plugin_config = parsed
        .config
        .as_ref()
        .expect("config")
        .exec
        .clone()
        .expect("exec");

    // The test's clock: moved past the first pair's expiry below.
    let skew = Arc::new(AtomicI64::new(0));
    let clock_skew = skew.clone();
    let clock: plumb_app::clusters::Clock = Arc::new(move || {
        jiff::Timestamp::now()
            .checked_add(jiff::SignedDuration::from_secs(
                clock_skew.load(Ordering::SeqCst),
            ))
            .expect("time")
    });
    let auth = Arc::new(ExecAuth::new(plugin_config, ExecLimits::default()).with_clock(clock));
    let client = parsed.client_with(Some(auth)).await.expect("client");

    assert_eq!(whoami(&client).await, alice);
    assert_eq!(whoami(&client).await, alice, "the fresh pair is reused");
    assert_eq!(runs(d), "1", "the plugin ran once while its pair was fresh");

    // A century later the first pair has expired: the plugin runs again and its new pair is
    // presented (on new connections: the old ones presented the old pair).
    skew.store(100 * 366 * 24 * 3600, Ordering::SeqCst);
    assert_eq!(whoami(&client).await, bob);
    assert_eq!(whoami(&client).await, bob);
    assert_eq!(runs(d), "2", "the renewed pair is fresh until 2199");
}
