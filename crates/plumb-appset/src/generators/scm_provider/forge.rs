//! The HTTP side of a forge's REST API (Gitea, GitHub), shared by the scmProvider and
//! pullRequest generators: one GET under the context's bounds (a timeout per call covering the
//! body, a body cap read chunk by chunk), JSON decoding, and listings paged by `Link: <…>;
//! rel="next"` that stay on the forge's origin and stop at `max_pages`.
//!
//! Errors name the forge and the URL (which never holds the token: it travels in a header) and
//! the HTTP status; a forge's own message is included shortened, with the token cut out.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{StatusCode, Url};
use serde::de::DeserializeOwned;

use crate::context::Limits;
use crate::error::GeneratorError;

/// A forge's API: the client, its base URL and how requests authenticate.
#[derive(Clone)]
pub(crate) struct Forge {
    /// "Gitea" or "GitHub", for messages.
    pub(crate) name: &'static str,
    http: reqwest::Client,
    base: Url,
    headers: HeaderMap,
    token: Option<String>,
    limits: Limits,
}

/// One decoded answer and the next page's URL, if the forge named one.
pub(crate) struct Page<T> {
    pub(crate) body: T,
    pub(crate) next: Option<Url>,
}

impl Forge {
    /// A forge at `base` (the API root, ending in `/`). `auth_scheme` prefixes the token in the
    /// `Authorization` header (`token` for Gitea, `Bearer` for GitHub); `insecure` skips TLS
    /// verification with a client of its own, as the generator's `insecure` field asks.
    pub(crate) fn new(
        name: &'static str,
        http: &reqwest::Client,
        base: Url,
        token: Option<String>,
        auth_scheme: &str,
        insecure: bool,
        limits: &Limits,
    ) -> Result<Self, GeneratorError> {
        let mut headers = HeaderMap::new();
        if let Some(token) = token.as_deref().filter(|t| !t.is_empty()) {
            let mut value = HeaderValue::from_str(&format!("{auth_scheme} {}", token.trim()))
                .map_err(|_| {
                    GeneratorError::Invalid(format!(
                        "{name} token holds characters an HTTP header cannot carry"
                    ))
                })?;
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        let http = if insecure {
            reqwest::Client::builder()
                .tls_danger_accept_invalid_certs(true)
                .build()
                .map_err(|e| GeneratorError::Source(format!("{name} HTTP client: {e}")))?
        } else {
            http.clone()
        };
        Ok(Self {
            name,
            http,
            base,
            headers,
            token: token.filter(|t| !t.is_empty()),
            limits: limits.clone(),
        })
    }

    /// Adds a header sent with every request (GitHub's `Accept` and API version).
    pub(crate) fn with_header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
        self
    }

    /// `segments` (each percent-encoded as one path segment) joined under the base, with `query`.
    pub(crate) fn url(&self, segments: &[&str], query: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// GET `url` as JSON; `Ok(None)` on 404 (the callers decide what a missing thing means).
    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        url: &Url,
    ) -> Result<Option<Page<T>>, GeneratorError> {
        let shown = url.as_str().to_owned();
        let timeout = self.limits.http_timeout;
        let answer = tokio::time::timeout(timeout, self.fetch(url))
            .await
            .map_err(|_| {
                GeneratorError::Source(format!(
                    "{} {shown}: no complete answer within {}",
                    self.name,
                    seconds(timeout)
                ))
            })??;
        let Some((status, link, bytes)) = answer else {
            return Ok(None);
        };
        if !status.is_success() {
            return Err(GeneratorError::Source(format!(
                "{} {shown}: HTTP {status}{}",
                self.name,
                self.message(&bytes)
            )));
        }
        let body = serde_json::from_slice(&bytes).map_err(|e| {
            GeneratorError::Source(format!(
                "{} {shown}: the answer is not the JSON expected: {e}",
                self.name
            ))
        })?;
        let next = link.as_deref().and_then(next_link);
        let next = match next {
            Some(next) => Some(self.same_origin(&shown, next)?),
            None => None,
        };
        Ok(Some(Page { body, next }))
    }

    /// Every page of a listing starting at `first`, following `rel="next"`; `Ok(None)` when the
    /// first page is a 404. More than `max_pages` pages is an error, not a silent cut.
    pub(crate) async fn get_all<T: DeserializeOwned>(
        &self,
        first: Url,
    ) -> Result<Option<Vec<T>>, GeneratorError> {
        let mut out = Vec::new();
        let mut url = first.clone();
        for _ in 0..self.limits.max_pages.max(1) {
            let Some(page) = self.get::<Vec<T>>(&url).await? else {
                if out.is_empty() && url == first {
                    return Ok(None);
                }
                return Err(GeneratorError::Source(format!(
                    "{} {url}: HTTP 404 Not Found in the middle of a listing",
                    self.name
                )));
            };
            let empty = page.body.is_empty();
            out.extend(page.body);
            if out.len() > self.limits.max_params {
                return Err(GeneratorError::Limit(format!(
                    "{} {first}: more than {} items",
                    self.name, self.limits.max_params
                )));
            }
            match page.next {
                Some(next) if !empty => url = next,
                _ => return Ok(Some(out)),
            }
        }
        Err(GeneratorError::Limit(format!(
            "{} {first}: more than {} pages",
            self.name, self.limits.max_pages
        )))
    }

