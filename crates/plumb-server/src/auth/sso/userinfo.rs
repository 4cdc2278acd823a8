//! Groups from the identity provider's userinfo endpoint, for providers that leave them out of
//! the ID token (Argo's `enableUserInfoGroups`, `userInfoPath`, `userInfoCacheExpiration` and
//! `ClientApp.GetUserInfo`/`SetGroupsClaimFromEndpoint`): the access token of each login is kept
//! (by subject, until the ID token expires), the endpoint asked with it, and the answer's
//! `groups` replace the ID token's, cached until the earlier of the token's expiry and
//! `userInfoCacheExpiration`. Argo keeps both encrypted in Redis; here they live in the
//! server's memory only, bounded. Requests go through the provider's bounded client.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::provider::Provider;

/// Subjects remembered at most (each map); the ones closest to expiry go first when full.
const MAX_ENTRIES: usize = 10_000;

/// Access tokens and userinfo answers by subject.
#[derive(Default)]
pub(crate) struct UserInfo {
    /// subject → (access token, expiry as Unix seconds).
    tokens: Mutex<HashMap<String, (String, i64)>>,
    /// subject → (the answer's `groups`, cached until).
    groups: Mutex<HashMap<String, (Value, Instant)>>,
}

fn bounded<V>(map: &mut HashMap<String, V>, expiry: impl Fn(&V) -> i128) {
    if map.len() < MAX_ENTRIES {
        return;
    }
    let mut by_expiry: Vec<(String, i128)> =
        map.iter().map(|(k, v)| (k.clone(), expiry(v))).collect();
    by_expiry.sort_by_key(|(_, e)| *e);
    for (k, _) in by_expiry.into_iter().take(MAX_ENTRIES / 10) {
        map.remove(&k);
    }
}

/// Argo's `UserInfoCacheExpiration`: a Go duration (`5m`, `1h30m`, `500ms`); unparsable is
/// none (Argo logs and uses 0, which means the token's expiry).
pub(crate) fn parse_go_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut total = 0f64;
    let mut rest = text;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..n_end].parse().ok()?;
        rest = &rest[n_end..];
        let u_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..u_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += n * unit;
        rest = &rest[u_end..];
    }
    (total.is_finite() && total > 0.0 && total < 1e10).then(|| Duration::from_secs_f64(total))
}

impl UserInfo {
    /// Keeps the access token of a login for `subject` until `expires` (Unix seconds).
    pub(crate) fn remember(&self, subject: &str, access_token: &str, expires: i64) {
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        let now = jiff::Timestamp::now().as_second();
        tokens.retain(|_, (_, exp)| *exp > now);
        bounded(&mut tokens, |(_, exp)| i128::from(*exp));
        tokens.insert(subject.to_string(), (access_token.to_string(), expires));
        // A new login asks the endpoint again.
        self.groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(subject);
    }

    /// `claims` with `groups` from the userinfo endpoint when the settings ask for it (Argo's
    /// `SetGroupsClaimFromEndpoint`); an error makes the session invalid, as in Argo.
    pub(crate) async fn with_groups(
        &self,
        provider: &Provider,
        mut claims: Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        let cfg = &provider.settings.config;
        if !cfg.enable_user_info_groups || cfg.user_info_path.is_empty() {
            return Ok(claims);
        }
        let sub = claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let cached = self
            .groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&sub)
            .filter(|(_, until)| *until > Instant::now())
            .map(|(g, _)| g.clone());
        let groups = match cached {
            Some(g) => g,
            None => self.fetch(provider, &sub, &claims).await?,
        };
        claims.insert("groups".into(), groups);
        Ok(claims)
    }

    async fn fetch(
        &self,
        provider: &Provider,
        sub: &str,
        id_claims: &Map<String, Value>,
    ) -> Result<Value, String> {
        let token = self
            .tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(sub)
            .map(|(t, _)| t.clone())
            .ok_or_else(|| {
                "error while querying userinfo endpoint: no access token for this session (the server restarted or the login is older); log in again".to_string()
            })?;
        let cfg = &provider.settings.config;
        // A path on the issuer: `@host/...` or `.evil.com/...` would send the access token
        // elsewhere.
        if !cfg.user_info_path.starts_with('/') || cfg.user_info_path.starts_with("//") {
            return Err(format!(
                "oidc.config userInfoPath {:?} must be a path starting with /",
                cfg.user_info_path
            ));
        }
        let url = format!("{}{}", cfg.issuer.trim_end_matches('/'), cfg.user_info_path);
        let answer = provider
            .http()
            .get_bearer(&url, &token)
            .await
            .map_err(|e| format!("error fetching user info endpoint: failed to query userinfo endpoint of IDP: {e}"))?;
        if answer.status == 401 {
            return Err("error while querying userinfo endpoint: the identity provider refused the access token (401)".into());
        }
        if answer.status != 200 {
            return Err(format!(
                "error fetching user info endpoint: {url} answered {}",
                answer.status
            ));
        }
        let info: Map<String, Value> = if answer.content_type.starts_with("application/jwt") {
            let jwt = String::from_utf8_lossy(&answer.body).trim().to_string();
            provider
                .verify(&jwt, None)
                .await
                .map_err(|e| format!("user info response in jwt format not valid: {e}"))?
        } else {
            serde_json::from_slice(&answer.body)
                .map_err(|e| format!("failed to decode response body to struct: {e}"))?
        };
        if info.get("sub").and_then(Value::as_str) != Some(sub) {
            return Err("subject of claims from user info endpoint didn't match subject of idToken, see https://openid.net/specs/openid-connect-core-1_0.html#UserInfo".into());
        }
        let groups = info.get("groups").cloned().unwrap_or(Value::Null);
        let exp = info
            .get("exp")
            .and_then(Value::as_i64)
            .or_else(|| id_claims.get("exp").and_then(Value::as_i64))
            .unwrap_or(0);
        let left = Duration::from_secs(
            u64::try_from(exp - jiff::Timestamp::now().as_second()).unwrap_or(0),
        );
        let ttl = match parse_go_duration(&cfg.user_info_cache_expiration) {
            Some(setting) if setting < left => setting,
            _ => left,
        };
        let mut cache = self.groups.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        cache.retain(|_, (_, until)| *until > now);
        bounded(&mut cache, |(_, until)| {
            until.saturating_duration_since(now).as_millis() as i128
        });
        cache.insert(sub.to_string(), (groups.clone(), now + ttl));
        Ok(groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_go_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_go_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)));
        for bad in ["", "5", "5 minutes", "m", "-1s", "1e400h", "0s"] {
            assert_eq!(parse_go_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn remembered_tokens_are_bounded() {
        let u = UserInfo::default();
        let far = jiff::Timestamp::now().as_second() + 3600;
        for i in 0..MAX_ENTRIES + 5 {
            u.remember(&format!("s{i}"), "t", far + i as i64);
        }
        let n = u.tokens.lock().expect("lock").len();
        assert!(n <= MAX_ENTRIES, "{n}");
        assert!(
            u.tokens
                .lock()
                .expect("lock")
                .contains_key(&format!("s{}", MAX_ENTRIES + 4))
        );
    }
}
