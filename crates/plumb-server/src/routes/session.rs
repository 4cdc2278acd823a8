//! `/api/v1/session`: log in (Argo's `SessionService.Create`), log out (`Delete`: the session's
//! id is revoked), and `userinfo`.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::state::AppState;

/// Argo's `SessionCreateRequest` (the `token` form, for SSO, is not supported).
#[derive(Deserialize)]
pub(crate) struct Login {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
}

pub(crate) use crate::auth::token_cookie::SecureCookie;

/// Argo's session cookie (`argocd.token`) for the web UI: HTTP-only, so page scripts never
/// see the token; `SameSite=Lax`, so other sites' pages cannot send it with their writes.
/// Split over several cookies when it is too long for one, as Argo's `SetTokenCookie`.
fn cookies(token: &str, secure: SecureCookie) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let attributes = crate::auth::token_cookie::attributes(secure.0);
    let values = crate::auth::token_cookie::set_cookies(token, &attributes).unwrap_or_else(|why| {
        tracing::warn!("no session cookie: {why}");
        Vec::new()
    });
    for c in values {
        if let Ok(v) = HeaderValue::from_str(&c) {
            headers.append(header::SET_COOKIE, v);
        }
    }
    headers
}

/// `POST /api/v1/session`: `{"token"}`, and the token as the `argocd.token` cookie.
pub(crate) async fn create(
    State(s): State<AppState>,
    secure: Option<Extension<SecureCookie>>,
    Json(body): Json<Login>,
) -> Result<(HeaderMap, Json<Value>)> {
    if s.auth.is_none() {
        return Err(Error::FailedPrecondition(
            "authentication is disabled on this server; no session is needed".into(),
        ));
    }
    let token = s.login(&body.username, &body.password).await?;
    let secure = secure.map_or(SecureCookie(true), |Extension(v)| v);
    Ok((cookies(&token, secure), Json(json!({"token": token}))))
}

/// `DELETE /api/v1/session`: revokes the caller's session token and clears the cookie.
pub(crate) async fn delete(
    State(s): State<AppState>,
    secure: Option<Extension<SecureCookie>>,
    request: HeaderMap,
    caller: Option<Authenticated>,
) -> Result<(HeaderMap, Json<Value>)> {
    if let (Some(Authenticated(c)), Some(_)) = (caller, s.auth.as_ref()) {
        s.revoke_session(&c).await?;
        if matches!(c.kind, crate::auth::CallerKind::Sso { .. })
            && let Ok(Some(token)) = crate::auth::token_cookie::join(
                &request,
                crate::auth::token_cookie::max_token_bytes(),
            )
        {
            s.sso_end_session(&token).await?;
        }
    }
    let secure = secure.map_or(SecureCookie(true), |Extension(v)| v);
    let attributes = crate::auth::token_cookie::attributes(secure.0);
    let mut out = HeaderMap::new();
    for c in crate::auth::token_cookie::clear_cookies(&request, &attributes) {
        if let Ok(v) = HeaderValue::from_str(&c) {
            out.append(header::SET_COOKIE, v);
        }
    }
    Ok((out, Json(json!({}))))
}

/// `GET /api/v1/session/userinfo`: `loggedIn`, `username`, `iss`, `groups`.
pub(crate) async fn userinfo(caller: Option<Authenticated>) -> Json<Value> {
    match caller {
        Some(Authenticated(c)) if !c.subject.is_empty() => Json(json!({
            "loggedIn": true,
            "username": c.subject,
            "iss": c.issuer(),
            "groups": c.groups,
        })),
        _ => Json(json!({"loggedIn": false})),
    }
}
