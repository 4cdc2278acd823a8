//! `/api/v1/account`: local accounts and their API keys (Argo's `AccountService`), and `can-i`.

use axum::Json;
use axum::extract::{Path, State};
use k8s_openapi::ByteString;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::accounts::{Account, Capability, TokenRecord};
use crate::auth::middleware::Authenticated;
use crate::auth::{Caller, jwt, new_token_id, store};
use crate::error::{Error, Result};
use crate::gateway::json_i64;
use crate::rbac::Authz;
use crate::state::AppState;

fn account_json(a: &Account) -> Value {
    let tokens: Vec<Value> = a
        .tokens
        .iter()
        .map(|t| {
            let mut v = json!({"id": t.id, "issuedAt": t.iat.to_string()});
            if t.exp > 0 {
                v["expiresAt"] = json!(t.exp.to_string());
            }
            v
        })
        .collect();
    json!({
        "name": a.name,
        "enabled": a.enabled,
        "capabilities": a.capabilities.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "tokens": tokens,
    })
}

/// Argo's `ensureHasAccountPermission`: an account may always act on itself; others need
/// `accounts, <action>, <name>`.
async fn ensure(s: &AppState, caller: &Caller, action: &str, name: &str) -> Result<()> {
    if caller.account() == Some(name) {
        return Ok(());
    }
    Authz::new(s, caller)
        .await?
        .check("accounts", action, name)
        .await
}

async fn account(s: &AppState, name: &str) -> Result<Account> {
    let (_, accounts) = s.accounts().await?;
    accounts
        .get(name)
        .cloned()
        .ok_or_else(|| Error::NotFound(format!("account '{name}' does not exist")))
}

/// `GET /api/v1/account`: the accounts the caller may get.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Value>> {
    let (_, accounts) = s.accounts().await?;
    let mut authz = Authz::new(&s, &caller).await?;
    let mut items = Vec::new();
    for a in accounts.values() {
        if caller.account() == Some(a.name.as_str())
            || authz.allows("accounts", "get", &a.name).await?
        {
            items.push(account_json(a));
        }
    }
    Ok(Json(json!({"items": items})))
}

/// `GET /api/v1/account/{name}`.
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<Value>> {
    ensure(&s, &caller, "get", &name).await?;
    Ok(Json(account_json(&account(&s, &name).await?)))
}

/// Argo's `CreateTokenRequest` (`expiresIn` in seconds; int64 arrives as a JSON string too).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateToken {
    #[serde(default)]
    expires_in: Option<Value>,
    #[serde(default)]
    id: Option<String>,
}

fn expires_in(v: &Option<Value>) -> Result<i64> {
    match v {
        None | Some(Value::Null) => Ok(0),
        Some(v) => json_i64(v)
            .filter(|s| *s >= 0)
            .ok_or_else(|| Error::InvalidArgument("expiresIn: expected seconds (0: never)".into())),
    }
}

fn check_token_id(id: &str) -> Result<()> {
    if id.is_empty()
        || id.len() > 128
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(Error::InvalidArgument(
            "id: letters, digits, '-', '_' and '.', at most 128".into(),
        ));
    }
    Ok(())
}

/// `POST /api/v1/account/{name}/token`: an API key (`<name>:apiKey`), recorded in
/// `argocd-secret` so it can be revoked.
pub(crate) async fn create_token(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<Value>> {
    ensure(&s, &caller, "update", &name).await?;
    let body: CreateToken = if body.iter().all(u8::is_ascii_whitespace) {
        CreateToken::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| Error::InvalidArgument(format!("reading the token request: {e}")))?
    };
    let seconds = expires_in(&body.expires_in)?;
    let id = match body.id.filter(|i| !i.is_empty()) {
        Some(id) => id,
        None => new_token_id()?,
    };
    check_token_id(&id)?;
    let a = account(&s, &name).await?;
    if !a.has(Capability::ApiKey) {
        return Err(Error::InvalidArgument(format!(
            "account '{name}' does not have apiKey capability"
        )));
    }
    let claims = jwt::Claims::new(format!("{name}:apiKey"), seconds, id.clone());
    let key = Account::tokens_key(&name);
    store::update_secret(&s.client, &s.namespace, |data| {
        let mut tokens: Vec<TokenRecord> = match data.get(&key) {
            Some(v) if !v.0.is_empty() => serde_json::from_slice(&v.0)
                .map_err(|e| Error::Internal(format!("Secret argocd-secret, key {key}: {e}")))?,
            _ => Vec::new(),
        };
        if tokens.iter().any(|t| t.id == id) {
            return Err(Error::AlreadyExists(format!(
                "account already has token with id '{id}'"
            )));
        }
        tokens.push(TokenRecord {
            id: id.clone(),
            iat: claims.iat,
            exp: claims.exp.unwrap_or(0),
        });
        let text = serde_json::to_vec(&tokens)
            .map_err(|e| Error::Internal(format!("encoding tokens: {e}")))?;
        data.insert(key.clone(), ByteString(text));
        Ok((true, ()))
    })
    .await?;
    let token = s.sign(&claims).await?;
    Ok(Json(json!({"token": token})))
}

