//! `/api/v1/gpgkeys`: the GnuPG public keys signatures are verified with (Argo's
//! `GPGKeyService`), kept in `argocd-gpg-keys-cm` of the control namespace as Argo keeps them
//! (`plumb_app::gpg_keys`). RBAC resource `gpgkeys`: `get` to read, `create` to add, `delete`
//! to remove.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use plumb_app::gpg_keys::{self, KeyError, key_json};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::rbac::Authz;
use crate::state::AppState;

fn api_error(e: KeyError) -> Error {
    match e {
        KeyError::Invalid(m) => Error::InvalidArgument(m),
        KeyError::NotFound(m) => Error::NotFound(m),
        KeyError::Kube { context, source } => Error::kube(context, source),
        other => Error::Internal(other.to_string()),
    }
}

async fn check(s: &AppState, caller: &Caller, action: &str) -> Result<()> {
    Authz::new(s, caller)
        .await?
        .check("gpgkeys", action, "")
        .await
}

/// `GET /api/v1/gpgkeys`.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Value>> {
    check(&s, &caller, "get").await?;
    let keys = gpg_keys::configured(&s.client, &s.namespace)
        .await
        .map_err(api_error)?;
    let items: Vec<Value> = keys.values().map(|k| key_json(k, false)).collect();
    Ok(Json(json!({"metadata": {}, "items": items})))
}

/// `GET /api/v1/gpgkeys/{keyID}`.
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(key): Path<String>,
) -> Result<Json<Value>> {
    check(&s, &caller, "get").await?;
    let id = plumb_source::key_id(&key).map_err(Error::InvalidArgument)?;
    gpg_keys::configured(&s.client, &s.namespace)
        .await
        .map_err(api_error)?
        .get(&id)
        .map(|k| Json(key_json(k, true)))
        .ok_or_else(|| Error::NotFound(format!("no such key: {id}")))
}

/// The body of `POST /api/v1/gpgkeys` (Argo's `publickey`).
#[derive(Deserialize)]
pub(crate) struct NewKey {
    #[serde(rename = "keyData", default)]
    key_data: String,
}

/// `POST /api/v1/gpgkeys[?upsert=true]`: adds the keys of the armored data; keys already
/// configured are skipped (Argo accepts `upsert` and skips them all the same).
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
    Json(body): Json<NewKey>,
) -> Result<Json<Value>> {
    check(&s, &caller, "create").await?;
    Query::parse(raw.as_deref())
        .bool("upsert", false)
        .map_err(Error::InvalidArgument)?;
    let (created, skipped) = gpg_keys::add(&s.client, &s.namespace, body.key_data)
        .await
        .map_err(api_error)?;
    let items: Vec<Value> = created.iter().map(|k| key_json(k, true)).collect();
    Ok(Json(
        json!({"created": {"metadata": {}, "items": items}, "skipped": skipped}),
    ))
}

/// `DELETE /api/v1/gpgkeys?keyID=ID` (Argo's route).
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let id = Query::parse(raw.as_deref())
        .get("keyID")
        .unwrap_or_default()
        .to_string();
    remove(&s, &caller, &id).await
}

/// `DELETE /api/v1/gpgkeys/{keyID}`.
pub(crate) async fn delete_path(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    remove(&s, &caller, &id).await
}

async fn remove(s: &AppState, caller: &Caller, id: &str) -> Result<Json<Value>> {
    check(s, caller, "delete").await?;
    gpg_keys::remove(&s.client, &s.namespace, id)
        .await
        .map_err(api_error)?;
    Ok(Json(json!({})))
}
