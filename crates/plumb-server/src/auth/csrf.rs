//! What keeps other sites from using a browser's session (CVE-2024-22424, the class of issue
//! #26 item 4). The session cookie is `SameSite=Lax`, which stops other *sites* but not sibling
//! subdomains (`x.corp.example` is the same site as `plumb.corp.example`), and a page there
//! can POST a `text/plain` or form body with the cookie attached. Two checks, as Argo CD's:
//!
//! - **Content types** (Argo's `enforceContentTypes`, argocd-cmd-params-cm
//!   `server.api.content.types`, default `application/json`, `;`-separated, empty: no check):
//!   an API request other than GET/HEAD/OPTIONS that carries a body or a `Content-Type` must
//!   name an allowed media type, else 415 `Invalid content type`. A page of another origin
//!   cannot send `application/json` without a CORS preflight, which this server never grants.
//!   Webhooks (`/api/webhook`) are exempt: Git providers choose their own content types.
//! - **Origin** (Plumb's addition): a state-changing request authenticated by the cookie (or
//!   any, with `--disable-auth`) that carries `Origin` must come from this server's own origin:
//!   the scheme and authority the request was sent to, or argocd-cm's `url` or
//!   `additionalUrls`; 403 otherwise. Bearer tokens are exempt: a browser never attaches them
//!   by itself.

use std::sync::Arc;

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::uri::Authority;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::store;
use crate::error::{Error, Result};
use crate::state::{AppState, SETTINGS_CONFIGMAP};

/// The argocd-cmd-params-cm key of the allowed content types (Argo's `--api-content-types`).
pub(crate) const CONTENT_TYPES_KEY: &str = "server.api.content.types";
/// Argo's default.
const DEFAULT_CONTENT_TYPES: &str = "application/json";
/// The one route that takes whatever content type its sender uses.
const WEBHOOK: &str = "/api/webhook";

/// The allowed media types of API request bodies; empty: any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiContentTypes(Arc<Vec<String>>);

impl Default for ApiContentTypes {
    fn default() -> Self {
        Self::parse(Some(DEFAULT_CONTENT_TYPES))
    }
}

impl ApiContentTypes {
    /// `value` as Argo reads it (`;`-separated); absent: Argo's default; empty: no check.
    pub(crate) fn parse(value: Option<&str>) -> Self {
        let value = value.unwrap_or(DEFAULT_CONTENT_TYPES);
        Self(Arc::new(
            value
                .split(';')
                .map(essence)
                .filter(|t| !t.is_empty())
                .collect(),
        ))
    }

    /// The server's setting: argocd-cmd-params-cm in `ns`, read at start as Argo reads it.
    pub(crate) async fn read(client: &kube::Client, ns: &str) -> Result<Self> {
        let cm = store::config_map(client, ns, plumb_app::CMD_PARAMS_CONFIGMAP).await?;
        Ok(Self::parse(cm.get(CONTENT_TYPES_KEY).map(String::as_str)))
    }

    fn allows(&self, content_type: Option<&HeaderValue>) -> bool {
        if self.0.is_empty() {
            return true;
        }
        content_type
            .and_then(|v| v.to_str().ok())
            .map(essence)
            .is_some_and(|t| self.0.contains(&t))
    }
}

/// The media type of a `Content-Type`, lower-case, without parameters: `text/plain;
/// charset=...` is still `text/plain`, and parameters cannot smuggle another type in.
fn essence(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// What the checks need to know about this server, put in each request's extensions.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestGuard {
    /// Allowed content types.
    pub(crate) content_types: ApiContentTypes,
    /// Whether the server speaks TLS (then only `https` origins are its own).
    pub(crate) plaintext: bool,
}

