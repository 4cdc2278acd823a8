//! The HTTP side shared by the services: one client per service with a timeout, bounded
//! response bodies, and errors that name the service and host but never a URL's path or
//! query, a header or a body sent (tokens live in all three).

use std::time::Duration;

use crate::error::Error;
use crate::webhook::ATTEMPT_TIMEOUT;

/// How much of a response is read (Slack's answer echoes the message; more is cut).
pub const MAX_RESPONSE: usize = 64 << 10;

/// A response, its body cut at [`MAX_RESPONSE`].
pub struct Response {
    pub status: u16,
    pub retry_after: Option<Duration>,
    pub body: String,
}

pub fn client(service: &str, insecure_skip_verify: bool) -> Result<reqwest::Client, Error> {
    reqwest::Client::builder()
        .timeout(ATTEMPT_TIMEOUT)
        .tls_danger_accept_invalid_certs(insecure_skip_verify)
        .build()
        .map_err(|e| Error::Service {
            service: service.to_string(),
            message: format!("HTTP client: {e}"),
        })
}

/// The host of `url` for messages (`?` when it has none).
pub fn host(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}

/// Sends `rb`; a transport error is reported without its URL.
pub async fn send(service: &str, rb: reqwest::RequestBuilder) -> Result<Response, Error> {
    let err = |e: reqwest::Error| Error::Service {
        service: service.to_string(),
        message: redact(e),
    };
    let mut resp = rb.send().await.map_err(err)?;
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(err)? {
        let room = MAX_RESPONSE.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if room == 0 {
            break;
        }
    }
    Ok(Response {
        status,
        retry_after,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// At most 4 KiB of a response body, for an error message.
pub fn excerpt(body: &str) -> &str {
    let mut end = body.len().min(crate::webhook::MAX_ERROR_BODY);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    &body[..end]
}

fn redact(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut s = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}
