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

/// Whether the session cookie is marked `Secure`: yes when the server speaks TLS, as
/// argocd-server omits it only with `--insecure`.
#[derive(Clone, Copy)]
pub(crate) struct SecureCookie(pub(crate) bool);

/// Argo's session cookie (`argocd.token`) for the web UI: HTTP-only, so page scripts never
/// see the token; `SameSite=Lax`, so other sites' pages cannot send it with their writes.
fn cookie(token: &str, secure: SecureCookie) -> Option<HeaderValue> {
    let max_age = if token.is_empty() { "; Max-Age=0" } else { "" };
    let secure = if secure.0 { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "argocd.token={token}; Path=/; SameSite=Lax; HttpOnly{secure}{max_age}"
    ))
    .ok()
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
    let mut headers = HeaderMap::new();
    if let Some(c) = cookie(&token, secure) {
        headers.insert(header::SET_COOKIE, c);
    }
    Ok((headers, Json(json!({"token": token}))))
}

/// `DELETE /api/v1/session`: revokes the caller's session token and clears the cookie.
pub(crate) async fn delete(
    State(s): State<AppState>,
    secure: Option<Extension<SecureCookie>>,
    caller: Option<Authenticated>,
) -> Result<(HeaderMap, Json<Value>)> {
    if let (Some(Authenticated(c)), Some(_)) = (caller, s.auth.as_ref()) {
        s.revoke_session(&c).await?;
    }
    let secure = secure.map_or(SecureCookie(true), |Extension(v)| v);
    let mut headers = HeaderMap::new();
    if let Some(c) = cookie("", secure) {
        headers.insert(header::SET_COOKIE, c);
    }
    Ok((headers, Json(json!({}))))
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
