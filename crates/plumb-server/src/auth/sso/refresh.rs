//! Redeeming a refresh token at the provider's token endpoint (OAuth 2.0 `refresh_token`
//! grant), as Argo's CLI does when its stored ID token has expired (`refreshAuthToken` in
//! `pkg/apiclient`): the new ID token is verified as a login's is (signature, issuer, audience,
//! expiry; there is no nonce in a refresh), and a provider that rotates nothing leaves the old
//! refresh token in use. The server's own `refreshTokenThreshold` sessions are not built on this
//! yet (docs/sso.md says why).

use openidconnect::{OAuth2TokenResponse, RefreshToken, TokenResponse};

use super::provider::{LoginTokens, Provider, TOKEN_VERIFICATION_ERROR, chain};

impl Provider {
    /// New tokens for `refresh_token`; `redirect` only configures the client (the refresh
    /// grant sends none). Errors never hold a token.
    pub(crate) async fn refresh(
        &self,
        redirect: &str,
        refresh_token: &str,
    ) -> Result<LoginTokens, String> {
        let client = self.client(redirect)?;
        let secret = RefreshToken::new(refresh_token.to_string());
        let response = client
            .exchange_refresh_token(&secret)
            .map_err(|e| format!("the identity provider has no token endpoint: {e}"))?
            .request_async(self.http())
            .await
            .map_err(|e| format!("refreshing the token failed: {}", chain(&e)))?;
        let id_token = response
            .id_token()
            .ok_or("no id_token in the refresh response")?
            .to_string();
        let claims = self
            .verify(&id_token, None)
            .await
            .map_err(|e| format!("{TOKEN_VERIFICATION_ERROR}: {e}"))?;
        let rotated = response.refresh_token().map(|t| t.secret().clone());
        Ok(LoginTokens {
            id_token,
            access_token: response.access_token().secret().clone(),
            refresh_token: rotated.or_else(|| Some(refresh_token.to_string())),
            claims,
        })
    }
}
