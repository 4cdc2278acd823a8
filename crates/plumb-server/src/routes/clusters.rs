//! Argo's `ClusterService`: `GET/POST /api/v1/clusters`, `GET/PUT/DELETE
//! /api/v1/clusters/{server}` (the server URL percent-encoded, or its name with `id.type=name`),
//! `POST .../invalidate-cache`, `POST .../rotate-auth`. Clusters are the Argo CD cluster Secrets of the control
//! namespace (plus this server's own, `in-cluster`), answered sanitized as Argo answers them
//! (`Cluster.Sanitized`: never a token, password, key or exec plugin), with the connection
//! state measured now. RBAC: `clusters, <action>, [<project>/]<server>`.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams, PostParams};
use plumb_app::clusters::{record, rotate};
use plumb_app::{IN_CLUSTER_NAME, IN_CLUSTER_SERVER};
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::{self, Query};
use crate::rbac::{Authz, PERMISSION_DENIED};
use crate::state::AppState;

/// How long a connection check may take per cluster.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Argo's `CreateClusterRBACObject`.
pub(crate) fn rbac_object(cluster: &Value) -> String {
    let server = cluster["server"].as_str().unwrap_or_default();
    match cluster["project"].as_str().filter(|p| !p.is_empty()) {
        Some(p) => format!("{p}/{server}"),
        None => server.to_string(),
    }
}

fn secrets(s: &AppState) -> Api<Secret> {
    Api::namespaced(s.client.clone(), &s.namespace)
}

/// Every cluster Secret with what its sanitized `Cluster` says, by server.
async fn cluster_secrets(s: &AppState) -> Result<Vec<(Secret, Value)>> {
    let list = secrets(s)
        .list(&ListParams::default().labels(plumb_app::CLUSTER_SECRET_LABEL))
        .await
        .map_err(|e| {
            Error::kube(
                format!("listing cluster Secrets in namespace {}", s.namespace),
                e,
            )
        })?;
    let mut out: Vec<(Secret, Value)> = list
        .items
        .into_iter()
        .map(|sec| {
            let view = record::sanitized(&sec);
            (sec, view)
        })
        .filter(|(_, v)| v["server"].as_str().is_some_and(|x| !x.is_empty()))
        .collect();
    out.sort_by(|a, b| a.1["server"].as_str().cmp(&b.1["server"].as_str()));
    Ok(out)
}

fn in_cluster() -> Value {
    json!({"server": IN_CLUSTER_SERVER, "name": IN_CLUSTER_NAME,
           "config": {"tlsClientConfig": {"insecure": false}}})
}

/// The cluster a query names: by server URL, or by name with `id.type=name`.
struct Id {
    server: Option<String>,
    name: Option<String>,
}

impl Id {
    fn of(id: &str, q: &Query) -> Self {
        if q.get("id.type") == Some("name") {
            Self {
                server: None,
                name: Some(id.to_string()),
            }
        } else {
            Self {
                server: Some(id.trim_end_matches('/').to_string()),
                name: None,
            }
        }
    }

    fn matches(&self, c: &Value) -> bool {
        match (&self.server, &self.name) {
            (Some(s), _) => c["server"].as_str() == Some(s.as_str()),
            (None, Some(n)) => c["name"].as_str() == Some(n.as_str()),
            (None, None) => false,
        }
    }
}

/// The in-cluster entry or a Secret (`None` for in-cluster) the id names; 403 when none does
/// (Argo's `getClusterWith403IfNotExist`: cluster URLs cannot be probed).
async fn find(s: &AppState, id: &Id) -> Result<(Option<Secret>, Value)> {
    let found = cluster_secrets(s)
        .await?
        .into_iter()
        .find(|(_, v)| id.matches(v));
    match found {
        Some((sec, v)) => Ok((Some(sec), v)),
        None if id.matches(&in_cluster()) => Ok((None, in_cluster())),
        None => Err(Error::PermissionDenied(PERMISSION_DENIED.into())),
    }
}

/// `connectionState`, `serverVersion` and `info` measured now (Argo reads them from the
/// controller's cache; Plumb's server asks the cluster, bounded in time).
async fn with_connection(s: &AppState, mut view: Value) -> Value {
    let destination = plumb_model::application::ApplicationDestination {
        server: view["server"].as_str().map(str::to_string),
        ..Default::default()
    };
    let probe = async {
        let cluster = s.cluster_of(&destination).await?;
        let version = cluster
            .client()
            .apiserver_version()
            .await
            .map_err(|e| Error::kube("reading the cluster's version".to_string(), e))?;
        let api_versions = cluster.discovery.catalog().preferred_api_versions();
        Ok::<_, Error>((
            format!("{}.{}", version.major, version.minor.trim_end_matches('+')),
            api_versions,
        ))
    };
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let (state, version, api_versions) = match tokio::time::timeout(CONNECT_TIMEOUT, probe).await {
        Ok(Ok((v, apis))) => (
            json!({"status": "Successful", "attemptedAt": now}),
            Some(v),
            apis,
        ),
        Ok(Err(e)) => (
            json!({"status": "Failed", "message": e.to_string(), "attemptedAt": now}),
            None,
            Vec::new(),
        ),
        Err(_) => (
            json!({"status": "Failed", "message": format!("the cluster did not answer within {}s", CONNECT_TIMEOUT.as_secs()), "attemptedAt": now}),
            None,
            Vec::new(),
        ),
    };
    view["connectionState"] = state.clone();
    let mut info = json!({"connectionState": state, "apiVersions": api_versions});
    if let Some(v) = version {
        view["serverVersion"] = json!(v);
        info["serverVersion"] = json!(v);
    }
    view["info"] = info;
    view
}

