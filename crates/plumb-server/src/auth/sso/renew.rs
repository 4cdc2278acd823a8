//! The server's renewal of browser sessions, as Argo's `getClaims` (`server/server.go`) and
//! `CheckAndRefreshToken` (`util/oidc`): a cookie's ID token within `refreshTokenThreshold` of
//! its expiry, or expired, is continued with the refresh token stored at the login
//! ([`super::sessions`]); the new ID token is verified and becomes the cookie. An expired token
//! is only ever a key to its stored session: its signature, issuer and audience verified, bound
//! to the session's latest tokens, the session not past its maximum length.

use serde_json::{Map, Value};

use super::provider::{LoginTokens, Provider};
use super::sessions::{self, MAX_REFRESH_TOKEN_BYTES, Stored};
use crate::auth::store;
use crate::state::{AppState, SETTINGS_CONFIGMAP};

/// Session length unless `users.session.duration` says otherwise (Argo's 24 hours).
const DEFAULT_SESSION_SECS: i64 = 24 * 3600;

/// Argo's `RefreshTokenThresholdWithConfig`: how long before its expiry a browser session's ID
/// token is renewed; 0 (renewed once expired) when unset or unparsable, as in Argo.
fn refresh_threshold(provider: &Provider) -> std::time::Duration {
    let text = &provider.settings.config.refresh_token_threshold;
    match super::userinfo::parse_go_duration(text) {
        Some(d) => d,
        None if text.trim().is_empty() => std::time::Duration::ZERO,
        None => {
            tracing::warn!("Failed to parse 'oidc.config.refreshTokenThreshold' key: {text:?}");
            std::time::Duration::ZERO
        }
    }
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

fn claim<'a>(claims: &'a Map<String, Value>, name: &str) -> &'a str {
    claims.get(name).and_then(Value::as_str).unwrap_or_default()
}

/// The session's key in the store (Argo's `sub` and `sid`).
fn key_of(claims: &Map<String, Value>) -> String {
    sessions::session_key(claim(claims, "sub"), claim(claims, "sid"))
}

impl AppState {
    /// Keeps a login's refresh token (the callback), for `users.session.duration`. A failure
    /// is logged: the session then ends with its ID token, as without a refresh token.
    pub(crate) async fn sso_keep_session(&self, server_key: &[u8], tokens: &LoginTokens) {
        let Some(refresh) = tokens.refresh_token.as_deref() else {
            return;
        };
        if refresh.len() > MAX_REFRESH_TOKEN_BYTES {
            tracing::warn!(
                "the identity provider's refresh token is over {MAX_REFRESH_TOKEN_BYTES} bytes; the session is not renewed"
            );
            return;
        }
        let length =
            match store::config_map(&self.client, &self.namespace, SETTINGS_CONFIGMAP).await {
                Ok(cm) => cm
                    .get("users.session.duration")
                    .and_then(|d| plumb_model::duration::parse_duration(d))
                    .and_then(|d| i64::try_from(d.as_secs()).ok())
                    .unwrap_or(DEFAULT_SESSION_SECS),
                Err(e) => {
                    tracing::warn!("the session is not kept for renewal: {e}");
                    return;
                }
            };
        let started = now();
        let entry = Stored {
            refresh_token: refresh.to_string(),
            tokens: vec![sessions::token_hash(&tokens.id_token)],
            started,
            ends: started.saturating_add(length),
        };
        let key = key_of(&tokens.claims);
        if let Err(e) = self.sso_store_session(server_key, &key, &entry).await {
            tracing::warn!("the session is not kept for renewal: {e}");
        }
    }

    /// A valid cookie token within the threshold of its expiry, renewed; `None` when it is not
    /// due, has no stored session, or the renewal failed (logged: the token still holds).
    pub(crate) async fn sso_renew_early(
        &self,
        provider: &Provider,
        server_key: &[u8],
        token: &str,
        claims: &Map<String, Value>,
    ) -> Option<LoginTokens> {
        let threshold = i64::try_from(refresh_threshold(provider).as_secs()).ok()?;
        let exp = claims.get("exp").and_then(Value::as_i64)?;
        if exp - now() >= threshold {
            return None;
        }
        match self.sso_continue(provider, server_key, token, claims).await {
            Ok(renewed) => renewed,
            Err(why) => {
                tracing::warn!(
                    user = claim(claims, "sub"),
                    "renewing the session failed: {why}"
                );
                None
            }
        }
    }

    /// An expired cookie token's session continued, or why it cannot be (no token in it).
    pub(crate) async fn sso_renew_expired(
        &self,
        provider: &Provider,
        server_key: &[u8],
        token: &str,
    ) -> std::result::Result<LoginTokens, String> {
        let claims = provider
            .verify_expired(token)
            .await
            .map_err(|e| format!("the token is expired and cannot renew the session: {e}"))?;
        match self.sso_continue(provider, server_key, token, &claims).await {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err("the token is expired and its session cannot be renewed (no refresh token is kept for it: it was logged out, reached users.session.duration, or the provider gave none)".into()),
            Err(why) => Err(format!("the token is expired and renewing its session failed: {why}")),
        }
    }

    /// The stored session `token` belongs to, renewed at the provider; `None` without one.
    async fn sso_continue(
        &self,
        provider: &Provider,
        server_key: &[u8],
        token: &str,
        claims: &Map<String, Value>,
    ) -> std::result::Result<Option<LoginTokens>, String> {
        let key = key_of(claims);
        let stored = self
            .sso_session(server_key, &key)
            .await
            .map_err(|e| e.to_string())?;
        let Some(stored) = stored.filter(|s| s.binds(token) && s.ends > now()) else {
            return Ok(None);
        };
        let mut renewed = provider
            .refresh(&provider.settings.redirect_url(), &stored.refresh_token)
            .await?;
        if claim(&renewed.claims, "sub") != claim(claims, "sub") {
            return Err("the renewed ID token names another subject".into());
        }
        renewed.refresh_token = renewed
            .refresh_token
            .filter(|r| r.len() <= MAX_REFRESH_TOKEN_BYTES);
        let kept = self
            .sso_record_renewal(
                server_key,
                &key,
                token,
                &renewed.id_token,
                renewed.refresh_token.clone(),
            )
            .await
            .map_err(|e| e.to_string())?;
        if !kept {
            return Err("the session was logged out while it was renewed".into());
        }
        if provider.settings.config.enable_user_info_groups {
            let exp = renewed
                .claims
                .get("exp")
                .and_then(Value::as_i64)
                .unwrap_or_default();
            self.sso_remember_access_token(claim(claims, "sub"), &renewed.access_token, exp);
        }
        tracing::info!(
            user = claim(claims, "sub"),
            "renewed the session's ID token"
        );
        Ok(Some(renewed))
    }

    /// A logout of an SSO session (`/auth/logout`, `DELETE /api/v1/session`): its stored
    /// refresh token forgotten and the ID token revoked until its expiry, so neither the
    /// cookie nor a copy of it continues the session. Tokens that are not this provider's
    /// (their signature, issuer and audience checked, expired or not) change nothing.
    pub(crate) async fn sso_end_session(&self, token: &str) -> crate::error::Result<()> {
        let (inputs, status) = self.sso_now().await?;
        let super::Status::Ready(provider) = status else {
            return Ok(());
        };
        let Ok(claims) = provider.verify_expired(token).await else {
            return Ok(());
        };
        let key = key_of(&claims);
        self.sso_forget_session(&inputs.server_key, &key, token)
            .await?;
        let exp = claims.get("exp").and_then(Value::as_i64);
        self.revoke(&sessions::token_hash(token), exp).await
    }
}
