//! One identity provider, discovered: its metadata and signing keys, ID-token verification
//! (signature by a key of its JWKS, algorithms pinned to asymmetric ones it announces, issuer,
//! audience, expiry and issue time with a bounded clock skew, nonce on the login callback), the
//! keys fetched again when a token names a key not seen yet (key rotation), and the
//! authorization-code flow's two requests. The OIDC work is the `openidconnect` crate's.

use std::sync::RwLock;
use std::time::{Duration, Instant};

use base64::Engine;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreClientAuthMethod, CoreIdToken, CoreIdTokenVerifier,
    CoreJsonWebKeySet, CoreJwsSigningAlgorithm,
};
use openidconnect::{
    AuthType, AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, JsonWebKey,
    LogoutRequest, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier,
    PostLogoutRedirectUrl, RedirectUrl, Scope, TokenResponse,
};
use serde_json::{Map, Value};

use super::config::SsoSettings;
use super::http::Http;

/// Argo's `common.TokenVerificationError`: what a caller is told when a token is refused.
pub(crate) const TOKEN_VERIFICATION_ERROR: &str = "failed to verify the token";
/// How far a token's expiry and issue time may be off this server's clock.
pub(crate) const CLOCK_SKEW: Duration = Duration::from_secs(30);
/// The key set is fetched again for an unknown key at most this often, so tokens naming made-up
/// keys cannot make the server hammer the provider.
const JWKS_REFETCH_INTERVAL: Duration = Duration::from_secs(10);
/// Asymmetric algorithms only: an HMAC-signed token would be signed with the client secret,
/// which a public CLI client shares (as go-oidc, which Argo uses, refuses HS*).
const ASYMMETRIC: [CoreJwsSigningAlgorithm; 9] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// The discovery fields Plumb reads beyond the core ones: RP-initiated logout's
/// `end_session_endpoint` and RFC 8628's `device_authorization_endpoint`.
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize)]
pub(crate) struct DeviceMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) device_authorization_endpoint: Option<openidconnect::DeviceAuthorizationUrl>,
}
impl openidconnect::AdditionalProviderMetadata for DeviceMetadata {}

/// openidconnect's `ProviderMetadataWithLogout` with the device endpoint too.
pub(crate) type Metadata = openidconnect::ProviderMetadata<
    openidconnect::LogoutProviderMetadata<DeviceMetadata>,
    openidconnect::core::CoreAuthDisplay,
    CoreClientAuthMethod,
    openidconnect::core::CoreClaimName,
    openidconnect::core::CoreClaimType,
    openidconnect::core::CoreGrantType,
    openidconnect::core::CoreJweContentEncryptionAlgorithm,
    openidconnect::core::CoreJweKeyManagementAlgorithm,
    openidconnect::core::CoreJsonWebKey,
    openidconnect::core::CoreResponseMode,
    openidconnect::core::CoreResponseType,
    openidconnect::core::CoreSubjectIdentifierType,
>;

/// What a login redirect needs to remember (in the state cookie).
pub(crate) struct LoginRequest {
    pub(crate) url: String,
    pub(crate) state: String,
    pub(crate) nonce: String,
    pub(crate) pkce_verifier: String,
}

/// The tokens of a completed login.
pub(crate) struct LoginTokens {
    pub(crate) id_token: String,
    /// For the userinfo endpoint (`enableUserInfoGroups`).
    pub(crate) access_token: String,
    pub(crate) refresh_token: Option<String>,
    pub(crate) claims: Map<String, Value>,
}

/// A discovered provider.
pub(crate) struct Provider {
    pub(crate) settings: SsoSettings,
    pub(super) metadata: Metadata,
    issuer_url: IssuerUrl,
    algorithms: Vec<CoreJwsSigningAlgorithm>,
    jwks: RwLock<(CoreJsonWebKeySet, Instant)>,
    /// The same keys parsed for `ring` ([`super::rs256`]), replaced with them.
    rs256: RwLock<super::rs256::Rs256Keys>,
    refetch: tokio::sync::Mutex<()>,
    http: Http,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Why a token was refused (never holds the token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("the token is expired")]
    Expired,
    #[error("the token is signed by a key the identity provider does not publish")]
    UnknownKey,
    #[error("the token is not valid: {0}")]
    Invalid(String),
}

