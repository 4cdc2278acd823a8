//! Installation tokens of GitHub Apps: asked at `POST {base}/app/installations/{id}/access_tokens`
//! with the App's JWT (the installation found first when the Secret names none) and kept until a
//! minute before they expire.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::github_app::{ClientFor, GithubApp, error_chain};
use super::github_discovery::Installations;

/// A token answer larger than this is refused (GitHub's is well under 1 KiB).
const MAX_ANSWER: u64 = 64 * 1024;
/// A token this close to its expiry is replaced.
const REFRESH_BEFORE: Duration = Duration::from_secs(60);

/// Installation tokens by App, kept until shortly before they expire.
#[derive(Default)]
pub(crate) struct TokenCache {
    tokens: Mutex<HashMap<String, (String, SystemTime)>>,
    installations: Installations,
}

impl fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenCache")
    }
}

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
}
