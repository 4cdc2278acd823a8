//! The refresh tokens of browser sessions (Argo's `OidcTokenCache`), so the server renews an ID
//! token that is about to expire, or has expired, without a new login. Argo keeps them
//! encrypted in Redis; Plumb has no Redis, and they must be shared by the server's replicas and
//! outlive a restart, so they live, sealed with AES-256-GCM under a key derived from
//! `server.secretkey`, in the Secret [`SESSIONS_SECRET`] of the control namespace, as the
//! revoked session ids do ([`crate::auth::store::REVOKED_SECRET`]).
//!
//! An entry is keyed by a hash of the ID token's `sub` and `sid` (Argo's key) and bound to the
//! last ID tokens it produced (their hashes): only the holder of one of those can continue the
//! session, so an old ID token of the same user (a CLI's, or a cookie from before a later login
//! or a logout) never triggers a refresh. Entries end with the session's maximum length
//! (`users.session.duration`), and the Secret is bounded in entries and bytes.

use std::collections::BTreeMap;

use base64::Engine;
use k8s_openapi::ByteString;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::auth::store;
use crate::error::Result;
use crate::state::AppState;

/// The Secret holding the sealed entries (`<key>: <ends>.<sealed>`).
pub(crate) const SESSIONS_SECRET: &str = "plumb-sso-sessions";
/// At most this many sessions are kept; the ones ending first are dropped beyond it.
const MAX_ENTRIES: usize = 2_000;
/// The Secret stays well under the API server's 1 MiB object limit.
const MAX_SECRET_BYTES: usize = 768 * 1024;
/// A refresh token longer than this is not kept (the session then ends with its ID token).
pub(crate) const MAX_REFRESH_TOKEN_BYTES: usize = 8 * 1024;
/// How many of a session's latest ID tokens may continue it: two requests sent with the same
/// cookie may both renew it, and the browser keeps whichever answer came last.
const BOUND_TOKENS: usize = 3;

/// One browser session's refresh state.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stored {
    pub(crate) refresh_token: String,
    /// SHA-256 (hex) of the latest ID tokens of the session, newest first.
    pub(crate) tokens: Vec<String>,
    /// Unix seconds: when the login happened, and after which the session is not renewed.
    pub(crate) started: i64,
    pub(crate) ends: i64,
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("started", &self.started)
            .field("ends", &self.ends)
            .finish_non_exhaustive()
    }
}

impl Stored {
    /// Whether `token` is one of the session's latest ID tokens.
    pub(crate) fn binds(&self, token: &str) -> bool {
        let h = token_hash(token);
        self.tokens
            .iter()
            .any(|t| bool::from(subtle::ConstantTimeEq::ct_eq(t.as_bytes(), h.as_bytes())))
    }

    /// The session continued with `id_token` (and the refresh token the provider sent).
    pub(crate) fn renewed(&self, id_token: &str, refresh_token: Option<String>) -> Stored {
        let mut tokens = vec![token_hash(id_token)];
        tokens.extend(self.tokens.iter().take(BOUND_TOKENS - 1).cloned());
        Stored {
            refresh_token: refresh_token.unwrap_or_else(|| self.refresh_token.clone()),
            tokens,
            started: self.started,
            ends: self.ends,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 (hex) of a token: what is kept and compared, never the token.
pub(crate) fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// The entry's key: Argo's `formatOidcTokenCacheKey(sub, sid)`, hashed (a valid Secret key that
/// names no user).
pub(crate) fn session_key(sub: &str, sid: &str) -> String {
    let mut h = Sha256::new();
    h.update(sub.as_bytes());
    h.update([0]);
    h.update(sid.as_bytes());
    hex(&h.finalize())
}

fn cipher(server_key: &[u8]) -> std::result::Result<LessSafeKey, String> {
    let mut h = Sha256::new();
    h.update(b"plumb sso session refresh tokens\0");
    h.update(server_key);
    UnboundKey::new(&AES_256_GCM, &h.finalize())
        .map(LessSafeKey::new)
        .map_err(|_| "deriving the session store key".to_string())
}

/// `<ends>.<base64url(nonce, ciphertext)>`, the entry's key as associated data (an entry moved
/// to another key does not open).
fn seal(server_key: &[u8], key: &str, entry: &Stored) -> std::result::Result<Vec<u8>, String> {
    let nonce = crate::auth::random::random_bytes::<NONCE_LEN>()
        .map_err(|e| format!("generating a nonce: {e}"))?;
    let mut data = serde_json::to_vec(entry).map_err(|e| e.to_string())?;
    cipher(server_key)?
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(key.as_bytes()),
            &mut data,
        )
        .map_err(|_| "sealing a session".to_string())?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&data);
    let body = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(out);
    Ok(format!("{}.{body}", entry.ends).into_bytes())
}

fn open(server_key: &[u8], key: &str, value: &[u8]) -> std::result::Result<Stored, String> {
    let bad = || format!("Secret {SESSIONS_SECRET}, key {key}: not an entry this server sealed");
    let text = std::str::from_utf8(value).map_err(|_| bad())?;
    let (_, body) = text.split_once('.').ok_or_else(bad)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| bad())?;
    if bytes.len() < NONCE_LEN {
        return Err(bad());
    }
    let (nonce, sealed) = bytes.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| bad())?;
    let mut sealed = sealed.to_vec();
    let plain = cipher(server_key)?
        .open_in_place(nonce, Aad::from(key.as_bytes()), &mut sealed)
        .map_err(|_| bad())?;
    serde_json::from_slice(plain).map_err(|_| bad())
}

