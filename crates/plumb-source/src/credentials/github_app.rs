//! GitHub App credentials (`githubAppID`, `githubAppInstallationID`, `githubAppPrivateKey`,
//! `githubAppEnterpriseBaseUrl`): an RS256 JWT signed with the App's key is exchanged at
//! `POST {base}/app/installations/{id}/access_tokens` for an installation token, which Git then
//! sends as the HTTPS password of user `x-access-token` (Argo CD's `GitHubAppCreds`, through
//! `ghinstallation`). Tokens are kept until a minute before they expire.
//!
//! The contract is GitHub's documented one ("Authenticating as a GitHub App installation"): the
//! JWT's `iat` 60 seconds in the past against clock drift, `exp` at most ten minutes ahead, `iss`
//! the App ID; the answer `201` with `{"token": ..., "expires_at": RFC 3339}`.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::RsaKeyPair;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// GitHub's API when no Enterprise base URL is given.
pub const GITHUB_API: &str = "https://api.github.com";
/// The user name Git sends with an installation token.
pub const TOKEN_USER: &str = "x-access-token";

/// The GitHub App fields of a repository Secret.
#[derive(Clone, PartialEq, Eq)]
pub struct GithubApp {
    /// `githubAppID`.
    pub app_id: u64,
    /// `githubAppInstallationID`; 0 (or missing) to find it from the repository URL's
    /// organization among the App's installations, as Argo CD 3.6 does.
    pub installation_id: u64,
    /// `githubAppPrivateKey`: the App's RSA key, PEM (PKCS#1 as GitHub issues it, or PKCS#8).
    pub private_key: String,
    /// `githubAppEnterpriseBaseUrl` (`https://ghe.example.com/api/v3`), else GitHub's API.
    pub base_url: Option<String>,
}

impl fmt::Debug for GithubApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GithubApp")
            .field("app_id", &self.app_id)
            .field("installation_id", &self.installation_id)
            .field("private_key", &"***")
            .field("base_url", &self.base_url)
            .finish()
    }
}

type Text<'a> = &'a dyn Fn(&str) -> Result<Option<String>>;
type Invalid<'a> = &'a dyn Fn(String) -> Error;

impl GithubApp {
    /// The App of a Secret's fields, `None` without `githubAppPrivateKey`, refused when the IDs
    /// are not numbers or the key cannot sign.
    pub(crate) fn from_fields(text: Text<'_>, invalid: Invalid<'_>) -> Result<Option<Self>> {
        let Some(private_key) = text("githubAppPrivateKey")? else {
            return Ok(None);
        };
        let id = |key: &str, required: bool| -> Result<u64> {
            match text(key)? {
                None if !required => Ok(0),
                None => Err(invalid(format!(
                    "{key} is missing (githubAppPrivateKey is set)"
                ))),
                Some(v) => v
                    .trim()
                    .parse()
                    .map_err(|_| invalid(format!("{key} is not a number"))),
            }
        };
        let app = Self {
            app_id: id("githubAppID", true)?,
            installation_id: id("githubAppInstallationID", false)?,
            private_key,
            base_url: text("githubAppEnterpriseBaseUrl")?,
        };
        app.key_pair()
            .map_err(|e| invalid(format!("githubAppPrivateKey: {e}")))?;
        if let Some(base) = &app.base_url {
            let ok = reqwest::Url::parse(base)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
            if !ok {
                return Err(invalid(
                    "githubAppEnterpriseBaseUrl is not an http(s) URL".into(),
                ));
            }
        }
        Ok(Some(app))
    }

    /// The API's base URL (GitHub's, or the Enterprise one), without a trailing `/`.
    pub fn api_base(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or(GITHUB_API)
            .trim_end_matches('/')
    }

    /// The token endpoint of installation `id`.
    pub fn token_url(&self, id: u64) -> String {
        format!("{}/app/installations/{id}/access_tokens", self.api_base())
    }

    fn key_pair(&self) -> std::result::Result<RsaKeyPair, String> {
        let (label, der) = pem_block(&self.private_key)?;
        let pair = match label.as_str() {
            "RSA PRIVATE KEY" => RsaKeyPair::from_der(&der),
            "PRIVATE KEY" => RsaKeyPair::from_pkcs8(&der),
            other => return Err(format!("a PEM \"{other}\" block is not an RSA private key")),
        };
        pair.map_err(|e| format!("not a usable RSA private key ({e})"))
    }

    /// The App's JWT at `now` (seconds since the epoch), RS256.
    pub fn jwt(&self, now: u64) -> std::result::Result<String, String> {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
        let claims = serde_json::json!({
            "iat": now.saturating_sub(60),
            "exp": now + 540,
            "iss": self.app_id.to_string(),
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signing_input = format!("{header}.{claims}");
        let pair = self.key_pair()?;
        let mut sig = vec![0; pair.public().modulus_len()];
        pair.sign(
            &ring::signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            signing_input.as_bytes(),
            &mut sig,
        )
        .map_err(|_| "signing the GitHub App JWT failed".to_owned())?;
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }

    pub(super) fn cache_key(&self, installation: u64) -> String {
        let mut h = Sha256::new();
        h.update(format!(
            "{} {} {installation} {:?}",
            self.private_key, self.app_id, self.base_url
        ));
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The first PEM block of `text`: its label and its bytes.
fn pem_block(text: &str) -> std::result::Result<(String, Vec<u8>), String> {
    let not_pem = || "not a PEM private key (-----BEGIN RSA PRIVATE KEY-----)".to_owned();
    let start = text.find("-----BEGIN ").ok_or_else(not_pem)?;
    let rest = &text[start + 11..];
    let (label, rest) = rest.split_once("-----").ok_or_else(not_pem)?;
    let end = format!("-----END {label}-----");
    let (body, _) = rest.split_once(end.as_str()).ok_or_else(not_pem)?;
    let b64: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let der = STANDARD.decode(b64).map_err(|_| not_pem())?;
    Ok((label.to_owned(), der))
}

/// What the token request needs besides the App: the client (TLS, proxy, timeout).
pub(crate) type ClientFor<'a> =
    &'a dyn Fn(&reqwest::Url) -> std::result::Result<reqwest::blocking::Client, String>;

/// `e` and its causes on one line (reqwest's own message is only the outermost).
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_are_not_pem_are_refused_by_field() {
        let text = |k: &str| -> Result<Option<String>> {
            Ok(match k {
                "githubAppPrivateKey" => Some("not a key at all".into()),
                "githubAppID" | "githubAppInstallationID" => Some("1".into()),
                _ => None,
            })
        };
        let invalid = |d: String| Error::InvalidSecret {
            name: "argocd/gh".into(),
            detail: d,
        };
        let err = GithubApp::from_fields(&text, &invalid)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("githubAppPrivateKey: not a PEM private key"),
            "{err}"
        );
    }
}