impl Provider {
    /// Discovery and the key set, each request bounded by the client's timeout.
    pub(crate) async fn discover(settings: SsoSettings, http: Http) -> Result<Self, String> {
        let issuer = IssuerUrl::new(settings.config.issuer.clone())
            .map_err(|e| format!("issuer {}: {e}", settings.config.issuer))?;
        let metadata = Metadata::discover_async(issuer.clone(), &http)
            .await
            .map_err(|e| {
                format!(
                    "discovery at {}/.well-known/openid-configuration failed: {}",
                    settings.config.issuer,
                    chain(&e)
                )
            })?;
        let algorithms = pinned_algorithms(metadata.id_token_signing_alg_values_supported());
        let jwks = metadata.jwks().clone();
        usable(&jwks, metadata.jwks_uri().as_str())?;
        Ok(Self {
            settings,
            metadata,
            issuer_url: issuer,
            algorithms,
            rs256: RwLock::new(super::rs256::Rs256Keys::of(&jwks)),
            jwks: RwLock::new((jwks, Instant::now())),
            refetch: tokio::sync::Mutex::new(()),
            http,
        })
    }

    /// A provider from its discovery document and key set, without fetching anything (tests and
    /// the verification benchmark).
    pub(crate) fn from_documents(
        settings: SsoSettings,
        discovery: Value,
        jwks: Value,
    ) -> Result<Self, String> {
        let metadata: Metadata =
            serde_json::from_value(discovery).map_err(|e| format!("discovery document: {e}"))?;
        let jwks: CoreJsonWebKeySet =
            serde_json::from_value(jwks).map_err(|e| format!("key set: {e}"))?;
        usable(&jwks, "given")?;
        let issuer_url = IssuerUrl::new(settings.config.issuer.clone())
            .map_err(|e| format!("issuer {}: {e}", settings.config.issuer))?;
        let http = Http::new(Duration::from_secs(5), "", None)?;
        Ok(Self {
            algorithms: pinned_algorithms(metadata.id_token_signing_alg_values_supported()),
            settings,
            metadata,
            issuer_url,
            rs256: RwLock::new(super::rs256::Rs256Keys::of(&jwks)),
            jwks: RwLock::new((jwks, Instant::now())),
            refetch: tokio::sync::Mutex::new(()),
            http,
        })
    }

    /// The HTTP client the provider is asked with.
    pub(crate) fn http(&self) -> &Http {
        &self.http
    }

    /// The scopes the provider announces (`scopes_supported`).
    pub(super) fn scopes_supported(&self) -> Vec<String> {
        self.metadata
            .scopes_supported()
            .map(|s| s.iter().map(|x| x.to_string()).collect())
            .unwrap_or_default()
    }

    /// The issuer tokens of this provider name.
    pub(crate) fn issuer(&self) -> &str {
        &self.settings.config.issuer
    }

    /// The verified claims of an ID token: for every allowed audience in turn (Argo's
    /// `OAuth2AllowedAudiences`), the key set fetched again once when the token names a key not
    /// in it. `nonce`: the login callback's; bearer tokens are checked without one.
    pub(crate) async fn verify(
        &self,
        token: &str,
        nonce: Option<&str>,
    ) -> Result<Map<String, Value>, Refused> {
        match self.verify_with_current_keys(token, nonce) {
            Err(Refused::UnknownKey) => {
                self.refetch_keys().await;
                self.verify_with_current_keys(token, nonce)
            }
            other => other,
        }
    }

    /// [`Provider::verify`] against the keys held now, without fetching.
    pub(crate) fn verify_with_current_keys(
        &self,
        token: &str,
        nonce: Option<&str>,
    ) -> Result<Map<String, Value>, Refused> {
        self.verify_at(token, nonce, None)
    }

    /// An expired ID token's claims once its signature, issuer, audience and issue time are
    /// verified as [`Provider::verify`] does, its expiry aside: only to continue a stored
    /// session with its refresh token (the token itself is never accepted as a session).
    pub(crate) async fn verify_expired(&self, token: &str) -> Result<Map<String, Value>, Refused> {
        let exp = payload(token)?
            .get("exp")
            .and_then(Value::as_i64)
            .ok_or_else(|| Refused::Invalid("no exp claim".into()))?;
        // The verifier's clock set just before the token's own expiry.
        let at = chrono::DateTime::from_timestamp(exp.saturating_sub(1), 0)
            .ok_or_else(|| Refused::Invalid("exp is out of range".into()))?;
        match self.verify_at(token, None, Some(at)) {
            Err(Refused::UnknownKey) => {
                self.refetch_keys().await;
                self.verify_at(token, None, Some(at))
            }
            other => other,
        }
    }

