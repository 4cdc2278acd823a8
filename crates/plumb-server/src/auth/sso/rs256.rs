//! RS256 signatures of ID tokens checked with `ring` against the provider's RSA keys, parsed
//! once per key set: every request of an SSO user pays this, and the `rsa` crate that
//! `openidconnect` verifies with (a big-integer exponentiation per call, the key rebuilt from
//! the JWK each time) is several times slower than `ring` (issue #30's budget: 50 µs). Only
//! the signature is checked here; the header's algorithm is the token's `alg` (RS256, which the
//! provider must announce), and the claims stay `openidconnect`'s. Anything else (another
//! algorithm, no `kid`, a `kid` not in the set) goes the `openidconnect` way entirely.

use std::collections::HashMap;

use base64::Engine;
use openidconnect::core::CoreJsonWebKeySet;
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents};
use serde_json::Value;

/// The key set's RSA signing keys usable for RS256, by `kid`.
#[derive(Default)]
pub(super) struct Rs256Keys(HashMap<String, RsaPublicKeyComponents<Vec<u8>>>);

fn b64(v: &Value) -> Option<Vec<u8>> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(v.as_str()?.trim_end_matches('='))
        .ok()
}

impl Rs256Keys {
    /// RSA keys with a `kid`, for signatures (or no `use`), for RS256 (or no `alg`).
    pub(super) fn of(set: &CoreJsonWebKeySet) -> Self {
        let Ok(json) = serde_json::to_value(set) else {
            return Self::default();
        };
        let keys = json
            .get("keys")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut out = HashMap::new();
        for k in &keys {
            let field = |name: &str| k.get(name).and_then(Value::as_str);
            let usable = field("kty") == Some("RSA")
                && field("use").is_none_or(|u| u == "sig")
                && field("alg").is_none_or(|a| a == "RS256");
            let (Some(kid), Some(n), Some(e)) = (
                field("kid"),
                k.get("n").and_then(b64),
                k.get("e").and_then(b64),
            ) else {
                continue;
            };
            // Two keys under one kid: leave the choice to openidconnect.
            if usable
                && out
                    .insert(kid.to_string(), RsaPublicKeyComponents { n, e })
                    .is_some()
            {
                out.remove(kid);
            }
        }
        Self(out)
    }

    /// The token's RS256 signature checked: `None` when the token is not RS256 with a `kid`
    /// of this set (openidconnect then checks it), else whether the signature is valid.
    pub(super) fn check(&self, token: &str) -> Option<Result<(), String>> {
        let (signed, signature) = token.rsplit_once('.')?;
        let header = signed.split('.').next()?;
        let header: Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(header)
                .ok()?,
        )
        .ok()?;
        if header.get("alg").and_then(Value::as_str) != Some("RS256") {
            return None;
        }
        let key = self.0.get(header.get("kid").and_then(Value::as_str)?)?;
        let bad = || "the signature does not match the identity provider's key".to_string();
        let Ok(signature) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(signature)
        else {
            return Some(Err(bad()));
        };
        Some(
            key.verify(&RSA_PKCS1_2048_8192_SHA256, signed.as_bytes(), &signature)
                .map_err(|_| bad()),
        )
    }
}
