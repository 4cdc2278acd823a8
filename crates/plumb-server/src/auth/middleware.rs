//! The authentication layer: every request but the public ones (version, settings, login,
//! health, metrics, webhooks) needs a valid token; the caller is put in the request's
//! extensions for the handlers' RBAC checks. Before that, the checks against cross-site use of
//! the session cookie ([`super::csrf`]): API writes need an allowed content type, and writes
//! the cookie authenticates must come from this server's origin.

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::caller::Caller;
use super::csrf::{self, RequestGuard};
use super::token_cookie::max_token_bytes;
use crate::error::Error;
use crate::state::AppState;

fn public(method: &Method, path: &str) -> bool {
    crate::ui::is_ui_path(method, path)
        || matches!(
            path,
            "/api/version"
                | "/api/v1/settings"
                | "/api/v1/session"
                | "/api/v1/session/userinfo"
                | "/healthz"
                | "/readyz"
                | "/metrics"
                | "/api/webhook"
        ) && (path != "/api/v1/session" || method == Method::POST || method == Method::DELETE)
}

/// Where a request's token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// `Authorization: Bearer`: set by a program, never attached by a browser on its own.
    Header,
    /// The `argocd.token` cookie: a browser sends it with requests other pages make too.
    Cookie,
}

/// The token of the request: `Authorization: Bearer` first, then the cookie.
fn token(req: &Request) -> Result<Option<(String, Source)>, Error> {
    let too_long = || Error::Unauthenticated("invalid session: token is too long".into());
    if let Some(h) = req.headers().get(header::AUTHORIZATION) {
        if h.len() > max_token_bytes() + 16 {
            return Err(too_long());
        }
        let h = h.to_str().map_err(|_| {
            Error::Unauthenticated("invalid session: malformed Authorization header".into())
        })?;
        let Some((scheme, token)) = h.split_once(' ') else {
            return Err(Error::Unauthenticated(
                "invalid session: expected Authorization: Bearer <token>".into(),
            ));
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(Error::Unauthenticated(
                "invalid session: expected Authorization: Bearer <token>".into(),
            ));
        }
        return Ok(Some(token.trim().to_string())
            .filter(|t| !t.is_empty())
            .map(|t| (t, Source::Header)));
    }
    // Argo's chunked cookie (`argocd.token`, `argocd.token-1`, ...) joined.
    match super::token_cookie::join(req.headers(), max_token_bytes()) {
        Ok(Some(t)) => return Ok(Some((t, Source::Cookie))),
        Ok(None) => {}
        Err(why) => return Err(Error::Unauthenticated(why)),
    }
    Ok(None)
}

/// Authenticates the request, or answers 401 as Argo's gateway does; refuses cross-site use of
/// the cookie first (415, 403).
pub(crate) async fn authenticate(
    State(s): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let guard = req
        .extensions()
        .get::<RequestGuard>()
        .cloned()
        .unwrap_or_default();
    if let Some(refused) = csrf::refuse_content_type(&guard, &req) {
        return refused;
    }
    if s.auth.is_none() {
        // Without authentication any page a browser shows can write: check it like a cookie.
        let checked = csrf::check_origin(&guard, &req);
        if let Err(e) = csrf::confirm_origin(&s, checked).await {
            return e.into_response();
        }
        req.extensions_mut().insert(Caller::unrestricted());
        return next.run(req).await;
    }
    let public = public(req.method(), req.uri().path());
    let token = match token(&req) {
        Ok(t) => t,
        Err(e) if public => {
            tracing::debug!("ignoring invalid credentials on a public path: {e}");
            None
        }
        Err(e) => return e.into_response(),
    };
    if let Some((_, Source::Cookie)) = &token {
        let checked = csrf::check_origin(&guard, &req);
        if let Err(e) = csrf::confirm_origin(&s, checked).await {
            return e.into_response();
        }
    }
    let caller = match token {
        Some((t, Source::Cookie)) => s.authenticate_session(&t, true).await.map(Some),
        Some((t, Source::Header)) => s.authenticate(&t).await.map(|c| Some((c, None))),
        None => Ok(None),
    };
    let mut renewed = None;
    match caller {
        Ok(Some((c, r))) => {
            req.extensions_mut().insert(c);
            renewed = r;
        }
        Ok(None) if public => {}
        Ok(None) => match anonymous_enabled(&s).await {
            Ok(true) => {
                req.extensions_mut().insert(Caller {
                    subject: String::new(),
                    groups: Vec::new(),
                    kind: super::CallerKind::Anonymous,
                });
            }
            Ok(false) => {
                return Error::Unauthenticated("no session information".into()).into_response();
            }
            // Closed when the setting cannot be read: the caller is not let in.
            Err(e) => {
                tracing::warn!("reading users.anonymous.enabled: {e}");
                return Error::Unauthenticated("no session information".into()).into_response();
            }
        },
        Err(e) if public => tracing::debug!("ignoring invalid credentials on a public path: {e}"),
        Err(e) => return e.into_response(),
    }
    run(req, next, renewed).await
}