    fn verify_at(
        &self,
        token: &str,
        nonce: Option<&str>,
        at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Map<String, Value>, Refused> {
        let parsed: CoreIdToken = token
            .parse()
            .map_err(|e| Refused::Invalid(format!("not a signed JWT: {e}")))?;
        let rs256 = self
            .algorithms
            .contains(&CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256);
        let signed = match rs256
            .then(|| {
                self.rs256
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .check(token)
            })
            .flatten()
        {
            Some(Ok(())) => true,
            Some(Err(why)) => return Err(Refused::Invalid(why)),
            None => false,
        };
        // With the signature checked, the claims need no key set.
        let jwks = if signed {
            CoreJsonWebKeySet::new(Vec::new())
        } else {
            self.jwks
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .0
                .clone()
        };
        let audiences = self.settings.allowed_audiences();
        let mut last = Refused::Invalid("no audience is allowed".into());
        for aud in &audiences {
            let mut verifier = self.verifier(aud, &audiences, jwks.clone(), at);
            if signed {
                verifier = verifier.insecure_disable_signature_check();
            }
            let checked = parsed.claims(&verifier, |n: Option<&Nonce>| match (nonce, n) {
                (None, _) => Ok(()),
                (Some(want), Some(got)) if want == got.secret() => Ok(()),
                (Some(_), _) => Err("the nonce does not match the login's".to_string()),
            });
            match checked {
                Ok(_) => return payload(token),
                Err(e) => {
                    last = refusal(&e);
                    if !matches!(
                        e,
                        openidconnect::ClaimsVerificationError::InvalidAudience(_)
                    ) {
                        return Err(last);
                    }
                }
            }
        }
        Err(last)
    }

    fn verifier<'a>(
        &self,
        aud: &str,
        audiences: &'a [String],
        jwks: CoreJsonWebKeySet,
        at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> CoreIdTokenVerifier<'a> {
        let skew = chrono::Duration::from_std(CLOCK_SKEW).unwrap_or_default();
        let now = move || at.unwrap_or_else(|| chrono::Utc::now() - skew);
        CoreIdTokenVerifier::new_public_client(
            ClientId::new(aud.to_string()),
            self.issuer_url.clone(),
            jwks,
        )
        .set_allowed_algs(self.algorithms.clone())
        .set_other_audience_verifier_fn(move |a| audiences.iter().any(|x| x == a.as_str()))
        .set_time_fn(now)
        .set_issue_time_verifier_fn(move |iat| {
            if iat > chrono::Utc::now() + skew {
                Err(format!("issued in the future ({iat})"))
            } else {
                Ok(())
            }
        })
    }

    async fn refetch_keys(&self) {
        let _one_at_a_time = self.refetch.lock().await;
        let fetched = self.jwks.read().unwrap_or_else(|p| p.into_inner()).1;
        if fetched.elapsed() < JWKS_REFETCH_INTERVAL {
            return;
        }
        match CoreJsonWebKeySet::fetch_async(self.metadata.jwks_uri(), &self.http).await {
            Ok(set) if usable(&set, self.metadata.jwks_uri().as_str()).is_ok() => {
                tracing::info!(
                    issuer = self.issuer(),
                    "fetched the identity provider's keys again"
                );
                *self.rs256.write().unwrap_or_else(|p| p.into_inner()) =
                    super::rs256::Rs256Keys::of(&set);
                *self.jwks.write().unwrap_or_else(|p| p.into_inner()) = (set, Instant::now());
            }
            Ok(_) => {
                tracing::warn!(
                    issuer = self.issuer(),
                    "the identity provider's new key set has no usable key; keeping the old one"
                );
                self.jwks.write().unwrap_or_else(|p| p.into_inner()).1 = Instant::now();
            }
            Err(e) => {
                tracing::warn!(
                    issuer = self.issuer(),
                    "fetching the identity provider's keys: {}",
                    chain(&e)
                );
                self.jwks.write().unwrap_or_else(|p| p.into_inner()).1 = Instant::now();
            }
        }
    }

