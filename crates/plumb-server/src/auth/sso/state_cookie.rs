//! The login's state between `/auth/login` and `/auth/callback`, kept in the browser as Argo
//! keeps it (the `argocd.oauthstate` cookie, five minutes) but sealed with AES-256-GCM under a
//! key derived from `server.secretkey`, so the PKCE verifier and nonce stay secret and the
//! return URL cannot be changed; and Argo's check that a return URL stays on this server.

use base64::Engine;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Argo's `common.StateCookieName`.
pub(crate) const STATE_COOKIE: &str = "argocd.oauthstate";
/// Argo's `common.StateCookieMaxAge`.
pub(crate) const STATE_MAX_AGE_SECS: i64 = 300;

/// What the login remembers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LoginState {
    pub(crate) state: String,
    pub(crate) nonce: String,
    pub(crate) pkce_verifier: String,
    pub(crate) return_url: String,
    /// Unix seconds after which the login is refused.
    pub(crate) expires: i64,
}

fn key(server_key: &[u8]) -> Result<LessSafeKey, String> {
    let mut h = Sha256::new();
    h.update(b"plumb sso login state\0");
    h.update(server_key);
    UnboundKey::new(&AES_256_GCM, &h.finalize())
        .map(LessSafeKey::new)
        .map_err(|_| "deriving the login state key".to_string())
}

/// The sealed cookie value (base64url of nonce and ciphertext).
pub(crate) fn seal(server_key: &[u8], state: &LoginState) -> Result<String, String> {
    let key = key(server_key)?;
    let nonce_bytes = crate::auth::random::random_bytes::<NONCE_LEN>()
        .map_err(|e| format!("generating a nonce: {e}"))?;
    let mut data = serde_json::to_vec(state).map_err(|e| e.to_string())?;
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce_bytes),
        Aad::from(STATE_COOKIE),
        &mut data,
    )
    .map_err(|_| "sealing the login state".to_string())?;
    let mut out = nonce_bytes.to_vec();
    out.extend_from_slice(&data);
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(out))
}

/// The state in a cookie value, if this server sealed it and it has not expired.
pub(crate) fn open(server_key: &[u8], value: &str, now: i64) -> Result<LoginState, String> {
    let bad = || "the login state cookie is not one this server issued".to_string();
    if value.len() > 4096 {
        return Err(bad());
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(value)
        .map_err(|_| bad())?;
    if bytes.len() < NONCE_LEN {
        return Err(bad());
    }
    let (nonce, sealed) = bytes.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| bad())?;
    let mut sealed = sealed.to_vec();
    let plain = key(server_key)?
        .open_in_place(nonce, Aad::from(STATE_COOKIE), &mut sealed)
        .map_err(|_| bad())?;
    let state: LoginState = serde_json::from_slice(plain).map_err(|_| bad())?;
    if state.expires < now {
        return Err("the login took longer than 5 minutes; log in again".into());
    }
    Ok(state)
}

/// Argo's `isValidRedirectURL`: empty, or the scheme and host (with port) of an allowed URL and
/// a path within its path; CR and LF refused. Plumb also accepts a path on this server
/// (`/applications`), never `//host` or a backslash, which browsers read as another host.
pub(crate) fn valid_return_url(candidate: &str, allowed: &[&str]) -> bool {
    if candidate.is_empty() {
        return true;
    }
    if candidate.contains(['\r', '\n', '\\']) {
        return false;
    }
    if candidate.starts_with('/') {
        return !candidate.starts_with("//");
    }
    let Ok(r) = url::Url::parse(candidate) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| url::Url::parse(a).ok())
        .any(|b| {
            let base_path = if b.path().is_empty() { "/" } else { b.path() };
            b.scheme() == r.scheme()
                && b.host_str() == r.host_str()
                && b.port_or_known_default() == r.port_or_known_default()
                && r.username().is_empty()
                && r.path().starts_with(base_path)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(expires: i64) -> LoginState {
        LoginState {
            state: "s".into(),
            nonce: "n".into(),
            pkce_verifier: "v".into(),
            return_url: "https://cd.example.com/applications".into(),
            expires,
        }
    }

    #[test]
    fn sealed_states_open_only_with_the_key_and_in_time() {
        let sealed = seal(b"key", &state(100)).expect("seals");
        assert!(
            !sealed.contains("applications"),
            "the cookie is not readable"
        );
        assert_eq!(open(b"key", &sealed, 50), Ok(state(100)));
        assert!(open(b"other key", &sealed, 50).is_err());
        assert!(
            open(b"key", &sealed, 101)
                .expect_err("expired")
                .contains("5 minutes")
        );
        let mut tampered = sealed.into_bytes();
        let last = tampered.len() - 3;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).expect("ascii");
        assert!(open(b"key", &tampered, 50).is_err());
        assert!(open(b"key", "", 50).is_err());
    }

    #[test]
    fn return_urls_stay_on_this_server() {
        let allowed = ["https://cd.example.com"];
        for ok in [
            "",
            "https://cd.example.com",
            "https://cd.example.com/applications?x=1",
            "https://cd.example.com:443/x",
            "/applications",
        ] {
            assert!(valid_return_url(ok, &allowed), "{ok}");
        }
        for bad in [
            "https://evil.example.com/",
            "http://cd.example.com/",
            "https://cd.example.com.evil.com/",
            "https://cd.example.com:8443/",
            "https://cd.example.com@evil.com/",
            "https://user@cd.example.com/",
            "//evil.example.com/x",
            "/\\evil.example.com",
            "https://cd.example.com/\r\nSet-Cookie: x",
            "javascript:alert(1)",
        ] {
            assert!(!valid_return_url(bad, &allowed), "{bad}");
        }
        assert!(!valid_return_url(
            "https://cd.example.com/other",
            &["https://cd.example.com/argo"]
        ));
    }
}
