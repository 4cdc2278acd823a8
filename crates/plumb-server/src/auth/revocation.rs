//! Revoked session ids, kept in a Secret so a logout holds on every replica and across
//! restarts.

use k8s_openapi::ByteString;

use super::caller::{Caller, CallerKind};
use super::store;
use crate::error::Result;
use crate::state::AppState;

/// The key of a revoked session id in [`store::REVOKED_SECRET`]: the id itself when it is a
/// valid Secret key (the UUIDs this server issues), else its SHA-256.
fn revoked_key(jti: &str) -> String {
    let valid = !jti.is_empty()
        && jti.len() <= 253
        && jti
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        return jti.to_string();
    }
    use sha2::Digest;
    sha2::Sha256::digest(jti.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl AppState {
    /// Revokes the caller's session (logout).
    pub(crate) async fn revoke_session(&self, caller: &Caller) -> Result<()> {
        if let CallerKind::Account {
            capability: "login",
            jti,
            exp,
        } = &caller.kind
        {
            self.auth_state()?;
            self.revoke(jti, *exp).await?;
        }
        Ok(())
    }

    /// Records `jti` as revoked until `exp` (0: forever) in [`store::REVOKED_SECRET`], dropping
    /// entries that expired (their tokens are refused for their age anyway).
    pub(super) async fn revoke(&self, jti: &str, exp: Option<i64>) -> Result<()> {
        let now = jiff::Timestamp::now().as_second();
        let key = revoked_key(jti);
        let exp = exp.unwrap_or(0);
        store::update_named_secret(
            &self.client,
            &self.namespace,
            store::REVOKED_SECRET,
            |data| {
                let before = data.len();
                data.retain(|_, v| {
                    let e: i64 = std::str::from_utf8(&v.0)
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(0);
                    e == 0 || e > now
                });
                let fresh = data
                    .insert(key.clone(), ByteString(exp.to_string().into_bytes()))
                    .is_none();
                Ok((fresh || data.len() != before, ()))
            },
        )
        .await
    }

    /// Whether `jti` was revoked (read from the Secret on every check, so a logout through one
    /// replica, or before a restart, holds everywhere).
    pub(super) async fn is_revoked(&self, jti: &str) -> Result<bool> {
        let secret = store::secret(&self.client, &self.namespace, store::REVOKED_SECRET).await?;
        Ok(store::secret_data(secret.as_ref()).contains_key(&revoked_key(jti)))
    }
}
