//! HTTP(S) downloads from chart repositories (reqwest with rustls, blocking: renders already
//! run on blocking threads), with the credential rules of Helm and Argo CD.
//!
//! - Basic credentials go with every request to the repository's own scheme, host and port; to a
//!   chart URL elsewhere only with `passCredentials` (Helm's `--pass-credentials`). A redirect to
//!   another origin drops them (reqwest removes `Authorization` across origins), and a redirect
//!   from https to plain http is refused outright.
//! - TLS: the system's roots plus the CA of `argocd-tls-certs-cm` for the host, a client
//!   certificate from the Secret, or no verification at all with `insecure: "true"`.
//! - Every body is read up to a byte limit, never further.

use std::io::Read;
use std::time::Duration;

use reqwest::Url;
use reqwest::blocking::Client;

use crate::credentials::{RepoCredentials, TlsCerts};
use crate::redact::Redactor;

/// Redirects followed before giving up (Go's `net/http` default).
const MAX_REDIRECTS: usize = 10;

/// Why a download failed, before it is turned into a crate [`Error`](crate::Error).
#[derive(Debug)]
pub(crate) enum Failure {
    /// The server answered with this status (401, 404, ...).
    Status(u16),
    /// The body was longer than the limit.
    TooLarge,
    /// Anything else: connection, TLS, timeout, redirect policy, a bad configuration.
    Other(String),
}

impl Failure {
    pub(crate) fn describe(&self, limit: u64) -> String {
        match self {
            Failure::Status(401) => "authentication required or refused (HTTP 401)".into(),
            Failure::Status(403) => "access denied (HTTP 403)".into(),
            Failure::Status(404) => "not found (HTTP 404)".into(),
            Failure::Status(s) => format!("HTTP {s}"),
            Failure::TooLarge => format!("the response exceeds {limit} bytes"),
            Failure::Other(e) => e.clone(),
        }
    }
}

/// One GET of `url` for the repository `repo_url`, with the credentials and certificates that
/// apply, reading at most `max_bytes`.
pub(crate) fn get(
    url: &Url,
    repo_url: &Url,
    creds: Option<&RepoCredentials>,
    certs: &TlsCerts,
    timeout: Duration,
    max_bytes: u64,
    redactor: &Redactor,
) -> Result<Vec<u8>, Failure> {
    let client = client(url, creds, certs, timeout, redactor)?;
    let mut req = client.get(url.clone());
    if let Some(c) = creds
        && (same_origin(url, repo_url) || c.pass_credentials)
        && let Some(user) = &c.username
    {
        req = req.basic_auth(user, c.password.as_deref());
    }
    let resp = req
        .send()
        .map_err(|e| Failure::Other(redactor.clean(&error_chain(&e))))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(Failure::Status(status.as_u16()));
    }
    if resp.content_length().is_some_and(|n| n > max_bytes) {
        return Err(Failure::TooLarge);
    }
    let mut body = Vec::new();
    resp.take(max_bytes.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| Failure::Other(redactor.clean(&format!("reading the response: {e}"))))?;
    if body.len() as u64 > max_bytes {
        return Err(Failure::TooLarge);
    }
    Ok(body)
}

/// What a server answered to [`request`]: the status, the headers, and the body (read up to
/// the limit when the status is a success, empty otherwise).
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: Vec<u8>,
}

/// One GET of `url` with these extra `headers` (an `Accept`, an `Authorization`), TLS set up from
/// `creds` and `certs` as for [`get`], reading at most `max_bytes` of a successful body. Unlike
/// [`get`], a non-success status is a [`Reply`] (the OCI client reads its challenge), and no
/// credentials are added: the caller decides.
#[allow(clippy::too_many_arguments)]
pub(crate) fn request(
    url: &Url,
    headers: &[(reqwest::header::HeaderName, String)],
    creds: Option<&RepoCredentials>,
    certs: &TlsCerts,
    timeout: Duration,
    max_bytes: u64,
    redactor: &Redactor,
) -> Result<Reply, Failure> {
    let client = client(url, creds, certs, timeout, redactor)?;
    let mut req = client.get(url.clone());
    for (name, value) in headers {
        req = req.header(name, value);
    }
    let resp = req
        .send()
        .map_err(|e| Failure::Other(redactor.clean(&error_chain(&e))))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    if !resp.status().is_success() {
        return Ok(Reply {
            status,
            headers,
            body: Vec::new(),
        });
    }
    if resp.content_length().is_some_and(|n| n > max_bytes) {
        return Err(Failure::TooLarge);
    }
    let mut body = Vec::new();
    resp.take(max_bytes.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| Failure::Other(redactor.clean(&format!("reading the response: {e}"))))?;
    if body.len() as u64 > max_bytes {
        return Err(Failure::TooLarge);
    }
    Ok(Reply {
        status,
        headers,
        body,
    })
}

fn client(
    url: &Url,
    creds: Option<&RepoCredentials>,
    certs: &TlsCerts,
    timeout: Duration,
    redactor: &Redactor,
) -> Result<Client, Failure> {
    let mut b = Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(30)))
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error(format!("stopped after {MAX_REDIRECTS} redirects"))
            } else if attempt.url().scheme() == "http"
                && attempt.previous().iter().any(|p| p.scheme() == "https")
            {
                attempt.error("refusing a redirect from https to plain http")
            } else {
                attempt.follow()
            }
        }));
    b = crate::http_client::configure(b, url.host_str(), creds, certs)
        .map_err(|e| Failure::Other(redactor.clean(&e)))?;
    b.build()
        .map_err(|e| Failure::Other(redactor.clean(&error_chain(&e))))
}

/// Same scheme, host and port: where Helm sends a repository's credentials unasked.
pub(crate) fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `e` and its causes on one line (reqwest's own message is only the outermost).
fn error_chain(e: &dyn std::error::Error) -> String {
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
    fn origins_compare_scheme_host_and_port() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(same_origin(
            &u("https://charts.example.com/a/index.yaml"),
            &u("https://charts.example.com:443/b")
        ));
        assert!(!same_origin(
            &u("https://charts.example.com/a"),
            &u("http://charts.example.com/a")
        ));
        assert!(!same_origin(
            &u("https://cdn.example.com/a"),
            &u("https://charts.example.com/a")
        ));
        assert!(!same_origin(
            &u("https://127.0.0.1:8443/a"),
            &u("https://127.0.0.1:9443/a")
        ));
    }
}
