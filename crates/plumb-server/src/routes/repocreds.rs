//! `/api/v1/repocreds`: Argo's `RepoCredsService` (list, create with `upsert`, update,
//! delete), over the `repo-creds` Secrets of the control namespace. RBAC resource
//! `repositories`, object the template's URL. The list shows `url`, `username`, `type` and
//! `enableOCI` only.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use plumb_app::repo_admin::{RepoSpec, Role};
use serde_json::{Value, json};

use super::repositories::{admin, body_json};
use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::{self, Query};
use crate::rbac::Authz;
use crate::state::AppState;

/// `GET /api/v1/repocreds`.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Value>> {
    let mut authz = Authz::new(&s, &caller).await?;
    let mut items = Vec::new();
    for t in admin(&s).templates().await? {
        if authz.allows("repositories", "get", &t.spec.url).await? {
            items.push(t.spec.sanitized(false));
        }
    }
    Ok(Json(gateway::list(None, items)))
}

/// `POST /api/v1/repocreds?upsert=`: Argo's `CreateRepositoryCredentials`.
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Result<Json<Value>> {
    let upsert = Query::parse(raw.as_deref())
        .bool("upsert", false)
        .map_err(Error::InvalidArgument)?;
    let spec = RepoSpec::from_request(Role::Template, &body_json(&body)?)?;
    Authz::new(&s, &caller)
        .await?
        .check("repositories", "create", &spec.url)
        .await?;
    Ok(Json(admin(&s).create_template(&spec, upsert).await?))
}

/// `PUT /api/v1/repocreds/{url}`: Argo's `UpdateRepositoryCredentials`.
pub(crate) async fn update(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(_url): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let spec = RepoSpec::from_request(Role::Template, &body_json(&body)?)?;
    Authz::new(&s, &caller)
        .await?
        .check("repositories", "update", &spec.url)
        .await?;
    admin(&s).update(&spec).await?;
    Ok(Json(json!({"url": spec.url})))
}

/// `DELETE /api/v1/repocreds/{url}`: Argo's `DeleteRepositoryCredentials`.
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(url): Path<String>,
) -> Result<Json<Value>> {
    Authz::new(&s, &caller)
        .await?
        .check("repositories", "delete", &url)
        .await?;
    admin(&s).delete_template(&url).await?;
    Ok(Json(json!({})))
}
