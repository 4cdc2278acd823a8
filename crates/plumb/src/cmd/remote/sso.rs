//! The CLI's single sign-on tokens: the provider the server's settings name (Argo's
//! `apiclient.OIDCConfig`), and the renewal of an expired ID token with the stored refresh
//! token before a call to the server (Argo's `refreshAuthToken`; the calls are
//! [`super::ServerClient`]'s). The OIDC work is
//! plumb-server's (`plumb_server::CliProvider`).

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use plumb_server::{CliOidc, CliProvider};
use serde_json::{Map, Value};

use super::config::LocalConfig;

/// Discovery, the key set and each token request.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(30);
/// Argo's Dex client for the CLI (`common.ArgoCDCLIClientAppID`).
const DEX_CLI_CLIENT_ID: &str = "argo-cd-cli";

/// Argo's `apiclient.OIDCConfig`: the provider and client the server's settings name.
pub(crate) fn oidc_from_settings(settings: &Value, server: &str) -> Result<CliOidc> {
    if let Some(why) = settings.get("ssoUnavailable").and_then(Value::as_str) {
        bail!("single sign-on is unavailable on {server}: {why}");
    }
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let oidc = settings.get("oidcConfig").unwrap_or(&Value::Null);
    if !text(oidc, "issuer").is_empty() {
        let cli = text(oidc, "cliClientID");
        let scopes = oidc
            .get("scopes")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        return Ok(CliOidc {
            issuer: text(oidc, "issuer"),
            client_id: if cli.is_empty() {
                text(oidc, "clientID")
            } else {
                cli
            },
            scopes,
            id_token_claims: oidc
                .get("idTokenClaims")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            dex: false,
        });
    }
    let connectors = settings
        .pointer("/dexConfig/connectors")
        .and_then(Value::as_array);
    if connectors.is_some_and(|c| !c.is_empty()) {
        let url = text(settings, "url");
        if url.is_empty() {
            bail!("{server} has dex.config but no url in argocd-cm");
        }
        return Ok(CliOidc {
            issuer: format!("{}/api/dex", url.trim_end_matches('/')),
            client_id: DEX_CLI_CLIENT_ID.into(),
            scopes: vec![],
            id_token_claims: Map::new(),
            dex: true,
        });
    }
    bail!("{server} is not configured with SSO")
}

/// The provider the server `server`'s `settings` name, discovered; `insecure` applies to it
/// as in Argo (the bundled Dex is reached through the server).
pub(crate) async fn discover(
    settings: &Value,
    server: &str,
    insecure: bool,
) -> Result<CliProvider> {
    let oidc = oidc_from_settings(settings, server)?;
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(insecure)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(PROVIDER_TIMEOUT)
        .build()
        .context("building the HTTP client for the identity provider")?;
    CliProvider::discover(oidc, http, PROVIDER_TIMEOUT)
        .await
        .map_err(|e| anyhow!("{e}"))
}

/// The claims of a JWT, unverified (the CLI reads its own stored token's expiry and issuer;
/// the server verifies).
pub(crate) fn unverified_claims(token: &str) -> Option<Map<String, Value>> {
    use base64::Engine;
    let part = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Argo's `userDisplayName`: the email, the name, else the user's identifier.
pub(crate) fn display_name(claims: &Map<String, Value>) -> String {
    let field = |k: &str| {
        claims
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    field("email")
        .or_else(|| field("name"))
        .or_else(|| {
            claims
                .get("federated_claims")
                .and_then(|f| f.get("user_id"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .or_else(|| field("sub"))
        .unwrap_or_default()
        .to_string()
}

/// Whether a stored token must be renewed before use: its `exp` has passed (Argo's CLI
/// renews on expiry, with no threshold). A token without `exp` is left alone.
pub(crate) fn expired(token: &str, now: i64) -> bool {
    unverified_claims(token)
        .and_then(|c| c.get("exp").and_then(Value::as_i64))
        .is_some_and(|exp| exp <= now)
}

/// The refresh token to renew `user`'s stored ID token with, when that token has expired and
/// a refresh token is stored.
pub(crate) fn refresh_due(cfg: &LocalConfig, user: &str) -> Option<String> {
    cfg.user(user)
        .filter(|u| !u.refresh_token.is_empty())
        .filter(|u| expired(&u.auth_token, jiff::Timestamp::now().as_second()))
        .map(|u| u.refresh_token.clone())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_provider_comes_from_the_servers_settings_as_in_argo() {
        let direct = json!({"oidcConfig": {"name": "Okta", "issuer": "https://idp", "clientID": "web",
            "cliClientID": "cli", "scopes": ["openid", "groups"], "idTokenClaims": {"groups": {"essential": true}}}});
        let o = oidc_from_settings(&direct, "s").expect("oidc");
        assert_eq!(
            (o.issuer.as_str(), o.client_id.as_str()),
            ("https://idp", "cli")
        );
        assert_eq!(o.scopes, ["openid", "groups"]);
        assert!(!o.dex && o.id_token_claims.contains_key("groups"));
        let no_cli = json!({"oidcConfig": {"issuer": "https://idp", "clientID": "web"}});
        assert_eq!(
            oidc_from_settings(&no_cli, "s").expect("oidc").client_id,
            "web"
        );
        let dex = json!({"url": "https://cd.example/", "dexConfig": {"connectors": [{"name": "GitHub", "type": "github"}]}});
        let o = oidc_from_settings(&dex, "s").expect("dex");
        assert_eq!(o.issuer, "https://cd.example/api/dex");
        assert_eq!(o.client_id, "argo-cd-cli");
        assert!(o.dex);
        let e = oidc_from_settings(&json!({"url": "https://x"}), "cd:443").expect_err("no sso");
        assert_eq!(e.to_string(), "cd:443 is not configured with SSO");
        let e =
            oidc_from_settings(&json!({"ssoUnavailable": "issuer down"}), "cd").expect_err("down");
        assert!(e.to_string().contains("issuer down"), "{e}");
        let e =
            oidc_from_settings(&json!({"dexConfig": {"connectors": [{}]}}), "cd").expect_err("url");
        assert!(e.to_string().contains("no url"), "{e}");
    }

    #[test]
    fn stored_tokens_are_read_for_expiry_and_names_only() {
        let b64 = |v: &Value| {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        let token =
            |claims: Value| format!("{}.{}.sig", b64(&json!({"alg": "RS256"})), b64(&claims));
        assert!(expired(&token(json!({"exp": 100})), 100));
        assert!(!expired(&token(json!({"exp": 101})), 100));
        assert!(
            !expired(&token(json!({"sub": "x"})), 100),
            "no exp: left alone"
        );
        assert!(!expired("not-a-jwt", 100));
        let c = unverified_claims(&token(
            json!({"sub": "s", "federated_claims": {"user_id": "u"}}),
        ))
        .expect("claims");
        assert_eq!(display_name(&c), "u");
        let c = unverified_claims(&token(json!({"sub": "s", "email": "a@b"}))).expect("claims");
        assert_eq!(display_name(&c), "a@b");
    }
}
