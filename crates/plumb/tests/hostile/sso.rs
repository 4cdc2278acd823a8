//! argocd-cm's `oidc.config` (issue #30), written by whoever can edit argocd-cm, met by
//! `plumb server`: YAML built to exhaust the parser, issuers that are not http(s), an issuer
//! whose discovery answer is endless, a `$secret:key` reference to a Secret not labelled as
//! Argo's (which must not be read), and tokens claiming the issuer while SSO is unavailable.
//! Each makes SSO unavailable with a reason naming the key; the server keeps serving, local
//! logins keep working, and no Secret value reaches the settings, an answer or the log.

use std::io::{Read, Write};
use std::net::TcpListener;

use crate::server::{apply_object, body_of, get_with, healthy, post, raw, start_in_with, status};

/// An issuer that answers every request with an endless body (bounded by the server's 1 MiB).
fn endless_issuer() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = stream;
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"issuer\": \"",
                );
                let chunk = vec![b'a'; 64 * 1024];
                // Until the server hangs up (at most ~64 MiB, so the thread ends).
                for _ in 0..1024 {
                    if s.write_all(&chunk).is_err() {
                        break;
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

fn set_cm(ns: &str, data: serde_json::Value) {
    apply_object(&serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": ns, "labels": {"app.kubernetes.io/part-of": "argocd"}},
        "data": data,
    }));
}

#[test]
fn hostile_oidc_config_makes_sso_unavailable_and_leaks_nothing() {
    const SECRET: &str = "UNLABELLED-SECRET-VALUE-7";
    let namespace = crate::running::env().namespace("hostile-sso");
    let ns = namespace.name().to_string();
    let server = start_in_with(&ns, &["--request-timeout", "9"]);
    let addr = server.addr;
    healthy(addr);
    apply_object(&serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "not-argos", "namespace": ns},
        "stringData": {"key": SECRET},
    }));
    let laughs = {
        let mut y = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for i in 0..9 {
            let prev = if i == 0 {
                "a".to_string()
            } else {
                format!("b{}", i - 1)
            };
            y.push_str(&format!("b{i}: &b{i} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
        }
        y
    };
    let url = format!("http://{addr}");
    let endless = endless_issuer();
    let cases = [
        ("alias bomb", laughs, "oidc.config"),
        (
            "deep nesting",
            format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000)),
            "oidc.config",
        ),
        (
            "200 KB",
            format!(
                "issuer: https://x\nclientID: c\npad: {}\n",
                "x".repeat(200_000)
            ),
            "",
        ),
        (
            "file issuer",
            "issuer: file:///etc/passwd\nclientID: c\n".to_string(),
            "http(s)",
        ),
        (
            "script issuer",
            "issuer: \"javascript:alert(1)\"\nclientID: c\n".to_string(),
            "http(s)",
        ),
        (
            "endless discovery",
            format!("issuer: {endless}\nclientID: c\nclientSecret: $not-argos:key\n"),
            "larger than",
        ),
        (
            "garbage rootCA",
            format!(
                "issuer: {endless}\nclientID: c\nrootCA: \"-----BEGIN CERTIFICATE-----\\nnope\"\n"
            ),
            "rootCA",
        ),
    ];
    for (what, config, needle) in cases {
        set_cm(&ns, serde_json::json!({"url": url, "oidc.config": config}));
        let r = get_with(addr, "/api/v1/settings", "");
        assert_eq!(status(&r), 200, "{what}: {r}");
        let settings: serde_json::Value = serde_json::from_str(body_of(&r)).unwrap();
        let why = settings["ssoUnavailable"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if needle.is_empty() {
            // Parsed: then the issuer (https://x) is simply unreachable.
            assert!(!why.is_empty(), "{what}: {settings}");
        } else {
            assert!(why.contains(needle), "{what}: {why}");
        }
        let r = get_with(addr, "/auth/login", "");
        assert_eq!(status(&r), 503, "{what}: {r}");
        assert!(!r.contains(SECRET) && !why.contains(SECRET), "{what}: {r}");
        // A token claiming the issuer while SSO is unavailable is refused, not passed on.
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let token = format!(
            "{}.{}.",
            b64(r#"{"alg":"none"}"#),
            b64(&format!(r#"{{"iss":"{endless}","sub":"x","aud":"c"}}"#))
        );
        let r = get_with(
            addr,
            "/api/v1/applications",
            &format!("Authorization: Bearer {token}\r\n"),
        );
        assert_eq!(status(&r), 401, "{what}: {r}");
        healthy(addr);
    }
    // Local accounts keep working.
    let password = plumb_testenv::process::initial_admin_password(crate::running::env(), &ns);
    let r = raw(
        addr,
        &post(
            "/api/v1/session",
            format!(r#"{{"username":"admin","password":"{password}"}}"#).as_bytes(),
        ),
    );
    assert_eq!(status(&r), 200, "{r}");
    assert!(
        !server.log.text().contains(SECRET),
        "a Secret value reached the log"
    );
}