fn state_changing(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// 415 when `req` is an API write whose body or `Content-Type` is not an allowed type.
pub(crate) fn refuse_content_type(guard: &RequestGuard, req: &Request) -> Option<Response> {
    let path = req.uri().path();
    if !state_changing(req.method()) || !path.starts_with("/api/") || path == WEBHOOK {
        return None;
    }
    let content_type = req.headers().get(header::CONTENT_TYPE);
    // A body-less request without a type has nothing to misread (`DELETE`); a form always
    // sends its type, even empty, so it is checked.
    if content_type.is_none() && req.body().is_end_stream() {
        return None;
    }
    if guard.content_types.allows(content_type) {
        return None;
    }
    tracing::info!(
        method = %req.method(),
        path,
        "request refused: content type not in {CONTENT_TYPES_KEY}"
    );
    // Argo's answer, byte for byte (Go's http.Error).
    let mut resp = (
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Body::from("Invalid content type\n"),
    )
        .into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    Some(resp)
}

/// A scheme and authority, normalized: lower-case, default ports made explicit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    fn new(scheme: &str, authority: &Authority) -> Option<Self> {
        let scheme = scheme.to_ascii_lowercase();
        let port = match (authority.port_u16(), scheme.as_str()) {
            (Some(p), _) => p,
            (None, "https") => 443,
            (None, "http") => 80,
            _ => return None,
        };
        Some(Self {
            scheme,
            host: authority.host().to_ascii_lowercase(),
            port,
        })
    }

    /// An `Origin` header's value or a configured URL (its path ignored).
    fn parse(url: &str) -> Option<Self> {
        let uri: Uri = url.trim().parse().ok()?;
        Self::new(uri.scheme_str()?, uri.authority()?)
    }
}

/// The origins the request itself was addressed to: its authority (HTTP/2) or `Host`, with
/// `https`, and `http` too when the server speaks plain HTTP (TLS then ends in a proxy).
fn addressed(guard: &RequestGuard, req: &Request) -> Vec<Origin> {
    let authority = req.uri().authority().cloned().or_else(|| {
        req.headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.parse::<Authority>().ok())
    });
    let Some(authority) = authority else {
        return Vec::new();
    };
    let schemes: &[&str] = if guard.plaintext {
        &["https", "http"]
    } else {
        &["https"]
    };
    schemes
        .iter()
        .filter_map(|s| Origin::new(s, &authority))
        .collect()
}

/// argocd-cm's `url` and `additionalUrls` (a YAML list; read leniently: every token with a
/// scheme).
fn configured(cm: &std::collections::BTreeMap<String, String>) -> Vec<Origin> {
    let mut out: Vec<Origin> = cm
        .get("url")
        .and_then(|u| Origin::parse(u))
        .into_iter()
        .collect();
    if let Some(list) = cm.get("additionalUrls") {
        out.extend(
            list.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']'))
                .map(|t| t.trim_matches(|c| matches!(c, '"' | '\'' | '-')))
                .filter(|t| t.contains("://"))
                .filter_map(Origin::parse),
        );
    }
    out
}

/// An `Origin` not among those the request was addressed to: it may still be one argocd-cm
/// names, which [`confirm_origin`] reads.
#[derive(Debug)]
pub(crate) struct Unconfirmed {
    origin: Origin,
    shown: String,
}

/// The part of the Origin check that needs no settings: `Ok(None)` when `req` does not change
/// state, carries no `Origin`, or comes from the origin it was addressed to; 403 for an origin
/// that is nobody's (`null`, garbage). Called for requests whose credentials a browser attaches
/// by itself (the cookie).
pub(crate) fn check_origin(guard: &RequestGuard, req: &Request) -> Result<Option<Unconfirmed>> {
    if !state_changing(req.method()) || req.uri().path() == WEBHOOK {
        return Ok(None);
    }
    let Some(origin) = req.headers().get(header::ORIGIN) else {
        return Ok(None);
    };
    let shown = origin.to_str().unwrap_or("(not text)").to_string();
    // `null` (sandboxed frames, some redirects) and garbage are nobody's origin.
    let Some(origin) = origin.to_str().ok().and_then(Origin::parse) else {
        return Err(cross_origin(&shown));
    };
    if addressed(guard, req).contains(&origin) {
        return Ok(None);
    }
    Ok(Some(Unconfirmed { origin, shown }))
}