/// `DELETE /api/v1/account/{name}/token/{id}`: the key stops working at once.
pub(crate) async fn delete_token(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((name, id)): Path<(String, String)>,
) -> Result<Json<Value>> {
    ensure(&s, &caller, "update", &name).await?;
    account(&s, &name).await?;
    let key = Account::tokens_key(&name);
    store::update_secret(&s.client, &s.namespace, |data| {
        let mut tokens: Vec<TokenRecord> = match data.get(&key) {
            Some(v) if !v.0.is_empty() => serde_json::from_slice(&v.0)
                .map_err(|e| Error::Internal(format!("Secret argocd-secret, key {key}: {e}")))?,
            _ => Vec::new(),
        };
        let before = tokens.len();
        tokens.retain(|t| t.id != id);
        if tokens.len() == before {
            return Ok((false, ()));
        }
        let text = serde_json::to_vec(&tokens)
            .map_err(|e| Error::Internal(format!("encoding tokens: {e}")))?;
        data.insert(key.clone(), ByteString(text));
        Ok((true, ()))
    })
    .await?;
    Ok(Json(json!({})))
}

/// `GET /api/v1/account/can-i/{resource}/{action}/{subresource}`: `{"value": "yes"|"no"}`.
pub(crate) async fn can_i(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path((resource, action, object)): Path<(String, String, String)>,
) -> Result<Json<Value>> {
    let allowed = Authz::new(&s, &caller)
        .await?
        .allows(&resource, &action, &object)
        .await?;
    Ok(Json(json!({"value": if allowed { "yes" } else { "no" }})))
}

/// Argo's `UpdatePasswordRequest`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpdatePassword {
    #[serde(default)]
    current_password: String,
    #[serde(default)]
    new_password: String,
    #[serde(default)]
    name: String,
}

/// Argo's default `passwordPattern` of `argocd-cm`.
const DEFAULT_PASSWORD_PATTERN: &str = "^.{8,32}$";

/// `PUT /api/v1/account/password`: as Argo's `UpdatePassword`, the caller proves who they are
/// with their own current password; changing another account's password also needs
/// `accounts, update, <name>`. The new bcrypt hash and its change time go into
/// `argocd-secret` (`admin.password`/`admin.passwordMtime`, or
/// `accounts.<name>.password`/`.passwordMtime`), so sessions issued before stop working.
pub(crate) async fn update_password(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Json(body): Json<UpdatePassword>,
) -> Result<Json<Value>> {
    let Some(own) = caller.account().map(str::to_string) else {
        return Err(Error::InvalidArgument(format!(
            "password can only be changed for local users, not user \"{}\"",
            caller.subject
        )));
    };
    let target = if body.name.is_empty() {
        own.clone()
    } else {
        body.name.clone()
    };
    if target != own {
        Authz::new(&s, &caller)
            .await?
            .check("accounts", "update", &target)
            .await?;
    }
    // Argo's VerifyUsernamePassword: throttled and timed like a login.
    if s.login(&own, &body.current_password).await.is_err() {
        return Err(Error::InvalidArgument(
            "current password does not match".into(),
        ));
    }
    let cm = store::config_map(&s.client, &s.namespace, crate::state::SETTINGS_CONFIGMAP).await?;
    let pattern = cm
        .get("passwordPattern")
        .filter(|p| !p.is_empty())
        .map_or(DEFAULT_PASSWORD_PATTERN, String::as_str);
    let re = regex::Regex::new(pattern).map_err(|e| {
        Error::Internal(format!(
            "ConfigMap {}/argocd-cm, key passwordPattern: {e}",
            s.namespace
        ))
    })?;
    if !re.is_match(&body.new_password) || body.new_password.len() > 72 {
        return Err(Error::InvalidArgument(format!(
            "new password does not match the following expression: {pattern}"
        )));
    }
    account(&s, &target).await?;
    let hash = crate::auth::hash_password(body.new_password.clone()).await?;
    let now = jiff::Timestamp::now().to_string();
    let (hash_key, mtime_key) = if target == "admin" {
        (
            "admin.password".to_string(),
            "admin.passwordMtime".to_string(),
        )
    } else {
        (
            format!("accounts.{target}.password"),
            format!("accounts.{target}.passwordMtime"),
        )
    };
    store::update_secret(&s.client, &s.namespace, |data| {
        data.insert(hash_key.clone(), ByteString(hash.clone().into_bytes()));
        data.insert(mtime_key.clone(), ByteString(now.clone().into_bytes()));
        Ok((true, ()))
    })
    .await?;
    tracing::info!(account = %target, by = %own, "password updated");
    Ok(Json(json!({})))
}