    /// The status, the `Link` header and the body (at most `max_file_bytes`), or `None` on 404.
    async fn fetch(
        &self,
        url: &Url,
    ) -> Result<Option<(StatusCode, Option<String>, Vec<u8>)>, GeneratorError> {
        let mut resp = self
            .http
            .get(url.clone())
            .headers(self.headers.clone())
            .header(reqwest::header::USER_AGENT, "plumb-applicationset")
            .send()
            .await
            .map_err(|e| self.failed(url, &e))?;
        let status = resp.status();
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let link = resp
            .headers()
            .get(reqwest::header::LINK)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let cap = self.limits.max_file_bytes;
        let too_big = || {
            GeneratorError::Limit(format!(
                "{} {url}: the answer is larger than {cap} bytes",
                self.name
            ))
        };
        if resp.content_length().is_some_and(|n| n > cap) {
            return Err(too_big());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.failed(url, &e))? {
            if (bytes.len() + chunk.len()) as u64 > cap {
                return Err(too_big());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Some((status, link, bytes)))
    }

    /// A failed exchange; a timeout of the client (the same limit as [`Forge::get`]'s) reads as
    /// that one does, so the condition does not depend on which timer fired first.
    fn failed(&self, url: &Url, e: &reqwest::Error) -> GeneratorError {
        if e.is_timeout() {
            let timeout = seconds(self.limits.http_timeout);
            return GeneratorError::Source(format!(
                "{} {url}: no complete answer within {timeout}",
                self.name
            ));
        }
        GeneratorError::Source(format!(
            "{} {url}: {}",
            self.name,
            self.redact(&error_chain(e))
        ))
    }

    /// A next-page URL must stay on the forge the token was meant for.
    fn same_origin(&self, shown: &str, next: Url) -> Result<Url, GeneratorError> {
        let base = &self.base;
        if next.scheme() == base.scheme()
            && next.host_str() == base.host_str()
            && next.port_or_known_default() == base.port_or_known_default()
            && next.path().starts_with(base.path())
        {
            Ok(next)
        } else {
            Err(GeneratorError::Source(format!(
                "{} {shown}: the next page's link {next} leaves the forge's API {base}",
                self.name
            )))
        }
    }

    /// The forge's own `message` (Gitea and GitHub both answer errors with one), shortened.
    fn message(&self, bytes: &[u8]) -> String {
        #[derive(serde::Deserialize)]
        struct Message {
            message: Option<String>,
        }
        let text = serde_json::from_slice::<Message>(bytes)
            .ok()
            .and_then(|m| m.message)
            .unwrap_or_default();
        let text: String = self.redact(&text).chars().take(200).collect();
        if text.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", text.trim())
        }
    }

    fn redact(&self, text: &str) -> String {
        match self.token.as_deref() {
            Some(token) if !token.trim().is_empty() => text.replace(token.trim(), "<token>"),
            _ => text.to_owned(),
        }
    }
}

/// The URL of `rel="next"` in an RFC 8288 `Link` header, as GitHub and Gitea send it:
/// `<https://…?page=2>; rel="next", <…>; rel="last"`.
pub(crate) fn next_link(header: &str) -> Option<Url> {
    header.split(',').find_map(|part| {
        let (target, params) = part.split_once(';')?;
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        let is_next = params.split(';').any(|p| {
            p.trim()
                .strip_prefix("rel=")
                .map(|v| v.trim_matches('"').split_whitespace().any(|r| r == "next"))
                .unwrap_or(false)
        });
        if is_next {
            Url::parse(target).ok()
        } else {
            None
        }
    })
}

fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::next_link;

    #[test]
    fn link_header_next() {
        let h = r#"<https://api.github.com/organizations/9/repos?per_page=2&page=2>; rel="next", <https://api.github.com/organizations/9/repos?per_page=2&page=5>; rel="last""#;
        assert_eq!(
            next_link(h).map(|u| u.to_string()).as_deref(),
            Some("https://api.github.com/organizations/9/repos?per_page=2&page=2")
        );
        let last = r#"<https://x/a?page=1>; rel="first", <https://x/a?page=1>; rel="prev""#;
        assert!(next_link(last).is_none());
        assert!(next_link("garbage").is_none());
        assert!(next_link("<not a url>; rel=\"next\"").is_none());
    }
}