/// The request answered; with a renewed session, its new cookie on the answer.
async fn run(req: Request, next: Next, renewed: Option<super::verify::Renewed>) -> Response {
    let Some(renewed) = renewed else {
        return next.run(req).await;
    };
    let secure = renewed.https
        || req
            .extensions()
            .get::<super::token_cookie::SecureCookie>()
            .is_none_or(|v| v.0);
    let sent = req.headers().clone();
    let mut resp = next.run(req).await;
    set_renewed_cookie(&mut resp, &sent, &renewed.id_token, secure);
    resp
}

/// The renewed ID token as the `argocd.token` cookie (split as the login's), its chunks the
/// request sent beyond the new count cleared; unless the answer sets the cookie itself (a
/// logout clears it, and that wins).
fn set_renewed_cookie(
    resp: &mut Response,
    sent: &axum::http::HeaderMap,
    token: &str,
    secure: bool,
) {
    let already = resp
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.starts_with(&format!("{}=", super::COOKIE)));
    if already {
        return;
    }
    let attributes = super::token_cookie::attributes(secure);
    let set = match super::token_cookie::set_cookies(token, &attributes) {
        Ok(set) => set,
        Err(why) => {
            tracing::warn!("the renewed session does not fit the cookies: {why}");
            return;
        }
    };
    let names: Vec<String> = set
        .iter()
        .filter_map(|c| c.split_once('=').map(|(k, _)| k.to_string()))
        .collect();
    let stale = super::token_cookie::clear_cookies(sent, &attributes)
        .into_iter()
        .filter(|c| {
            c.split_once('=')
                .is_some_and(|(k, _)| !names.iter().any(|n| n == k))
        });
    for c in set.into_iter().chain(stale) {
        if let Ok(v) = axum::http::HeaderValue::from_str(&c) {
            resp.headers_mut().append(header::SET_COOKIE, v);
        }
    }
}

/// Argo's `users.anonymous.enabled`: callers without a token get `policy.default` only.
async fn anonymous_enabled(s: &AppState) -> Result<bool, Error> {
    let cm =
        super::store::config_map(&s.client, &s.namespace, crate::state::SETTINGS_CONFIGMAP).await?;
    Ok(cm.get("users.anonymous.enabled").map(|v| v.trim()) == Some("true"))
}

/// The caller of a request that went through [`authenticate`].
pub(crate) struct Authenticated(pub(crate) Caller);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Authenticated {
    type Rejection = Error;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Error> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .map(Authenticated)
            .ok_or_else(|| Error::Unauthenticated("no session information".into()))
    }
}

impl<S: Send + Sync> axum::extract::OptionalFromRequestParts<S> for Authenticated {
    type Rejection = Error;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Option<Self>, Error> {
        Ok(parts.extensions.get::<Caller>().cloned().map(Authenticated))
    }
}
