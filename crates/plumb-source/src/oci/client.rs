//! The three reads of the OCI distribution API a source needs — list tags, get a manifest, get a
//! blob — over the chart repositories' HTTP client (`helm_repo::http`: the same TLS, CA,
//! client-certificate and redirect rules, every body read up to a limit).
//!
//! Plumb's own code rather than the `oci-client` crate: that crate reads manifests and blobs
//! without a size bound and is async-only, and renders run on blocking threads with byte limits
//! on every download (docs/sources.md, section 1c).
//!
//! Authentication is the registry's own: a request goes out with Basic credentials when the
//! repository Secret has them (to the registry's origin only); a `401` with a `Bearer` challenge
//! is answered by asking the challenge's `realm` for a token (with the Basic credentials, as
//! `docker login` and Helm do), then the request is sent again with that token.

use std::sync::Mutex;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderName, LINK, WWW_AUTHENTICATE};

use super::reference::Reference;
use crate::credentials::{RepoCredentials, TlsCerts};
use crate::helm_repo::http::{self, Failure, Reply};
use crate::redact::Redactor;

/// A manifest is small; registries refuse larger ones (distribution: 4 MiB).
pub(crate) const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// A page of the tag list.
const MAX_TAGS_PAGE_BYTES: u64 = 8 << 20;
/// Pages of the tag list followed before giving up.
const MAX_TAG_PAGES: usize = 100;
/// A token answer.
const MAX_TOKEN_BYTES: u64 = 1 << 20;

/// One repository of one registry, with the access that applies to it.
pub(crate) struct Registry<'a> {
    base: Url,
    reference: &'a Reference,
    creds: Option<&'a RepoCredentials>,
    certs: &'a TlsCerts,
    redactor: &'a Redactor,
    timeout: Duration,
    token: Mutex<Option<String>>,
}

/// Why a registry read failed.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The transport failed or the registry answered with an error status.
    Failed(Failure),
    /// The registry answered something unusable.
    Invalid(String),
}

impl From<Failure> for ReadError {
    fn from(f: Failure) -> Self {
        ReadError::Failed(f)
    }
}

impl<'a> Registry<'a> {
    pub(crate) fn new(
        reference: &'a Reference,
        creds: Option<&'a RepoCredentials>,
        certs: &'a TlsCerts,
        redactor: &'a Redactor,
        timeout: Duration,
    ) -> Result<Self, ReadError> {
        let scheme = if creds.is_some_and(|c| c.insecure_oci_force_http) {
            "http"
        } else {
            "https"
        };
        let base = Url::parse(&format!("{scheme}://{}/", reference.registry))
            .map_err(|e| ReadError::Invalid(format!("registry {}: {e}", reference.registry)))?;
        Ok(Self {
            base,
            reference,
            creds,
            certs,
            redactor,
            timeout,
            token: Mutex::new(None),
        })
    }

    /// `GET /v2/` with the credentials that apply (answering a `Bearer` challenge): the
    /// registry's ping, which oras (Argo CD's OCI client) sends to test a repository.
    pub(crate) fn ping(&self) -> Result<(), ReadError> {
        let url = self
            .base
            .join("v2/")
            .map_err(|e| ReadError::Invalid(format!("{e}")))?;
        self.get(&url, None, MAX_TOKEN_BYTES).map(drop)
    }

    /// Every tag of the repository, following the `Link` pages.
    pub(crate) fn tags(&self) -> Result<Vec<String>, ReadError> {
        let mut url = self.url("tags/list?n=1000")?;
        let mut tags = Vec::new();
        for _ in 0..MAX_TAG_PAGES {
            let reply = self.get(&url, None, MAX_TAGS_PAGE_BYTES)?;
            let doc: serde_json::Value = serde_json::from_slice(&reply.body)
                .map_err(|e| ReadError::Invalid(format!("the tag list is not JSON: {e}")))?;
            if let Some(list) = doc.get("tags").and_then(serde_json::Value::as_array) {
                tags.extend(list.iter().filter_map(|t| t.as_str().map(str::to_owned)));
            }
            match next_page(&reply, &url) {
                Some(next) => url = next,
                None => return Ok(tags),
            }
        }
        Err(ReadError::Invalid(format!(
            "the tag list has more than {MAX_TAG_PAGES} pages"
        )))
    }

