//! The webhook service (notifications-engine's `pkg/services/webhook.go`): `url`, `headers`,
//! `basicAuth`, `insecureSkipVerify`, and go-retryablehttp's retries (`retryWaitMin` 1 s,
//! `retryWaitMax` 5 s, `retryMax` 3: connection errors, 429 and 5xx except 501 are retried,
//! waiting `min * 2^attempt` capped at max, or a 429/503's `Retry-After`, capped at max here).
//!
//! The request: method `GET` and the message as body by default; a template's
//! `webhook.<service name>` sets the method, appends its path to the URL and replaces the body.
//!
//! Errors name the service and the host, never the URL's path or query (a Slack-style hook
//! URL is itself a secret) nor a header value.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

/// How long one attempt may take (Argo sets none: a receiver that never answers would hold
/// the controller forever).
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(30);
/// How much of an error response is kept for the message.
pub const MAX_ERROR_BODY: usize = 4096;

#[derive(Deserialize, Default, Clone)]
#[serde(default)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default)]
struct BasicAuth {
    username: String,
    password: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct RawOptions {
    url: String,
    headers: Vec<Header>,
    basic_auth: Option<BasicAuth>,
    retry_wait_min: Option<Value>,
    retry_wait_max: Option<Value>,
    retry_max: i64,
    insecure_skip_verify: bool,
}

/// A webhook service's options (secrets already resolved: never logged).
#[derive(Clone)]
pub struct WebhookOptions {
    pub url: String,
    headers: Vec<Header>,
    basic_auth: Option<BasicAuth>,
    pub retry_wait_min: Duration,
    pub retry_wait_max: Duration,
    pub retry_max: u32,
    pub insecure_skip_verify: bool,
}

impl WebhookOptions {
    /// From the `service.webhook.<name>` options; defaults as notifications-engine's.
    pub fn parse(service: &str, options: &Value) -> Result<WebhookOptions, Error> {
        let err = |message: String| Error::Service {
            service: service.to_string(),
            message,
        };
        let raw: RawOptions =
            serde_json::from_value(options.clone()).map_err(|e| err(e.to_string()))?;
        let duration = |v: &Option<Value>, field: &str, default: Duration| match v {
            None | Some(Value::Null) => Ok(default),
            Some(v) => go_duration(v)
                .map(|d| if d.is_zero() { default } else { d })
                .ok_or_else(|| err(format!("{field}: not a duration: {v}"))),
        };
        if url::Url::parse(&raw.url).is_err() {
            return Err(err("url: not an absolute URL".to_string()));
        }
        Ok(WebhookOptions {
            url: raw.url,
            headers: raw.headers,
            basic_auth: raw.basic_auth,
            retry_wait_min: duration(&raw.retry_wait_min, "retryWaitMin", Duration::from_secs(1))?,
            retry_wait_max: duration(&raw.retry_wait_max, "retryWaitMax", Duration::from_secs(5))?,
            retry_max: match raw.retry_max {
                0 => 3,
                n => u32::try_from(n.clamp(0, 20)).unwrap_or(3),
            },
            insecure_skip_verify: raw.insecure_skip_verify,
        })
    }
}

/// Go's `time.Duration` in JSON is nanoseconds; Argo's docs write `1s`, which is taken too.
fn go_duration(v: &Value) -> Option<Duration> {
    match v {
        Value::Number(n) => n.as_u64().map(Duration::from_nanos),
        Value::String(s) => s
            .parse::<jiff::SignedDuration>()
            .ok()
            .and_then(|d| Duration::try_from(d).ok()),
        _ => None,
    }
}

/// One request, as notifications-engine builds it.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookRequest {
    pub method: String,
    pub url: String,
    pub body: String,
}

impl WebhookRequest {
    /// The request for `dest` of `notification` to the service at `base_url`.
    pub fn build(base_url: &str, notification: &Notification, dest: &Destination) -> Self {
        let mut r = WebhookRequest {
            method: "GET".to_string(),
            url: base_url.to_string(),
            body: notification.message.clone(),
        };
        if let Some(w) = notification.webhook.get(&dest.service) {
            r.body = w.body.clone();
            if !w.method.is_empty() {
                r.method = w.method.clone();
            }
            if !w.path.is_empty() {
                r.url = format!(
                    "{}/{}",
                    r.url.trim_end_matches('/'),
                    w.path.trim_start_matches('/')
                );
            }
        }
        r
    }
}

