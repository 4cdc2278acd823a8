//! `/api/v1/gpgkeys`: the GnuPG public keys signatures are verified with (Argo's
//! `GPGKeyService`), kept in `argocd-gpg-keys-cm` of the control namespace as Argo keeps them
//! (key ID → ASCII-armored key). RBAC resource `gpgkeys`: `get` to read, `create` to add,
//! `delete` to remove. Every key is read by the real `gpg` in a throwaway home, bounded.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use plumb_source::KeyInfo;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::rbac::Authz;
use crate::state::AppState;

const GPG_KEYS_CM: &str = plumb_app::signatures::GPG_KEYS_CM;

/// Argo's `GnuPGPublicKey` JSON; `keyData` left out of lists, as Argo leaves it out.
fn key_json(k: &KeyInfo, with_data: bool) -> Value {
    let mut v = json!({"keyID": k.key_id});
    for (field, value) in [
        ("fingerprint", &k.fingerprint),
        ("owner", &k.owner),
        ("trust", &k.trust),
        ("subType", &k.sub_type),
    ] {
        if !value.is_empty() {
            v[field] = json!(value);
        }
    }
    if with_data && !k.key_data.is_empty() {
        v["keyData"] = json!(k.key_data);
    }
    v
}

async fn check(s: &AppState, caller: &crate::auth::Caller, action: &str) -> Result<()> {
    Authz::new(s, caller).await?.check("gpgkeys", action, "").await
}

fn api(s: &AppState) -> Api<ConfigMap> {
    Api::namespaced(s.client.clone(), &s.namespace)
}

/// The ConfigMap (absent: none yet) and its entries.
async fn read_cm(s: &AppState) -> Result<(Option<ConfigMap>, BTreeMap<String, String>)> {
    let cm = api(s)
        .get_opt(GPG_KEYS_CM)
        .await
        .map_err(|e| Error::kube("error getting GPG keys configmap", e))?;
    let data = cm.as_ref().and_then(|c| c.data.clone()).unwrap_or_default();
    Ok((cm, data))
}

/// Reads one key with gpg off the runtime.
async fn inspect(data: String) -> Result<Vec<KeyInfo>> {
    tokio::task::spawn_blocking(move || plumb_source::inspect_keys(&data))
        .await
        .map_err(|e| Error::Internal(format!("reading the key: {e}")))?
        .map_err(|e| Error::InvalidArgument(format!("error validating PGP keys from input: {e}")))
}

/// Every configured key, checked as Argo's `ListConfiguredGPGPublicKeys` checks them.
async fn configured(s: &AppState) -> Result<BTreeMap<String, KeyInfo>> {
    let (_, data) = read_cm(s).await?;
    let mut out = BTreeMap::new();
    for (name, armored) in data {
        let expected = plumb_source::key_id(&name).map_err(|e| {
            Error::Internal(format!(
                "error validating key ID {name:?} in GPG keys configmap: {e}"
            ))
        })?;
        let mut keys = inspect(armored.clone()).await.map_err(|e| {
            Error::Internal(format!("error parsing GPG key for entry {expected:?}: {e}"))
        })?;
        if keys.len() != 1 {
            return Err(Error::Internal(format!(
                "error parsing GPG key for entry {expected:?}: more than one key found in input data"
            )));
        }
        let mut key = keys.remove(0);
        if key.key_id != expected {
            return Err(Error::Internal(format!(
                "key parsed for entry with key ID '{expected}' had different key ID '{}'",
                key.key_id
            )));
        }
        key.key_data = armored;
        out.insert(key.key_id.clone(), key);
    }
    Ok(out)
}

/// `GET /api/v1/gpgkeys`.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Value>> {
    check(&s, &caller, "get").await?;
    let items: Vec<Value> = configured(&s)
        .await?
        .values()
        .map(|k| key_json(k, false))
        .collect();
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
    configured(&s)
        .await?
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
    if body.key_data.trim().is_empty() {
        return Err(Error::InvalidArgument("submitted key data is empty".into()));
    }
    let keys = inspect(body.key_data).await?;
    let (cm, mut data) = read_cm(&s).await?;
    let (mut created, mut skipped) = (Vec::new(), Vec::new());
    for k in keys {
        if data.contains_key(&k.key_id) {
            skipped.push(k.key_id.clone());
        } else {
            data.insert(k.key_id.clone(), k.key_data.clone());
            created.push(key_json(&k, true));
        }
    }
    if !created.is_empty() {
        save(&s, cm, data).await?;
    }
    Ok(Json(
        json!({"created": {"metadata": {}, "items": created}, "skipped": skipped}),
    ))
}

/// `DELETE /api/v1/gpgkeys?keyID=ID` (Argo's route), also `DELETE /api/v1/gpgkeys/{keyID}`.
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

async fn remove(s: &AppState, caller: &crate::auth::Caller, id: &str) -> Result<Json<Value>> {
    check(s, caller, "delete").await?;
    let (cm, mut data) = read_cm(s).await?;
    if data.remove(id).is_none() {
        return Err(Error::NotFound(format!("no such key configured: {id}")));
    }
    save(s, cm, data).await?;
    Ok(Json(json!({})))
}

/// Writes the entries: a new ConfigMap, or the one read replaced (its resourceVersion guards
/// against a concurrent change, which is refused rather than lost).
async fn save(s: &AppState, cm: Option<ConfigMap>, data: BTreeMap<String, String>) -> Result<()> {
    let api = api(s);
    let result = match cm {
        Some(mut cm) => {
            cm.data = Some(data);
            api.replace(GPG_KEYS_CM, &PostParams::default(), &cm).await
        }
        None => {
            let cm: ConfigMap = serde_json::from_value(json!({
                "metadata": {"name": GPG_KEYS_CM,
                    "labels": {"app.kubernetes.io/name": GPG_KEYS_CM,
                               "app.kubernetes.io/part-of": "argocd"}},
                "data": data,
            }))
            .map_err(|e| Error::Internal(e.to_string()))?;
            api.create(&PostParams::default(), &cm).await
        }
    };
    result
        .map(|_| ())
        .map_err(|e| Error::kube("error saving GPG public key data", e))
}