    /// The manifest `reference` (a tag or a digest) names: its bytes and the digest the
    /// registry says it has (`Docker-Content-Digest`), if it says.
    pub(crate) fn manifest(&self, reference: &str) -> Result<(Vec<u8>, Option<String>), ReadError> {
        let url = self.url(&format!("manifests/{reference}"))?;
        let reply = self.get(&url, Some(super::manifest::ACCEPT), MAX_MANIFEST_BYTES)?;
        let digest = reply
            .headers
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        Ok((reply.body, digest))
    }

    /// The blob `digest`, at most `max_bytes` of it.
    pub(crate) fn blob(&self, digest: &str, max_bytes: u64) -> Result<Vec<u8>, ReadError> {
        let url = self.url(&format!("blobs/{digest}"))?;
        Ok(self.get(&url, None, max_bytes)?.body)
    }

    fn url(&self, tail: &str) -> Result<Url, ReadError> {
        self.base
            .join(&format!("v2/{}/{tail}", self.reference.repository))
            .map_err(|e| ReadError::Invalid(format!("{e}")))
    }

    /// A GET with the credentials that apply, answering one `Bearer` challenge.
    fn get(&self, url: &Url, accept: Option<&str>, max_bytes: u64) -> Result<Reply, ReadError> {
        let mut reply = self.send(url, accept, max_bytes, self.authorization(url))?;
        if reply.status == 401
            && let Some(challenge) = reply
                .headers
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_bearer)
        {
            let token = self.fetch_token(&challenge)?;
            let header = format!("Bearer {token}");
            if let Ok(mut t) = self.token.lock() {
                *t = Some(token);
            }
            reply = self.send(url, accept, max_bytes, Some(header))?;
        }
        if !(200..300).contains(&reply.status) {
            return Err(ReadError::Failed(Failure::Status(reply.status)));
        }
        Ok(reply)
    }

    fn send(
        &self,
        url: &Url,
        accept: Option<&str>,
        max_bytes: u64,
        authorization: Option<String>,
    ) -> Result<Reply, ReadError> {
        let mut headers: Vec<(HeaderName, String)> = Vec::new();
        if let Some(a) = accept {
            headers.push((ACCEPT, a.to_owned()));
        }
        if let Some(a) = authorization {
            headers.push((AUTHORIZATION, a));
        }
        Ok(http::request(
            url,
            &headers,
            self.creds,
            self.certs,
            self.timeout,
            max_bytes,
            self.redactor,
        )?)
    }

    /// A token got earlier, else Basic credentials for the registry's own origin.
    fn authorization(&self, url: &Url) -> Option<String> {
        if let Ok(t) = self.token.lock()
            && let Some(token) = t.as_ref()
        {
            return Some(format!("Bearer {token}"));
        }
        if !http::same_origin(url, &self.base) {
            return None;
        }
        self.basic()
    }

    fn basic(&self) -> Option<String> {
        let c = self.creds?;
        let user = c.username.as_deref()?;
        let pair = format!("{user}:{}", c.password.as_deref().unwrap_or(""));
        Some(format!("Basic {}", base64(pair.as_bytes())))
    }

    fn fetch_token(&self, challenge: &Challenge) -> Result<String, ReadError> {
        let mut realm = Url::parse(&challenge.realm).map_err(|e| {
            ReadError::Invalid(format!(
                "the registry's token realm {:?} is not a URL: {e}",
                challenge.realm
            ))
        })?;
        if !matches!(realm.scheme(), "http" | "https") {
            return Err(ReadError::Invalid(format!(
                "the registry's token realm {} is not http(s)",
                realm
            )));
        }
        {
            let mut q = realm.query_pairs_mut();
            if let Some(s) = &challenge.service {
                q.append_pair("service", s);
            }
            if let Some(s) = &challenge.scope {
                q.append_pair("scope", s);
            }
        }
        // Credentials go to the token service only over TLS, or when the registry itself is
        // plain HTTP (a registry the Secret says to reach without TLS).
        let auth = if realm.scheme() == "https" || self.base.scheme() == "http" {
            self.basic()
        } else {
            None
        };
        let mut headers: Vec<(HeaderName, String)> = Vec::new();
        if let Some(a) = auth {
            headers.push((AUTHORIZATION, a));
        }
        let reply = http::request(
            &realm,
            &headers,
            self.creds,
            self.certs,
            self.timeout,
            MAX_TOKEN_BYTES,
            self.redactor,
        )?;
        if !(200..300).contains(&reply.status) {
            return Err(ReadError::Failed(Failure::Status(reply.status)));
        }
        let doc: serde_json::Value = serde_json::from_slice(&reply.body)
            .map_err(|e| ReadError::Invalid(format!("the token answer is not JSON: {e}")))?;
        doc.get("token")
            .or_else(|| doc.get("access_token"))
            .and_then(serde_json::Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| ReadError::Invalid("the token answer holds no token".into()))
    }
}

