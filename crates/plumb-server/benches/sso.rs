//! Issue #30's budgets. `sso/verify_id_token_rs256`: verifying an SSO session token (the
//! `argocd.token` cookie holding the provider's ID token), what every request of an SSO user
//! costs before RBAC (under 50 µs); RS256 with a 2048-bit key from openssl, the provider's
//! documents already fetched. `sso/callback_round_trip`: the login's callback through the real
//! `plumb server` over HTTPS (state cookie, code exchange, ID token verification, the refresh
//! token sealed into the `plumb-sso-sessions` Secret, the session cookie), against an
//! in-process provider on loopback whose own time (its token endpoint's handler, signing the
//! ID token included) is measured and subtracted (under 50 ms). The second needs the test
//! cluster (`PLUMB_TEST_KUBECONFIG`) and is skipped without it.

use std::process::Command;

use base64::Engine;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

const ISSUER: &str = "https://idp.example.com";

fn run(script: &str) -> Vec<u8> {
    let out = Command::new("sh")
        .args(["-c", script])
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A 2048-bit RSA key: (its PKCS#1 DER, its JWKS with kid `k1`).
fn rsa_key() -> (Vec<u8>, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let pem = dir.path().join("k.pem");
    run(&format!(
        "openssl genrsa -traditional -out {} 2048 2>/dev/null",
        pem.display()
    ));
    let der = run(&format!(
        "openssl rsa -in {} -traditional -outform DER",
        pem.display()
    ));
    let modulus = run(&format!(
        "openssl rsa -in {} -noout -modulus",
        pem.display()
    ));
    let hex = String::from_utf8_lossy(&modulus)
        .trim()
        .trim_start_matches("Modulus=")
        .to_string();
    let n: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    let jwks = json!({"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "k1",
        "n": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(n), "e": "AQAB"}]});
    (der, jwks)
}

fn verify_session_token(c: &mut Criterion) {
    let (der, jwks) = rsa_key();
    let discovery = json!({
        "issuer": ISSUER, "authorization_endpoint": format!("{ISSUER}/auth"),
        "token_endpoint": format!("{ISSUER}/token"), "jwks_uri": format!("{ISSUER}/keys"),
        "response_types_supported": ["code"], "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    });
    let verifier =
        plumb_server::BenchVerifier::new(ISSUER, "plumb", discovery, jwks).expect("provider");
    let now = jiff::Timestamp::now().as_second();
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("k1".into());
    let token = jsonwebtoken::encode(
        &header,
        &json!({"iss": ISSUER, "sub": "CiQwOGE4Njg0Yi1kYjg4LTRiNzMtOTBhOS0zY2QxNjYxZjU0NjYSBWxvY2Fs",
                "aud": "plumb", "exp": now + 86_400, "iat": now, "email": "alice@example.com",
                "groups": ["my-org:team-a", "my-org:team-b"], "name": "Alice"}),
        &jsonwebtoken::EncodingKey::from_rsa_der(&der),
    )
    .expect("sign");
    verifier.verify(&token).expect("valid");
    c.bench_function("sso/verify_id_token_rs256", |b| {
        b.iter(|| verifier.verify(std::hint::black_box(&token)))
    });
}

#[path = "sso_parts/callback.rs"]
mod callback;

criterion_group!(benches, verify_session_token, callback::callback_round_trip);
criterion_main!(benches);