    pub(super) fn client(&self, redirect: &str) -> Result<ConfiguredClient, String> {
        let secret = Some(self.settings.config.client_secret.clone())
            .filter(|s| !s.is_empty())
            .map(ClientSecret::new);
        let redirect = RedirectUrl::new(redirect.to_string())
            .map_err(|e| format!("redirect URL {redirect}: {e}"))?;
        let basic = self
            .metadata
            .token_endpoint_auth_methods_supported()
            .is_none_or(|m| m.contains(&CoreClientAuthMethod::ClientSecretBasic));
        Ok(CoreClient::from_provider_metadata(
            self.metadata.clone(),
            ClientId::new(self.settings.config.client_id.clone()),
            secret,
        )
        .set_redirect_uri(redirect)
        .set_auth_type(if basic {
            AuthType::BasicAuth
        } else {
            AuthType::RequestBody
        }))
    }

    /// The authorization request: code flow, PKCE (S256), state and nonce, the configured
    /// scopes, `requestedIDTokenClaims` as the `claims` parameter, `domainHint`.
    pub(crate) fn login_request(&self, redirect: &str) -> Result<LoginRequest, String> {
        let client = self.client(redirect)?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut req = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .set_pkce_challenge(challenge);
        for s in self.settings.scopes().into_iter().filter(|s| s != "openid") {
            req = req.add_scope(Scope::new(s));
        }
        let cfg = &self.settings.config;
        if !cfg.requested_id_token_claims.is_empty() {
            let claims = serde_json::json!({"id_token": cfg.requested_id_token_claims});
            req = req.add_extra_param("claims", claims.to_string());
        }
        if !cfg.domain_hint.is_empty() {
            req = req.add_extra_param("domain_hint", cfg.domain_hint.clone());
        }
        let (url, state, nonce) = req.url();
        Ok(LoginRequest {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            pkce_verifier: verifier.secret().clone(),
        })
    }

    /// Exchanges the code (with the PKCE verifier) and verifies the ID token with the nonce.
    pub(crate) async fn exchange(
        &self,
        redirect: &str,
        code: &str,
        pkce_verifier: &str,
        nonce: &str,
    ) -> Result<LoginTokens, String> {
        let client = self.client(redirect)?;
        let mut req = client
            .exchange_code(AuthorizationCode::new(code.to_string()))
            .map_err(|e| format!("the identity provider has no token endpoint: {e}"))?;
        if !pkce_verifier.is_empty() {
            req = req.set_pkce_verifier(PkceCodeVerifier::new(pkce_verifier.to_string()));
        }
        let response = req
            .request_async(&self.http)
            .await
            .map_err(|e| format!("failed to get token: {}", chain(&e)))?;
        let id_token = response
            .id_token()
            .ok_or("no id_token in token response")?
            .to_string();
        let claims = self
            .verify(&id_token, Some(nonce))
            .await
            .map_err(|e| format!("{}: {e}", TOKEN_VERIFICATION_ERROR))?;
        Ok(LoginTokens {
            id_token,
            access_token: response.access_token().secret().clone(),
            refresh_token: response.refresh_token().map(|t| t.secret().clone()),
            claims,
        })
    }

    /// Where logging out sends the browser: `logoutURL` (with Argo's `{{token}}` and
    /// `{{logoutRedirectURL}}`), else the provider's end-session endpoint, else nowhere.
    pub(crate) fn logout_url(&self, id_token: &str, back_to: &str) -> Option<String> {
        let cfg = &self.settings.config;
        if !cfg.logout_url.is_empty() {
            return Some(
                cfg.logout_url
                    .replace("{{token}}", id_token)
                    .replace("{{logoutRedirectURL}}", back_to),
            );
        }
        let end = self
            .metadata
            .additional_metadata()
            .end_session_endpoint
            .clone()?;
        let mut req = LogoutRequest::from(end);
        if let Ok(t) = id_token.parse::<CoreIdToken>() {
            req = req.set_id_token_hint(&t);
        }
        if let Ok(u) = PostLogoutRedirectUrl::new(back_to.to_string()) {
            req = req.set_post_logout_redirect_uri(u);
        }
        Some(req.http_get_url().to_string())
    }
}

pub(super) type ConfiguredClient = CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;