/// A `Bearer` challenge's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Challenge {
    realm: String,
    service: Option<String>,
    scope: Option<String>,
}

/// Reads `Bearer realm="…",service="…",scope="…"`; `None` for any other scheme.
fn parse_bearer(header: &str) -> Option<Challenge> {
    let rest = header.trim();
    let (scheme, params) = rest.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut realm = None;
    let mut service = None;
    let mut scope = None;
    let mut s = params.trim();
    while !s.is_empty() {
        let (key, after) = s.split_once('=')?;
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"')?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            match after.find(',') {
                Some(i) => (&after[..i], &after[i..]),
                None => (after, ""),
            }
        };
        match key.as_str() {
            "realm" => realm = Some(value.to_owned()),
            "service" => service = Some(value.to_owned()),
            "scope" => scope = Some(value.to_owned()),
            _ => {}
        }
        s = next.trim_start().trim_start_matches(',').trim_start();
    }
    Some(Challenge {
        realm: realm?,
        service,
        scope,
    })
}

/// The `rel="next"` URL of a `Link` header, resolved against the request URL and kept on the
/// registry's origin.
fn next_page(reply: &Reply, current: &Url) -> Option<Url> {
    let link = reply.headers.get(LINK)?.to_str().ok()?;
    for part in link.split(',') {
        let part = part.trim();
        if !part.contains("rel=\"next\"") && !part.contains("rel=next") {
            continue;
        }
        let target = part.strip_prefix('<')?.split_once('>')?.0;
        let next = current.join(target).ok()?;
        return http::same_origin(&next, current).then_some(next);
    }
    None
}

fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_are_read() {
        let c = parse_bearer(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:bitnamicharts/nginx:pull""#,
        )
        .unwrap();
        assert_eq!(c.realm, "https://auth.docker.io/token");
        assert_eq!(c.service.as_deref(), Some("registry.docker.io"));
        assert_eq!(
            c.scope.as_deref(),
            Some("repository:bitnamicharts/nginx:pull")
        );
        let c = parse_bearer(r#"bearer realm="https://ghcr.io/token", service=ghcr.io"#).unwrap();
        assert_eq!(c.service.as_deref(), Some("ghcr.io"));
        assert_eq!(c.scope, None);
        assert_eq!(parse_bearer(r#"Basic realm="Registry Realm""#), None);
        assert_eq!(parse_bearer(r#"Bearer service="x""#), None);
    }

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"bot:s3cret"), "Ym90OnMzY3JldA==");
    }

    #[test]
    fn next_pages_stay_on_the_registry() {
        let current = Url::parse("https://r.example.com/v2/a/tags/list?n=2").unwrap();
        let reply = |link: &str| Reply {
            status: 200,
            headers: {
                let mut h = reqwest::header::HeaderMap::new();
                h.insert(LINK, link.parse().unwrap());
                h
            },
            body: Vec::new(),
        };
        assert_eq!(
            next_page(
                &reply(r#"</v2/a/tags/list?last=b&n=2>; rel="next""#),
                &current
            )
            .unwrap()
            .as_str(),
            "https://r.example.com/v2/a/tags/list?last=b&n=2"
        );
        assert_eq!(
            next_page(
                &reply(r#"<https://evil.example.com/x>; rel="next""#),
                &current
            ),
            None
        );
    }
}