/// A configured webhook service.
pub struct WebhookService {
    name: String,
    options: WebhookOptions,
    http: reqwest::Client,
}

impl WebhookService {
    /// The service `name` with its options.
    pub fn new(name: &str, options: WebhookOptions) -> Result<Self, Error> {
        let http = reqwest::Client::builder()
            .timeout(ATTEMPT_TIMEOUT)
            .tls_danger_accept_invalid_certs(options.insecure_skip_verify)
            .build()
            .map_err(|e| Error::Service {
                service: name.to_string(),
                message: format!("HTTP client: {e}"),
            })?;
        Ok(Self {
            name: name.to_string(),
            options,
            http,
        })
    }

    /// The service's base URL.
    pub fn url(&self) -> &str {
        &self.options.url
    }

    /// Sends `notification` to `dest`, with retries.
    pub async fn send(&self, notification: &Notification, dest: &Destination) -> Result<(), Error> {
        let req = WebhookRequest::build(&self.options.url, notification, dest);
        self.execute(&req).await
    }

    /// Executes one request with go-retryablehttp's policy.
    pub async fn execute(&self, req: &WebhookRequest) -> Result<(), Error> {
        let err = |message: String| Error::Service {
            service: self.name.clone(),
            message,
        };
        let method = reqwest::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| err(format!("invalid method {:?}", req.method)))?;
        let url = url::Url::parse(&req.url).map_err(|e| err(format!("invalid URL: {e}")))?;
        let target = format!("{} {}", req.method, url.host_str().unwrap_or_default());
        let mut attempt = 0u32;
        loop {
            let outcome = self.attempt(method.clone(), url.clone(), &req.body).await;
            let (retry, wait_hint, failure) = match outcome {
                Ok((status, _, _)) if status.is_success() => return Ok(()),
                Ok((status, retry_after, body)) => (
                    status.as_u16() == 429 || (status.is_server_error() && status.as_u16() != 501),
                    retry_after,
                    format!(
                        "request {target} has failed with error code {} : {body}",
                        status.as_u16()
                    ),
                ),
                Err(e) => (true, None, format!("request {target}: {}", redact(e))),
            };
            if !retry {
                return Err(err(failure));
            }
            if attempt >= self.options.retry_max {
                return Err(err(format!(
                    "{target} giving up after {} attempt(s): {failure}",
                    attempt + 1
                )));
            }
            tokio::time::sleep(self.backoff(attempt, wait_hint)).await;
            attempt += 1;
        }
    }

    async fn attempt(
        &self,
        method: reqwest::Method,
        url: url::Url,
        body: &str,
    ) -> Result<(reqwest::StatusCode, Option<Duration>, String), reqwest::Error> {
        let mut rb = self.http.request(method, url).body(body.to_string());
        for h in &self.options.headers {
            rb = rb.header(h.name.as_str(), h.value.as_str());
        }
        if let Some(auth) = &self.options.basic_auth {
            rb = rb.basic_auth(&auth.username, Some(&auth.password));
        }
        let mut resp = rb.send().await?;
        let status = resp.status();
        let retry_after = (status.as_u16() == 429 || status.as_u16() == 503)
            .then(|| resp.headers().get(reqwest::header::RETRY_AFTER))
            .flatten()
            .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await? {
            let room = MAX_ERROR_BODY.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if room == 0 || status.is_success() {
                break;
            }
        }
        Ok((
            status,
            retry_after,
            String::from_utf8_lossy(&body).into_owned(),
        ))
    }

    /// go-retryablehttp's `DefaultBackoff`, the `Retry-After` capped at `retryWaitMax`.
    pub fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let (min, max) = (self.options.retry_wait_min, self.options.retry_wait_max);
        if let Some(d) = retry_after {
            return d.min(max);
        }
        let factor = 2u32.checked_pow(attempt).unwrap_or(u32::MAX);
        min.checked_mul(factor).map_or(max, |d| d.min(max))
    }
}

/// A reqwest error without its URL.
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