/// The provider's announced algorithms that are asymmetric; RS256 (the one every provider must
/// support) when it announces none of them.
fn pinned_algorithms(announced: &[CoreJwsSigningAlgorithm]) -> Vec<CoreJwsSigningAlgorithm> {
    let pinned: Vec<_> = announced
        .iter()
        .filter(|a| ASYMMETRIC.contains(a))
        .cloned()
        .collect();
    if pinned.is_empty() {
        vec![CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256]
    } else {
        pinned
    }
}

/// A key set must hold at least one key that may verify signatures.
fn usable(jwks: &CoreJsonWebKeySet, url: &str) -> Result<(), String> {
    let signing = jwks.keys().iter().filter(|k| {
        k.key_use()
            .is_none_or(|u| matches!(u, openidconnect::core::CoreJsonWebKeyUse::Signature))
    });
    if signing.count() == 0 {
        return Err(format!(
            "the identity provider's key set ({url}) has no key usable to verify signatures"
        ));
    }
    Ok(())
}

/// The payload of a token whose signature and claims were verified.
fn payload(token: &str) -> Result<Map<String, Value>, Refused> {
    let part = token
        .split('.')
        .nth(1)
        .ok_or_else(|| Refused::Invalid("not a JWT".into()))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .map_err(|e| Refused::Invalid(format!("payload: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| Refused::Invalid(format!("payload: {e}")))
}

fn refusal(e: &openidconnect::ClaimsVerificationError) -> Refused {
    use openidconnect::{ClaimsVerificationError as C, SignatureVerificationError as S};
    match e {
        C::Expired(_) => Refused::Expired,
        C::SignatureVerification(S::NoMatchingKey) => Refused::UnknownKey,
        other => Refused::Invalid(chain(other)),
    }
}

/// An error with its causes.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// For the verification benchmark (`benches/sso.rs`): a provider built from documents.
#[doc(hidden)]
pub struct BenchVerifier(Provider);

impl BenchVerifier {
    /// A provider of `issuer` for client `client_id`, from its discovery document and key set.
    pub fn new(
        issuer: &str,
        client_id: &str,
        discovery: Value,
        jwks: Value,
    ) -> Result<Self, String> {
        let settings = SsoSettings {
            mode: super::config::Mode::Oidc,
            url: "https://plumb.invalid".into(),
            config: super::config::OidcConfig {
                issuer: issuer.into(),
                client_id: client_id.into(),
                ..Default::default()
            },
        };
        Provider::from_documents(settings, discovery, jwks).map(Self)
    }

    /// Verifies `token` as a bearer session token is verified.
    pub fn verify(&self, token: &str) -> Result<(), String> {
        self.0
            .verify_with_current_keys(token, None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::json;

    use super::*;

    pub(crate) const ISSUER: &str = "https://idp.example.com";

    /// An RSA key from openssl: (signing key, its JWKS with kid `k1`).
    pub(crate) fn test_key() -> (jsonwebtoken::EncodingKey, Value) {
        let run = |script: &str| {
            let out = std::process::Command::new("sh")
                .args(["-c", script])
                .output()
                .expect("openssl");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let pem = dir.path().join("k.pem");
        run(&format!(
            "openssl genrsa -traditional -out {} 2048 2>/dev/null",
            pem.display()
        ));
        let der = run(&format!(
            "openssl rsa -in {} -traditional -outform DER",
            pem.display()
        ));
        let modulus = run(&format!(
            "openssl rsa -in {} -noout -modulus",
            pem.display()
        ));
        let hex = String::from_utf8_lossy(&modulus)
            .trim()
            .trim_start_matches("Modulus=")
            .to_string();
        let n: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect();
        let n = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(n);
        (
            jsonwebtoken::EncodingKey::from_rsa_der(&der),
            json!({"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "k1", "n": n, "e": "AQAB"}]}),
        )
    }

    pub(crate) fn discovery() -> Value {
        json!({
            "issuer": ISSUER,
            "authorization_endpoint": format!("{ISSUER}/auth"),
            "token_endpoint": format!("{ISSUER}/token"),
            "jwks_uri": format!("{ISSUER}/keys"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256", "HS256"],
        })
    }

    pub(crate) fn sign(key: &jsonwebtoken::EncodingKey, kid: &str, claims: &Value) -> String {
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        h.kid = Some(kid.into());
        jsonwebtoken::encode(&h, claims, key).expect("sign")
    }

    fn claims(exp_in: i64, iat_in: i64, aud: Value) -> Value {
        let now = jiff::Timestamp::now().as_second();
        json!({"iss": ISSUER, "sub": "u1", "aud": aud, "exp": now + exp_in, "iat": now + iat_in,
               "nonce": "n1", "groups": ["g1"]})
    }

    #[test]
    fn id_tokens_are_checked_for_signature_audience_time_and_nonce() {
        let (key, jwks) = test_key();
        let v = BenchVerifier::new(ISSUER, "plumb", discovery(), jwks).expect("provider");
        let p = &v.0;
        let ok = sign(&key, "k1", &claims(300, 0, json!("plumb")));
        let got = p.verify_with_current_keys(&ok, Some("n1")).expect("valid");
        assert_eq!(got["groups"], json!(["g1"]));
        assert!(
            p.verify_with_current_keys(&ok, None).is_ok(),
            "bearer: no nonce"
        );
        let e = p
            .verify_with_current_keys(&ok, Some("other"))
            .expect_err("nonce");
        assert!(e.to_string().contains("nonce"), "{e}");
        // Expired beyond the skew; within it still accepted.
        let expired = sign(&key, "k1", &claims(-120, -600, json!("plumb")));
        assert_eq!(
            p.verify_with_current_keys(&expired, None),
            Err(Refused::Expired)
        );
        let just = sign(&key, "k1", &claims(-10, -600, json!("plumb")));
        assert!(p.verify_with_current_keys(&just, None).is_ok());
        let future = sign(&key, "k1", &claims(900, 300, json!("plumb")));
        assert!(
            p.verify_with_current_keys(&future, None).is_err(),
            "issued in the future"
        );
        let other_aud = sign(&key, "k1", &claims(300, 0, json!("someone-else")));
        let e = p
            .verify_with_current_keys(&other_aud, None)
            .expect_err("audience");
        assert!(e.to_string().contains("audience"), "{e}");
        let extra_aud = sign(&key, "k1", &claims(300, 0, json!(["plumb", "untrusted"])));
        assert!(
            p.verify_with_current_keys(&extra_aud, None).is_err(),
            "untrusted extra audience"
        );
        assert_eq!(
            p.verify_with_current_keys(&sign(&key, "k9", &claims(300, 0, json!("plumb"))), None),
            Err(Refused::UnknownKey)
        );
        // RS256 signatures are checked with ring: another key under the same kid, a changed
        // payload and a cut signature are refused.
        let (other_key, _) = test_key();
        let foreign = sign(&other_key, "k1", &claims(300, 0, json!("plumb")));
        let mut parts: Vec<String> = ok.split('.').map(str::to_string).collect();
        parts[1] = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(claims(3000, 0, json!("plumb")).to_string());
        let tampered = parts.join(".");
        let cut = &ok[..ok.len() - 8];
        for bad in [foreign.as_str(), tampered.as_str(), cut] {
            let e = p.verify_with_current_keys(bad, None).expect_err("refused");
            assert!(matches!(e, Refused::Invalid(_)), "{e}");
        }
        let (set, _) = (p.jwks.read().expect("keys").0.clone(), ());
        let keys = super::super::rs256::Rs256Keys::of(&set);
        assert_eq!(keys.check(&ok), Some(Ok(())));
        assert_eq!(
            keys.check(&sign(&key, "k9", &claims(300, 0, json!("plumb")))),
            None
        );
        // HS256 is announced by this provider but never accepted.
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        h.kid = Some("k1".into());
        let hmac = jsonwebtoken::encode(
            &h,
            &claims(300, 0, json!("plumb")),
            &jsonwebtoken::EncodingKey::from_secret(b"s"),
        )
        .expect("hs");
        assert!(p.verify_with_current_keys(&hmac, None).is_err());
        assert_eq!(
            p.algorithms,
            [CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256]
        );
    }

    #[test]
    fn key_sets_without_a_signing_key_are_refused() {
        let (_, mut jwks) = test_key();
        jwks["keys"][0]["use"] = json!("enc");
        let e = BenchVerifier::new(ISSUER, "plumb", discovery(), jwks)
            .err()
            .expect("refused");
        assert!(e.contains("no key usable"), "{e}");
    }
}
