//! The command line's side of single sign-on (`plumb login --sso`, its token refresh): the
//! provider the server's settings name, discovered and used through the same [`Provider`] as
//! the server's own logins, so the CLI's authorization request (code flow, PKCE S256, state,
//! nonce) and its ID-token checks (signature by a key the provider publishes, asymmetric
//! algorithms only, issuer, audience, expiry, nonce) are the server's. Argo's CLI does not
//! verify the ID token it stores; Plumb's does, before storing it.

use std::time::Duration;

use serde_json::{Map, Value};

use super::config::{Mode, OidcConfig, SsoSettings};
use super::http::Http;
use super::provider::Provider;

/// What the CLI logs in with, from the server's `GET /api/v1/settings` (Argo's
/// `apiclient.OIDCConfig`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CliOidc {
    /// The issuer: `oidcConfig.issuer`, or `<url>/api/dex` for the bundled Dex.
    pub issuer: String,
    /// `cliClientID`, else `clientID`; `argo-cd-cli` for the bundled Dex.
    pub client_id: String,
    /// The scopes asked for (empty: Argo's default, `openid profile email groups`).
    pub scopes: Vec<String>,
    /// `idTokenClaims`, sent as the `claims` parameter.
    pub id_token_claims: Map<String, Value>,
    /// The bundled Dex: Argo's `federated:id` scope is asked for too.
    pub dex: bool,
}

/// A login's authorization request. Its `Debug` shows only the URL's origin.
pub struct CliLoginRequest {
    /// Where the browser goes.
    pub url: String,
    pub state: String,
    pub nonce: String,
    pub pkce_verifier: String,
}

impl std::fmt::Debug for CliLoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliLoginRequest").finish_non_exhaustive()
    }
}

/// Tokens of a login or a refresh: the verified ID token and its claims, the refresh token
/// when the provider gave one. Its `Debug` shows neither token.
pub struct CliTokens {
    pub id_token: String,
    pub refresh_token: Option<String>,
    pub claims: Map<String, Value>,
}

impl std::fmt::Debug for CliTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliTokens")
            .field("refresh_token", &self.refresh_token.is_some())
            .finish_non_exhaustive()
    }
}

/// A device-code login waiting for the user (RFC 8628): what to tell them. Its `Debug` shows
/// no code.
pub struct CliDeviceLogin {
    /// The code to enter at `verification_uri`.
    pub user_code: String,
    pub verification_uri: String,
    /// The URL with the code in it, when the provider gives one.
    pub verification_uri_complete: Option<String>,
    /// How long the code lives.
    pub expires_in: Duration,
    details: openidconnect::core::CoreDeviceAuthorizationResponse,
}

impl std::fmt::Debug for CliDeviceLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliDeviceLogin")
            .field("verification_uri", &self.verification_uri)
            .finish_non_exhaustive()
    }
}

/// A discovered provider, for the CLI.
#[derive(Debug)]
pub struct CliProvider {
    provider: Provider,
}

impl CliProvider {
    /// Discovery and the key set, through `http` (the CLI's client: its `--insecure` applies
    /// to the provider as in Argo, whose CLI asks the provider with the server's TLS settings),
    /// all within `timeout`. `offline_access` is asked for when the provider announces it (so
    /// it gives a refresh token), as Argo's CLI does.
    pub async fn discover(
        oidc: CliOidc,
        http: reqwest::Client,
        timeout: Duration,
    ) -> Result<Self, String> {
        let issuer = oidc.issuer.clone();
        let settings = SsoSettings {
            mode: if oidc.dex {
                Mode::Dex { connectors: vec![] }
            } else {
                Mode::Oidc
            },
            url: String::new(),
            config: OidcConfig {
                issuer: oidc.issuer,
                client_id: oidc.client_id,
                requested_scopes: oidc.scopes,
                requested_id_token_claims: oidc.id_token_claims,
                ..Default::default()
            },
        };
        let discovered = tokio::time::timeout(
            timeout,
            Provider::discover(settings, Http::from_client(http)),
        )
        .await
        .map_err(|_| {
            format!(
                "the identity provider at {issuer} did not answer within {}s",
                timeout.as_secs()
            )
        })?;
        let mut provider = discovered?;
        let offline = "offline_access";
        if provider.scopes_supported().iter().any(|s| s == offline) {
            let mut scopes = provider.settings.scopes();
            // `scopes()` adds Dex's federated scope itself.
            scopes.retain(|s| s != "federated:id");
            if !scopes.iter().any(|s| s == offline) {
                scopes.push(offline.to_string());
            }
            provider.settings.config.requested_scopes = scopes;
        }
        Ok(Self { provider })
    }

    /// The scopes the login asks for.
    pub fn scopes(&self) -> Vec<String> {
        self.provider.settings.scopes()
    }

    /// The authorization request for a callback at `redirect`, with Argo's
    /// `access_type=offline` (providers such as Google give refresh tokens only then).
    pub fn login_request(&self, redirect: &str) -> Result<CliLoginRequest, String> {
        let req = self.provider.login_request(redirect)?;
        let mut url = url::Url::parse(&req.url)
            .map_err(|e| format!("the authorization URL is not valid: {e}"))?;
        url.query_pairs_mut().append_pair("access_type", "offline");
        Ok(CliLoginRequest {
            url: url.to_string(),
            state: req.state,
            nonce: req.nonce,
            pkce_verifier: req.pkce_verifier,
        })
    }

    /// Exchanges the callback's code (with the PKCE verifier) and verifies the ID token,
    /// nonce included.
    pub async fn exchange(
        &self,
        redirect: &str,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<CliTokens, String> {
        let t = self
            .provider
            .exchange(redirect, code, pkce_verifier, nonce)
            .await?;
        Ok(CliTokens {
            id_token: t.id_token,
            refresh_token: t.refresh_token,
            claims: t.claims,
        })
    }

    /// Starts a device-code login at the provider's device authorization endpoint.
    pub async fn device_login(&self) -> Result<CliDeviceLogin, String> {
        let details = self.provider.device_authorization().await?;
        Ok(CliDeviceLogin {
            user_code: details.user_code().secret().clone(),
            verification_uri: details.verification_uri().to_string(),
            verification_uri_complete: details
                .verification_uri_complete()
                .map(|u| u.secret().clone()),
            expires_in: details.expires_in(),
            details,
        })
    }

    /// Waits for a device-code login (polling as the provider asks), at most `timeout`; the
    /// ID token verified.
    pub async fn device_tokens(
        &self,
        login: &CliDeviceLogin,
        timeout: Duration,
    ) -> Result<CliTokens, String> {
        let t = self.provider.device_token(&login.details, timeout).await?;
        Ok(CliTokens {
            id_token: t.id_token,
            refresh_token: t.refresh_token,
            claims: t.claims,
        })
    }

    /// New tokens for a refresh token, the new ID token verified.
    pub async fn refresh(&self, refresh_token: &str) -> Result<CliTokens, String> {
        // The refresh grant sends no redirect; the client only needs a valid one.
        let t = self
            .provider
            .refresh("http://localhost/auth/callback", refresh_token)
            .await?;
        Ok(CliTokens {
            id_token: t.id_token,
            refresh_token: t.refresh_token,
            claims: t.claims,
        })
    }
}
