//! `/api/v1/session`: log in (Argo's `SessionService.Create`), log out (`Delete`: the session's
//! id is revoked), and `userinfo`.

use axum::Json;
use axum::extract::State;
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

/// `POST /api/v1/session`: `{"token"}`.
pub(crate) async fn create(
    State(s): State<AppState>,
    Json(body): Json<Login>,
) -> Result<Json<Value>> {
    if s.auth.is_none() {
        return Err(Error::FailedPrecondition(
            "authentication is disabled on this server; no session is needed".into(),
        ));
    }
    let token = s.login(&body.username, &body.password).await?;
    Ok(Json(json!({"token": token})))
}

/// `DELETE /api/v1/session`: revokes the caller's session token.
pub(crate) async fn delete(
    State(s): State<AppState>,
    caller: Option<Authenticated>,
) -> Result<Json<Value>> {
    if let (Some(Authenticated(c)), Some(_)) = (caller, s.auth.as_ref()) {
        s.revoke_session(&c)?;
    }
    Ok(Json(json!({})))
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