/// When an entry ends, read without opening it (0 when unreadable: dropped first).
fn ends_of(value: &[u8]) -> i64 {
    std::str::from_utf8(value)
        .ok()
        .and_then(|t| t.split_once('.'))
        .and_then(|(e, _)| e.parse().ok())
        .unwrap_or(0)
}

/// Drops ended entries, then the ones ending first while the data is over its bounds.
fn prune(data: &mut BTreeMap<String, ByteString>, now: i64) {
    data.retain(|_, v| ends_of(&v.0) > now);
    let size = |d: &BTreeMap<String, ByteString>| -> usize {
        d.iter().map(|(k, v)| k.len() + v.0.len()).sum()
    };
    if data.len() <= MAX_ENTRIES && size(data) <= MAX_SECRET_BYTES {
        return;
    }
    let mut by_end: Vec<(i64, String)> = data
        .iter()
        .map(|(k, v)| (ends_of(&v.0), k.clone()))
        .collect();
    by_end.sort();
    for (_, k) in by_end {
        if data.len() <= MAX_ENTRIES && size(data) <= MAX_SECRET_BYTES {
            break;
        }
        data.remove(&k);
    }
}

impl AppState {
    /// The session `key`, if stored, unexpired and sealed under this `server_key`.
    pub(crate) async fn sso_session(&self, server_key: &[u8], key: &str) -> Result<Option<Stored>> {
        let secret = store::secret(&self.client, &self.namespace, SESSIONS_SECRET).await?;
        let data = store::secret_data(secret.as_ref());
        let Some(value) = data.get(key) else {
            return Ok(None);
        };
        if ends_of(value) <= jiff::Timestamp::now().as_second() {
            return Ok(None);
        }
        match open(server_key, key, value) {
            Ok(s) => Ok(Some(s)),
            Err(why) => {
                // A rotated server.secretkey: the session ends with its ID token.
                tracing::info!("{why}");
                Ok(None)
            }
        }
    }

    /// Stores `entry` as the session `key` (replacing it), through resourceVersion-guarded
    /// writes retried on conflicts.
    pub(crate) async fn sso_store_session(
        &self,
        server_key: &[u8],
        key: &str,
        entry: &Stored,
    ) -> Result<()> {
        let sealed = seal(server_key, key, entry).map_err(crate::error::Error::Internal)?;
        let now = jiff::Timestamp::now().as_second();
        store::update_named_secret(&self.client, &self.namespace, SESSIONS_SECRET, |data| {
            prune(data, now);
            data.insert(key.to_string(), ByteString(sealed.clone()));
            Ok((true, ()))
        })
        .await
    }