/// The rest of the Origin check: 403 unless argocd-cm's `url` or `additionalUrls` names it
/// (the server behind a proxy that rewrites `Host`).
pub(crate) async fn confirm_origin(
    s: &AppState,
    checked: Result<Option<Unconfirmed>>,
) -> Result<()> {
    let Some(Unconfirmed { origin, shown }) = checked? else {
        return Ok(());
    };
    let cm = store::config_map(&s.client, &s.namespace, SETTINGS_CONFIGMAP).await?;
    if configured(&cm).contains(&origin) {
        return Ok(());
    }
    Err(cross_origin(&shown))
}

fn cross_origin(origin: &str) -> Error {
    tracing::info!(
        origin,
        "cross-origin request with the session cookie refused"
    );
    Error::PermissionDenied(format!(
        "request origin {origin:?} is not this server's origin; requests of other sites may not use the session cookie"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &'static str,
    ) -> Request {
        let mut b = axum::http::Request::builder().method(method).uri(path);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::from(body)).expect("request")
    }

    #[test]
    fn api_writes_need_an_allowed_content_type() {
        let guard = RequestGuard::default();
        let refused = |m: Method, p: &str, h: &[(&str, &str)], b: &'static str| {
            refuse_content_type(&guard, &request(m, p, h, b)).map(|r| r.status().as_u16())
        };
        let json = [("content-type", "application/json")];
        let charset = [("content-type", "Application/JSON; charset=utf-8")];
        let text = [("content-type", "text/plain")];
        let form = [("content-type", "application/x-www-form-urlencoded")];
        let sync = "/api/v1/applications/web/sync";
        assert_eq!(refused(Method::POST, sync, &json, "{}"), None);
        assert_eq!(refused(Method::POST, sync, &charset, "{}"), None);
        assert_eq!(refused(Method::POST, sync, &text, "{}"), Some(415));
        assert_eq!(refused(Method::POST, sync, &form, "a=b"), Some(415));
        assert_eq!(
            refused(Method::POST, sync, &form, ""),
            Some(415),
            "an empty form"
        );
        assert_eq!(
            refused(Method::POST, sync, &[], "{}"),
            Some(415),
            "a body, no type"
        );
        assert_eq!(refused(Method::DELETE, "/api/v1/session", &[], ""), None);
        assert_eq!(
            refused(Method::GET, "/api/v1/applications", &text, ""),
            None
        );
        assert_eq!(refused(Method::POST, WEBHOOK, &form, "payload=x"), None);
        let open = RequestGuard {
            content_types: ApiContentTypes::parse(Some("")),
            ..RequestGuard::default()
        };
        assert!(refuse_content_type(&open, &request(Method::POST, sync, &text, "{}")).is_none());
        let two = ApiContentTypes::parse(Some("application/json;text/plain"));
        assert!(two.allows(Some(&HeaderValue::from_static("text/plain"))));
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let tls = RequestGuard::default();
        let req = request(Method::POST, "/x", &[("host", "Plumb.corp.example")], "");
        let own = addressed(&tls, &req);
        assert!(own.contains(&Origin::parse("https://plumb.corp.example:443").expect("origin")));
        assert!(!own.contains(&Origin::parse("http://plumb.corp.example").expect("origin")));
        assert!(!own.contains(&Origin::parse("https://x.corp.example").expect("origin")));
        let plain = RequestGuard {
            plaintext: true,
            ..RequestGuard::default()
        };
        assert!(
            addressed(&plain, &req)
                .contains(&Origin::parse("http://plumb.corp.example").expect("origin"))
        );
        assert_eq!(Origin::parse("null"), None);
        let cm = [
            (
                "url".to_string(),
                "https://cd.example.com/argocd".to_string(),
            ),
            (
                "additionalUrls".to_string(),
                "- https://cd.internal:8443\n- \"https://cd2.example\"".to_string(),
            ),
        ]
        .into_iter()
        .collect();
        let configured = configured(&cm);
        assert_eq!(configured.len(), 3, "{configured:?}");
        assert!(configured.contains(&Origin::parse("https://cd.internal:8443").expect("origin")));
    }
}
