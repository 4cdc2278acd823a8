//! `POST /api/v1/clusters` (`upsert`) and `PUT /api/v1/clusters/{server}` (`updatedFields`):
//! Argo's `ClusterService` Create and Update. The credentials are tried (the server version
//! read) before anything is stored, as Argo does; the answer is the sanitized cluster.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use plumb_app::ClusterSecret;
use plumb_app::clusters::record;
use serde_json::Value;

use super::clusters::{permitted, rbac_object};
use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::rbac::{Authz, PERMISSION_DENIED};
use crate::state::AppState;

/// How long the credentials' test may take.
const TRY_TIMEOUT: Duration = Duration::from_secs(15);

/// Argo's `ClusterCreateRequest` / `ClusterUpdateRequest` bodies carry the cluster under
/// `cluster` (grpc-gateway `body: "cluster"` sends it bare): both are accepted.
fn cluster_of_body(body: Value) -> Value {
    match body.get("cluster") {
        Some(c) if c.is_object() && body.get("server").is_none() => c.clone(),
        _ => body,
    }
}

/// The Secret a cluster becomes, and a connection test with its credentials.
async fn try_cluster(cluster: &Value, base: Secret) -> Result<Secret> {
    let secret = record::to_secret(cluster, base).map_err(|e| Error::InvalidArgument(e.0))?;
    let parsed = ClusterSecret::from_secret(&secret)
        .ok_or_else(|| Error::InvalidArgument("cluster server is required".into()))?;
    let probe = async {
        let client = parsed.client().await.map_err(|e| {
            Error::InvalidArgument(format!(
                "error getting REST config: {}",
                plumb_app::chain(&e)
            ))
        })?;
        client.apiserver_version().await.map_err(|e| {
            Error::InvalidArgument(format!(
                "error getting server version: {}",
                plumb_app::chain(&e)
            ))
        })
    };
    match tokio::time::timeout(TRY_TIMEOUT, probe).await {
        Ok(r) => r.map(|_| secret),
        Err(_) => Err(Error::InvalidArgument(format!(
            "error getting server version: the cluster did not answer within {}s",
            TRY_TIMEOUT.as_secs()
        ))),
    }
}

fn secrets(s: &AppState) -> Api<Secret> {
    Api::namespaced(s.client.clone(), &s.namespace)
}

async fn existing_by(s: &AppState, pick: impl Fn(&Value) -> bool) -> Result<Option<Secret>> {
    let list = secrets(s)
        .list(&kube::api::ListParams::default().labels(plumb_app::CLUSTER_SECRET_LABEL))
        .await
        .map_err(|e| {
            Error::kube(
                format!("listing cluster Secrets in namespace {}", s.namespace),
                e,
            )
        })?;
    Ok(list
        .items
        .into_iter()
        .find(|sec| pick(&record::sanitized(sec))))
}

/// `POST /api/v1/clusters`.
pub(crate) async fn create(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
    Json(body): Json<Value>,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let cluster = cluster_of_body(body);
    let mut authz = Authz::new(&s, &caller).await?;
    if !authz
        .allows("clusters", "create", &rbac_object(&cluster))
        .await?
    {
        return Err(Error::PermissionDenied(format!(
            "permission denied while creating cluster: {PERMISSION_DENIED}"
        )));
    }
    let server = cluster["server"]
        .as_str()
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_string();
    let name = record::secret_name(&server).map_err(|e| Error::InvalidArgument(e.0))?;
    let mut fresh = Secret::default();
    fresh.metadata.name = Some(name.clone());
    let secret = try_cluster(&cluster, fresh).await?;
    let existing = existing_by(&s, |v| v["server"].as_str() == Some(server.as_str())).await?;
    let stored = match existing {
        None => secrets(&s)
            .create(&PostParams::default(), &secret)
            .await
            .map_err(|e| {
                Error::kube(format!("creating cluster Secret {}/{name}", s.namespace), e)
            })?,
        Some(old) if record::unsanitized(&old) == record::unsanitized(&secret) => old,
        Some(old) if q.get("upsert") == Some("true") => {
            authz
                .check("clusters", "update", &rbac_object(&record::sanitized(&old)))
                .await?;
            replace(&s, old, &cluster).await?
        }
        Some(_) => {
            return Err(Error::InvalidArgument(
                "existing cluster spec is different; use upsert flag to force update".into(),
            ));
        }
    };
    Ok(Json(record::sanitized(&stored)))
}

async fn replace(s: &AppState, old: Secret, cluster: &Value) -> Result<Secret> {
    let name = old.metadata.name.clone().unwrap_or_default();
    let secret = try_cluster(cluster, old).await?;
    secrets(s)
        .replace(&name, &PostParams::default(), &secret)
        .await
        .map_err(|e| Error::kube(format!("updating cluster Secret {}/{name}", s.namespace), e))
}

/// `PUT /api/v1/clusters/{server}` (`updatedFields` repeated: only those fields change).
pub(crate) async fn update(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    Json(body): Json<Value>,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let cluster = cluster_of_body(body);
    let (old, current) = permitted(&s, &caller, &id, raw.as_deref(), "update").await?;
    let Some(old) = old else {
        return Err(Error::InvalidArgument(
            "the in-cluster cluster has no Secret; create one for https://kubernetes.default.svc to change its fields"
                .into(),
        ));
    };
    let mut authz = Authz::new(&s, &caller).await?;
    let fields = q.all("updatedFields");
    let mut merged = record::merge_update(&record::unsanitized(&old), &cluster, &fields);
    merged["server"] = current["server"].clone();
    if fields.is_empty() || fields.iter().any(|f| f == "project") {
        let target = serde_json::json!({"server": current["server"], "project": merged["project"]});
        if !authz
            .allows("clusters", "update", &rbac_object(&target))
            .await?
        {
            return Err(Error::PermissionDenied(PERMISSION_DENIED.into()));
        }
    }
    let stored = replace(&s, old, &merged).await?;
    Ok(Json(record::sanitized(&stored)))
}