    /// Records a renewal in the session `key`, in the same guarded write as whatever another
    /// request or replica changed meanwhile; false when the session is gone (logged out) or no
    /// longer continues with `token`.
    pub(crate) async fn sso_record_renewal(
        &self,
        server_key: &[u8],
        key: &str,
        token: &str,
        id_token: &str,
        refresh_token: Option<String>,
    ) -> Result<bool> {
        let now = jiff::Timestamp::now().as_second();
        store::update_named_secret(&self.client, &self.namespace, SESSIONS_SECRET, |data| {
            prune(data, now);
            let current = data
                .get(key)
                .and_then(|v| open(server_key, key, &v.0).ok())
                .filter(|s| s.binds(token));
            let Some(current) = current else {
                return Ok((false, false));
            };
            let next = current.renewed(id_token, refresh_token.clone());
            let sealed = seal(server_key, key, &next).map_err(crate::error::Error::Internal)?;
            data.insert(key.to_string(), ByteString(sealed));
            Ok((true, true))
        })
        .await
    }

    /// Forgets the session `key` when `token` is one of its ID tokens (a logout: another
    /// browser's later login of the same user keeps its session).
    pub(crate) async fn sso_forget_session(
        &self,
        server_key: &[u8],
        key: &str,
        token: &str,
    ) -> Result<bool> {
        let now = jiff::Timestamp::now().as_second();
        store::update_named_secret(&self.client, &self.namespace, SESSIONS_SECRET, |data| {
            let before = data.len();
            prune(data, now);
            let bound = data
                .get(key)
                .and_then(|v| open(server_key, key, &v.0).ok())
                .is_some_and(|s| s.binds(token));
            if bound {
                data.remove(key);
            }
            Ok((bound || data.len() != before, bound))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(ends: i64) -> Stored {
        Stored {
            refresh_token: "refresh-secret".into(),
            tokens: vec![token_hash("id-1")],
            started: 1,
            ends,
        }
    }

    #[test]
    fn entries_are_sealed_bound_to_their_key_and_server_key() {
        let sealed = seal(b"k", "a", &entry(100)).expect("seals");
        let text = String::from_utf8(sealed.clone()).expect("ascii");
        assert!(text.starts_with("100."), "{text}");
        assert!(!text.contains("refresh-secret"));
        assert_eq!(open(b"k", "a", &sealed).expect("opens"), entry(100));
        assert!(open(b"other", "a", &sealed).is_err());
        let moved = open(b"k", "b", &sealed).expect_err("another key");
        assert!(!moved.contains("refresh-secret"), "{moved}");
        assert_eq!(ends_of(&sealed), 100);
        assert_eq!(ends_of(b"garbage"), 0);
    }

    #[test]
    fn sessions_continue_only_with_their_latest_tokens() {
        let e = entry(100);
        assert!(e.binds("id-1"));
        assert!(!e.binds("id-0"));
        let r = e.renewed("id-2", None).renewed("id-3", Some("new".into()));
        assert_eq!(r.refresh_token, "new");
        assert!(r.binds("id-1") && r.binds("id-2") && r.binds("id-3"));
        let r = r.renewed("id-4", None);
        assert!(
            !r.binds("id-1"),
            "only the latest {BOUND_TOKENS} continue it"
        );
        assert_eq!((r.started, r.ends), (1, 100));
        assert_ne!(session_key("a", "bc"), session_key("ab", "c"));
    }

    #[test]
    fn the_store_is_pruned_by_end_and_bounded() {
        let mut data = BTreeMap::new();
        for i in 0..(MAX_ENTRIES + 50) {
            let ends = 1_000 + i64::try_from(i).unwrap_or_default();
            data.insert(
                format!("k{i:05}"),
                ByteString(format!("{ends}.x").into_bytes()),
            );
        }
        data.insert("old".into(), ByteString(b"5.x".to_vec()));
        prune(&mut data, 10);
        assert_eq!(data.len(), MAX_ENTRIES);
        assert!(!data.contains_key("old"));
        assert!(!data.contains_key("k00000"), "the earliest ending go first");
        assert!(data.contains_key(&format!("k{:05}", MAX_ENTRIES + 49)));
        let mut big = BTreeMap::new();
        for i in 0..400 {
            big.insert(
                format!("k{i}"),
                ByteString(format!("{}.{}", 100 + i, "x".repeat(4096)).into_bytes()),
            );
        }
        prune(&mut big, 10);
        let size: usize = big.iter().map(|(k, v)| k.len() + v.0.len()).sum();
        assert!(size <= MAX_SECRET_BYTES && big.len() < 400, "{size}");
    }
}
