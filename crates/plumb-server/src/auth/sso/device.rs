//! RFC 8628's device authorization grant, for the CLI on a machine without a browser (`plumb
//! login --sso --device-code`): the provider's `device_authorization_endpoint` gives a user
//! code and a verification URL to open anywhere, and the token endpoint is polled at the
//! interval the provider asks (longer after its `slow_down`) until the login completes, is
//! refused (`access_denied`) or expires (`expired_token`). The polling is the `openidconnect`
//! crate's; the ID token is verified as a login's (there is no nonce in this grant).

use std::time::Duration;

use openidconnect::core::CoreDeviceAuthorizationResponse;
use openidconnect::{
    DeviceCodeErrorResponseType, OAuth2TokenResponse, RequestTokenError, Scope, TokenResponse,
};

use super::provider::{LoginTokens, Provider, TOKEN_VERIFICATION_ERROR, chain};

/// The client needs a redirect URL to be built; the device grant sends none.
const NO_REDIRECT: &str = "http://localhost/auth/callback";

impl Provider {
    fn device_endpoint(&self) -> Result<openidconnect::DeviceAuthorizationUrl, String> {
        self.metadata
            .additional_metadata()
            .additional_metadata
            .device_authorization_endpoint
            .clone()
            .ok_or_else(|| {
                format!(
                    "the identity provider at {} offers no device code flow (no device_authorization_endpoint in its discovery document)",
                    self.issuer()
                )
            })
    }

    /// The device authorization request, with the login's scopes.
    pub(crate) async fn device_authorization(
        &self,
    ) -> Result<CoreDeviceAuthorizationResponse, String> {
        let client = self
            .client(NO_REDIRECT)?
            .set_device_authorization_url(self.device_endpoint()?);
        let mut req = client.exchange_device_code();
        for s in self.settings.scopes().into_iter().filter(|s| s != "openid") {
            req = req.add_scope(Scope::new(s));
        }
        req.request_async(self.http())
            .await
            .map_err(|e| format!("the device authorization request failed: {}", chain(&e)))
    }

    /// Polls the token endpoint for `details` until the login ends, at most `timeout` (and
    /// never past the code's own expiry); the ID token verified.
    pub(crate) async fn device_token(
        &self,
        details: &CoreDeviceAuthorizationResponse,
        timeout: Duration,
    ) -> Result<LoginTokens, String> {
        let client = self
            .client(NO_REDIRECT)?
            .set_device_authorization_url(self.device_endpoint()?);
        let response = client
            .exchange_device_access_token(details)
            .map_err(|e| format!("the identity provider has no token endpoint: {e}"))?
            .request_async(self.http(), tokio::time::sleep, Some(timeout))
            .await
            .map_err(|e| device_error(&e))?;
        let id_token = response
            .id_token()
            .ok_or("no id_token in the token response")?
            .to_string();
        let claims = self
            .verify(&id_token, None)
            .await
            .map_err(|e| format!("{TOKEN_VERIFICATION_ERROR}: {e}"))?;
        Ok(LoginTokens {
            id_token,
            access_token: response.access_token().secret().clone(),
            refresh_token: response.refresh_token().map(|t| t.secret().clone()),
            claims,
        })
    }
}

/// RFC 8628's answers as a person reads them (the provider's description bounded).
fn device_error<RE: std::error::Error + 'static>(
    e: &RequestTokenError<RE, openidconnect::DeviceCodeErrorResponse>,
) -> String {
    let RequestTokenError::ServerResponse(r) = e else {
        return format!("waiting for the device login failed: {}", chain(e));
    };
    let described = r
        .error_description()
        .map(|d| {
            let d: String = d.chars().filter(|c| !c.is_control()).take(300).collect();
            format!(" ({d})")
        })
        .unwrap_or_default();
    match r.error() {
        DeviceCodeErrorResponseType::AccessDenied => {
            format!("the login was refused at the identity provider (access_denied){described}")
        }
        DeviceCodeErrorResponseType::ExpiredToken => format!(
            "the code expired before the login was completed in the browser (expired_token){described}; run the command again"
        ),
        other => format!(
            "the identity provider refused the device login: {}{described}",
            other.as_ref()
        ),
    }
}
