//! `/api/v1/certificates`: Argo's `CertificateService` (list, create with `upsert`, delete by
//! selector) over `argocd-ssh-known-hosts-cm` and `argocd-tls-certs-cm`. RBAC resource
//! `certificates`, empty object, as Argo checks.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use plumb_app::repo_admin::{CertAdmin, Selector};
use serde_json::Value;

use super::repositories::body_json;
use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::{self, Query};
use crate::rbac::Authz;
use crate::state::AppState;

fn certs(s: &AppState) -> CertAdmin {
    CertAdmin::new(s.client.clone(), &s.namespace)
}

/// Argo's `RepositoryCertificateQuery` from the query string.
fn selector(raw: Option<&str>) -> Selector {
    let q = Query::parse(raw);
    let get = |k: &str| q.get(k).unwrap_or_default().to_owned();
    Selector {
        host_pattern: get("hostNamePattern"),
        cert_type: get("certType"),
        cert_sub_type: get("certSubType"),
    }
}

/// `GET /api/v1/certificates?hostNamePattern=&certType=&certSubType=`.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    Authz::new(&s, &caller)
        .await?
        .check("certificates", "get", "")
        .await?;
    let items = certs(&s).list(&selector(raw.as_deref())).await?;
    Ok(Json(gateway::list(None, items)))
}

/// `POST /api/v1/certificates?upsert=`: body Argo's `RepositoryCertificateList`.
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Result<Json<Value>> {
    Authz::new(&s, &caller)
        .await?
        .check("certificates", "create", "")
        .await?;
    let upsert = Query::parse(raw.as_deref())
        .bool("upsert", false)
        .map_err(Error::InvalidArgument)?;
    let body = body_json(&body)?;
    let items = match body.get("items") {
        Some(Value::Array(items)) => items.clone(),
        None | Some(Value::Null) => Vec::new(),
        Some(_) => {
            return Err(Error::InvalidArgument(
                "certificates.items: expected a list".into(),
            ));
        }
    };
    let created = certs(&s).create(&items, upsert).await?;
    Ok(Json(gateway::list(None, created)))
}

/// `DELETE /api/v1/certificates?hostNamePattern=&certType=&certSubType=`.
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    Authz::new(&s, &caller)
        .await?
        .check("certificates", "delete", "")
        .await?;
    let removed = certs(&s).remove(&selector(raw.as_deref())).await?;
    Ok(Json(gateway::list(None, removed)))
}
