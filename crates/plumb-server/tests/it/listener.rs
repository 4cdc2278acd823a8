//! The listener: TLS with the operator's certificate and with the generated one, plain HTTP,
//! the body limit, and graceful shutdown ending an open watch stream.

use std::time::Duration;

use plumb_server::{TlsMode, self_signed};

use crate::support::{client_trusting, env, read, server_config};

#[tokio::test]
async fn tls_from_files_generated_and_plaintext() {
    let env = env();
    let ns = env.namespace("srv-tls");
    let client = env.client().await;

    // The operator's certificate and key.
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = self_signed(&["plumb.example.internal".to_string()]).expect("certificate");
    std::fs::write(dir.path().join("tls.crt"), &cert).expect("write");
    std::fs::write(dir.path().join("tls.key"), &key).expect("write");
    let mut config = server_config(ns.name());
    config.tls = TlsMode::Files {
        cert: dir.path().join("tls.crt"),
        key: dir.path().join("tls.key"),
    };
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("serve");
    assert_eq!(server.certificate_pem.as_deref(), Some(cert.as_str()));
    let url = format!("https://localhost:{}/api/version", server.addr.port());
    let (code, body) = read(client_trusting(&cert).get(&url).send().await.expect("GET")).await;
    assert_eq!(code, 200, "{body}");
    // A client that trusts another certificate refuses this server.
    let (other, _) = self_signed(&[]).expect("certificate");
    assert!(client_trusting(&other).get(&url).send().await.is_err());
    server.shutdown().await;

    // Unreadable or mismatched files are refused at start, naming the file.
    let mut config = server_config(ns.name());
    config.tls = TlsMode::Files {
        cert: dir.path().join("missing.crt"),
        key: dir.path().join("tls.key"),
    };
    let err = plumb_server::serve(client.clone(), config)
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("missing.crt"), "{err}");
    let (_, other_key) = self_signed(&[]).expect("certificate");
    std::fs::write(dir.path().join("other.key"), &other_key).expect("write");
    let mut config = server_config(ns.name());
    config.tls = TlsMode::Files {
        cert: dir.path().join("tls.crt"),
        key: dir.path().join("other.key"),
    };
    assert!(
        plumb_server::serve(client.clone(), config).await.is_err(),
        "a key of another certificate"
    );

    // Plain HTTP.
    let mut config = server_config(ns.name());
    config.tls = TlsMode::Plaintext;
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("serve");
    assert!(server.certificate_pem.is_none());
    let http = reqwest::Client::new();
    let (code, _) = read(
        http.get(format!("http://127.0.0.1:{}/healthz", server.addr.port()))
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!(code, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn body_limit_and_graceful_shutdown() {
    let env = env();
    let ns = env.namespace("srv-limits");
    let client = env.client().await;
    crate::support::create_default_project(&client, ns.name()).await;
    let mut config = server_config(ns.name());
    config.limits.max_body_bytes = 4096;
    let server = plumb_server::serve(client.clone(), config)
        .await
        .expect("serve");
    let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
    let base = format!("https://localhost:{}", server.addr.port());

    let big = format!(
        "{{\"metadata\": {{\"name\": \"x\", \"labels\": {{\"pad\": \"{}\"}}}}}}",
        "a".repeat(8192)
    );
    let resp = http
        .post(format!("{base}/api/v1/applications?validate=false"))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status().as_u16(), 413);
    // A malformed body within the limit is a 400 with Argo's error shape.
    let (code, err) = read(
        http.post(format!("{base}/api/v1/applications?validate=false"))
            .header("content-type", "application/json")
            .body("{\"spec\": 7}")
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert!(code == 400 || code == 422, "{code} {err}");
    let (code, err) = read(
        http.get(format!("{base}/api/v1/nothing-here"))
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!((code, &err["code"]), (404, &serde_json::json!(5)), "{err}");

    // An open watch stream (server-sent events) ends when the server shuts down.
    let mut stream = http
        .get(format!("{base}/api/v1/stream/applications"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .expect("stream");
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let shutdown = tokio::spawn(server.shutdown());
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(_)) = stream.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the stream did not end on shutdown");
    tokio::time::timeout(Duration::from_secs(60), shutdown)
        .await
        .expect("shutdown finished")
        .expect("join");
    assert!(
        http.get(format!("{base}/api/version"))
            .send()
            .await
            .is_err(),
        "still accepting after shutdown"
    );
}
