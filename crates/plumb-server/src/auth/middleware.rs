//! The authentication layer: every request but the public ones (version, settings, login,
//! health, metrics, webhooks) needs a valid token; the caller is put in the request's
//! extensions for the handlers' RBAC checks.

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Caller, MAX_TOKEN_BYTES};
use crate::error::Error;
use crate::state::AppState;

/// Argo's session cookie.
const COOKIE: &str = "argocd.token";

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

/// The token of the request: `Authorization: Bearer` first, then the cookie.
fn token(req: &Request) -> Result<Option<String>, Error> {
    let too_long = || Error::Unauthenticated("invalid session: token is too long".into());
    if let Some(h) = req.headers().get(header::AUTHORIZATION) {
        if h.len() > MAX_TOKEN_BYTES + 16 {
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
        return Ok(Some(token.trim().to_string()).filter(|t| !t.is_empty()));
    }
    for h in req.headers().get_all(header::COOKIE) {
        let Ok(h) = h.to_str() else { continue };
        for pair in h.split(';') {
            if let Some((k, v)) = pair.trim().split_once('=')
                && k == COOKIE
            {
                if v.len() > MAX_TOKEN_BYTES {
                    return Err(too_long());
                }
                return Ok(Some(v.to_string()).filter(|t| !t.is_empty()));
            }
        }
    }
    Ok(None)
}

/// Authenticates the request, or answers 401 as Argo's gateway does.
pub(crate) async fn authenticate(
    State(s): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    if s.auth.is_none() {
        req.extensions_mut().insert(Caller::unrestricted());
        return next.run(req).await;
    }
    let public = public(req.method(), req.uri().path());
    let caller = match token(&req) {
        Ok(Some(t)) => s.authenticate(&t).await.map(Some),
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    };
    match caller {
        Ok(Some(c)) => {
            req.extensions_mut().insert(c);
        }
        Ok(None) if public => {}
        Ok(None) => {
            return Error::Unauthenticated("no session information".into()).into_response();
        }
        Err(e) if public => tracing::debug!("ignoring invalid credentials on a public path: {e}"),
        Err(e) => return e.into_response(),
    }
    next.run(req).await
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