/// `GET /api/v1/clusters` (`server`, `name`, `id.type`/`id.value` filter): the clusters the
/// caller may `get`, in-cluster first, then by server URL.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let mut authz = Authz::new(&s, &caller).await?;
    let mut all: Vec<Value> = cluster_secrets(&s)
        .await?
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    if !all
        .iter()
        .any(|c| c["server"].as_str() == Some(IN_CLUSTER_SERVER))
    {
        all.insert(0, in_cluster());
    }
    let id = q.get("id.value").map(|v| Id::of(v, &q));
    let mut items = Vec::new();
    for c in all {
        let keep = id.as_ref().is_none_or(|i| i.matches(&c))
            && q.get("server")
                .is_none_or(|v| c["server"].as_str() == Some(v))
            && q.get("name").is_none_or(|v| c["name"].as_str() == Some(v));
        if keep && authz.allows("clusters", "get", &rbac_object(&c)).await? {
            items.push(c);
        }
    }
    let items = futures::future::join_all(items.into_iter().map(|c| with_connection(&s, c))).await;
    Ok(Json(gateway::list(None, items)))
}

/// The head of every route on one cluster (Argo's `getClusterAndVerifyAccess`): the cluster
/// the path names (its server URL, or its name with `id.type=name`) and the caller's right to
/// `action` on it. A cluster that does not exist and one the caller may not see answer alike
/// (403, GHSA-3cqf-953p-h5cp): cluster URLs cannot be probed, and by name the detailed message
/// would reveal the server URL. `None` is the in-cluster entry without a Secret.
pub(crate) async fn permitted(
    s: &AppState,
    caller: &Caller,
    id: &str,
    raw: Option<&str>,
    action: &str,
) -> Result<(Option<Secret>, Value)> {
    let q = Query::parse(raw);
    let (secret, view) = find(s, &Id::of(id, &q)).await?;
    if !Authz::new(s, caller)
        .await?
        .allows("clusters", action, &rbac_object(&view))
        .await?
    {
        return Err(Error::PermissionDenied(PERMISSION_DENIED.into()));
    }
    Ok((secret, view))
}

/// `GET /api/v1/clusters/{server}`.
pub(crate) async fn get(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let (_, view) = permitted(&s, &caller, &id, raw.as_deref(), "get").await?;
    Ok(Json(with_connection(&s, view).await))
}

/// `DELETE /api/v1/clusters/{server}`: Argo's `DeleteCluster`: a Secret Argo (or Plumb)
/// created (`managed-by: argocd.argoproj.io`) is deleted; one made by hand only loses its
/// cluster label. The in-cluster entry without a Secret cannot be deleted.
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let (secret, _) = permitted(&s, &caller, &id, raw.as_deref(), "delete").await?;
    let Some(secret) = secret else {
        return Err(Error::InvalidArgument(format!(
            "cluster {IN_CLUSTER_SERVER:?} is the in-cluster cluster and has no Secret to delete"
        )));
    };
    let name = secret.metadata.name.clone().unwrap_or_default();
    plumb_app::argo_secrets::delete_or_unlabel(&secrets(&s), &secret)
        .await
        .map_err(|e| Error::kube(format!("deleting cluster Secret {}/{name}", s.namespace), e))?;
    Ok(Json(json!({})))
}

/// `POST /api/v1/clusters/{server}/invalidate-cache`: Argo's refresh annotation
/// (`argocd.argoproj.io/refresh`) set on the Secret; the controller reconnects (its live cache
/// of the cluster is rebuilt).
pub(crate) async fn invalidate_cache(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let (secret, view) = permitted(&s, &caller, &id, raw.as_deref(), "update").await?;
    let Some(mut secret) = secret else {
        return Err(Error::InvalidArgument(
            "the in-cluster cluster has no Secret; restart the controller to rebuild its cache"
                .into(),
        ));
    };
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    secret
        .metadata
        .annotations
        .get_or_insert_default()
        .insert("argocd.argoproj.io/refresh".into(), now.clone());
    let name = secret.metadata.name.clone().unwrap_or_default();
    secrets(&s)
        .replace(&name, &PostParams::default(), &secret)
        .await
        .map_err(|e| Error::kube(format!("updating cluster Secret {}/{name}", s.namespace), e))?;
    let mut view = view;
    view["refreshRequestedAt"] = json!(now);
    Ok(Json(view))
}

/// `POST /api/v1/clusters/{server}/rotate-auth`: Argo's `RotateAuth`: a new token for the
/// cluster's ServiceAccount, tried, stored, and the old one revoked ([`rotate::rotate`]).
pub(crate) async fn rotate_auth(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let (secret, view) = permitted(&s, &caller, &id, raw.as_deref(), "update").await?;
    let Some(secret) = secret else {
        return Err(Error::InvalidArgument(format!(
            "Cluster '{}' does not use bearer token authentication",
            view["server"].as_str().unwrap_or_default()
        )));
    };
    rotate::rotate(&secrets(&s), &secret, rotate::TOKEN_TIMEOUT)
        .await
        .map_err(|e| match e {
            rotate::RotateError::NotBearer(_) => Error::InvalidArgument(e.to_string()),
            other => Error::Internal(plumb_app::chain(&other)),
        })?;
    Ok(Json(json!({})))
}
