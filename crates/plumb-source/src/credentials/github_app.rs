//! GitHub App credentials (`githubAppID`, `githubAppInstallationID`, `githubAppPrivateKey`,
//! `githubAppEnterpriseBaseUrl`): an RS256 JWT signed with the App's key is exchanged at
//! `POST {base}/app/installations/{id}/access_tokens` for an installation token, which Git then
//! sends as the HTTPS password of user `x-access-token` (Argo CD's `GitHubAppCreds`, through
//! `ghinstallation`). Tokens are kept until a minute before they expire.
//!
//! The contract is GitHub's documented one ("Authenticating as a GitHub App installation"): the
//! JWT's `iat` 60 seconds in the past against clock drift, `exp` at most ten minutes ahead, `iss`
//! the App ID; the answer `201` with `{"token": ..., "expires_at": RFC 3339}`.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::RsaKeyPair;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// GitHub's API when no Enterprise base URL is given.
pub const GITHUB_API: &str = "https://api.github.com";
/// The user name Git sends with an installation token.
pub const TOKEN_USER: &str = "x-access-token";
/// A token answer larger than this is refused (GitHub's is well under 1 KiB).
const MAX_ANSWER: u64 = 64 * 1024;
/// A token this close to its expiry is replaced.
const REFRESH_BEFORE: Duration = Duration::from_secs(60);

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

    fn cache_key(&self, installation: u64) -> String {
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

/// Installation tokens by App, kept until shortly before they expire.
#[derive(Default)]
pub(crate) struct TokenCache {
    tokens: Mutex<HashMap<String, (String, SystemTime)>>,
    installations: super::github_discovery::Installations,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCache")
    }
}

/// What the token request needs besides the App: the client (TLS, proxy, timeout).
pub(crate) type ClientFor<'a> =
    &'a dyn Fn(&reqwest::Url) -> std::result::Result<reqwest::blocking::Client, String>;

impl TokenCache {
    /// A valid installation token for `app` to fetch `repo_url`, from the cache or asked anew
    /// (the installation found from the URL's organization when the Secret names none).
    pub(crate) fn token(
        &self,
        app: &GithubApp,
        repo_url: &str,
        client: ClientFor<'_>,
    ) -> std::result::Result<String, String> {
        let installation = match app.installation_id {
            0 => self.installations.find(app, repo_url, client)?,
            id => id,
        };
        let key = app.cache_key(installation);
        let now = SystemTime::now();
        if let Some((token, expires)) = self.lock().get(&key)
            && now + REFRESH_BEFORE < *expires
        {
            return Ok(token.clone());
        }
        let (token, expires) = request_token(app, installation, client)?;
        self.lock().insert(key, (token.clone(), expires));
        Ok(token)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, SystemTime)>> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One `POST .../access_tokens`: the token and when it expires.
fn request_token(
    app: &GithubApp,
    installation: u64,
    client: ClientFor<'_>,
) -> std::result::Result<(String, SystemTime), String> {
    let url = app.token_url(installation);
    let fail = |detail: String| format!("GitHub App installation token from {url}: {detail}");
    let parsed = reqwest::Url::parse(&url).map_err(|e| fail(e.to_string()))?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|e| fail(e.to_string()))?
        .as_secs();
    let jwt = app.jwt(now).map_err(fail)?;
    let resp = client(&parsed)
        .map_err(fail)?
        .post(parsed)
        .header("Accept", "application/vnd.github+json")
        .header("X-GitHub-Api-Version", "2022-11-28")
        .header("User-Agent", "plumb")
        .bearer_auth(jwt)
        .send()
        .map_err(|e| fail(error_chain(&e)))?;
    let status = resp.status();
    let mut body = Vec::new();
    resp.take(MAX_ANSWER + 1)
        .read_to_end(&mut body)
        .map_err(|e| fail(format!("reading the answer: {e}")))?;
    if body.len() as u64 > MAX_ANSWER {
        return Err(fail(format!("the answer exceeds {MAX_ANSWER} bytes")));
    }
    if !status.is_success() {
        return Err(fail(format!("HTTP {}", status.as_u16())));
    }
    parse_answer(&body).map_err(fail)
}

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

/// GitHub's answer: `token` and `expires_at` (RFC 3339).
fn parse_answer(body: &[u8]) -> std::result::Result<(String, SystemTime), String> {
    #[derive(serde::Deserialize)]
    struct Answer {
        token: String,
        expires_at: String,
    }
    let answer: Answer = serde_json::from_slice(body)
        .map_err(|_| "the answer is not GitHub's JSON ({\"token\", \"expires_at\"})".to_owned())?;
    if answer.token.is_empty() || answer.token.len() > 4096 {
        return Err("the answer's token is empty or too long".into());
    }
    let expires = answer
        .expires_at
        .parse::<jiff::Timestamp>()
        .map_err(|_| "the answer's expires_at is not an RFC 3339 time".to_owned())?;
    let secs = u64::try_from(expires.as_second()).unwrap_or(0);
    Ok((answer.token, UNIX_EPOCH + Duration::from_secs(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_github_documents_them() {
        let (token, at) = parse_answer(
            br#"{"token":"ghs_16C7e42F292c6912E7710c838347Ae178B4a","expires_at":"2016-07-11T22:14:10Z","permissions":{"contents":"read"}}"#,
        )
        .unwrap();
        assert_eq!(token, "ghs_16C7e42F292c6912E7710c838347Ae178B4a");
        assert_eq!(at, UNIX_EPOCH + Duration::from_secs(1_468_275_250));
        for bad in [
            &b"garbage"[..],
            br#"{"token":""}"#,
            br#"{"token":"t","expires_at":"soon"}"#,
        ] {
            assert!(parse_answer(bad).is_err());
        }
    }

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
