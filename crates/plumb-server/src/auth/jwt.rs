//! Argo CD's session tokens: HS256 JWTs signed with `server.secretkey`, issuer `argocd`,
//! subject `<account>:login` (sessions), `<account>:apiKey` (API keys) or
//! `proj:<project>:<role>` (project role tokens), `jti` naming the token for revocation.

use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

/// The `iss` of tokens this server signs (Argo's `SessionManagerClaimsIssuer`).
pub(crate) const ISSUER: &str = "argocd";

/// The claims of a token this server signs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Claims {
    pub(crate) iss: String,
    pub(crate) sub: String,
    #[serde(default)]
    pub(crate) iat: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nbf: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exp: Option<i64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) jti: String,
}

impl Claims {
    /// Claims issued now for `sub`, expiring after `seconds` (0: never, as Argo's `Create`).
    pub(crate) fn new(sub: String, seconds: i64, jti: String) -> Self {
        let now = jiff::Timestamp::now().as_second();
        Self {
            iss: ISSUER.into(),
            sub,
            iat: now,
            nbf: Some(now),
            exp: (seconds > 0).then(|| now.saturating_add(seconds)),
            jti,
        }
    }
}

/// Signs `claims` with HS256.
pub(crate) fn sign(key: &[u8], claims: &Claims) -> Result<String, String> {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(key),
    )
    .map_err(|e| format!("signing a token: {e}"))
}

/// Verifies signature (HS256 only: `none`, RS256 and the rest are refused), issuer, expiry and
/// not-before (no leeway, as golang-jwt).
pub(crate) fn verify(key: &[u8], token: &str) -> Result<Claims, String> {
    let mut validation = Validation::new(Algorithm::HS256);
    validation.leeway = 0;
    validation.validate_nbf = true;
    validation.set_required_spec_claims::<&str>(&[]);
    validation.set_issuer(&[ISSUER]);
    jsonwebtoken::decode::<Claims>(token, &DecodingKey::from_secret(key), &validation)
        .map(|t| t.claims)
        .map_err(|e| match e.kind() {
            jsonwebtoken::errors::ErrorKind::ExpiredSignature => "token is expired".to_string(),
            jsonwebtoken::errors::ErrorKind::InvalidSignature => {
                "token signature is invalid".to_string()
            }
            _ => format!("invalid token: {e}"),
        })
}

/// The `iss` claim without verifying anything: which verifier a token goes to (Argo's
/// `VerifyToken` switches on it the same way). `None` for anything that is not a JWT.
pub(crate) fn unverified_issuer(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || payload.len() > 16 * 1024 {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    value.get("iss")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn encode_raw(header: &str, claims: &str, sig: &str) -> String {
        let b = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.{sig}", b(header), b(claims))
    }

    #[test]
    fn round_trip_with_argo_claims() {
        let claims = Claims::new("alice:login".into(), 3600, "id-1".into());
        let token = sign(KEY, &claims).expect("signs");
        assert_eq!(unverified_issuer(&token).as_deref(), Some("argocd"));
        let back = verify(KEY, &token).expect("verifies");
        assert_eq!(back, claims);
        assert_eq!(back.exp, Some(back.iat + 3600));
        // No expiry: an API key created with expiresIn 0.
        let forever = sign(KEY, &Claims::new("ci:apiKey".into(), 0, "k".into())).expect("signs");
        assert_eq!(verify(KEY, &forever).expect("verifies").exp, None);
    }

    #[test]
    fn forged_expired_and_unsigned_tokens_are_refused() {
        let token = sign(KEY, &Claims::new("admin:login".into(), 60, "x".into())).expect("signs");
        let e = verify(b"another key entirely, 32 bytes..", &token).unwrap_err();
        assert!(e.contains("signature"), "{e}");
        let mut expired = Claims::new("admin:login".into(), 60, "x".into());
        expired.iat -= 7200;
        expired.exp = Some(expired.iat + 60);
        let e = verify(KEY, &sign(KEY, &expired).expect("signs")).unwrap_err();
        assert!(e.contains("expired"), "{e}");
        let mut future = Claims::new("admin:login".into(), 0, "x".into());
        future.nbf = Some(future.iat + 3600);
        assert!(verify(KEY, &sign(KEY, &future).expect("signs")).is_err());
        let none = encode_raw(
            r#"{"alg":"none","typ":"JWT"}"#,
            r#"{"iss":"argocd","sub":"admin:login","jti":"x"}"#,
            "",
        );
        assert!(verify(KEY, &none).is_err());
        let other_issuer = Claims {
            iss: "someone".into(),
            ..Claims::new("admin:login".into(), 60, "x".into())
        };
        assert!(verify(KEY, &sign(KEY, &other_issuer).expect("signs")).is_err());
        assert!(verify(KEY, "not a token").is_err());
        assert_eq!(unverified_issuer("opaque-kubernetes-token"), None);
    }
}
