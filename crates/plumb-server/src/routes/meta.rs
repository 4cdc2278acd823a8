//! `GET /api/version`, `GET /api/v1/settings` and `GET /api/v1/clusters/{server}`: what the
//! server is, how it is configured and what its cluster serves, in Argo's `VersionMessage`,
//! `Settings` and `Cluster` shapes (the fields Plumb has). The CLI reads the last two for a
//! local render through the server (`plumb app sync/diff/manifests --local`), as Argo's does.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use plumb_model::annotations::DEFAULT_INSTANCE_LABEL;
use plumb_model::settings::{INSTANCE_LABEL_KEY, TRACKING_METHOD};
use serde_json::{Map, Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::Query;
use crate::state::AppState;

/// Go's name of the machine architecture, as Argo's `Platform` prints it.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

/// `GET /api/version`.
pub(crate) async fn version() -> Json<Value> {
    Json(json!({
        "Version": format!("v{}+plumb", env!("CARGO_PKG_VERSION")),
        "Platform": format!("{}/{}", std::env::consts::OS, go_arch()),
        "Compiler": "rustc",
    }))
}

/// `GET /api/v1/settings`.
pub(crate) async fn settings(State(s): State<AppState>) -> Result<Json<Value>> {
    let settings = s.settings().await?;
    let mut out = Map::new();
    if let Some(url) = settings.get("url").filter(|u| !u.is_empty()) {
        out.insert("url".into(), json!(url));
    }
    out.insert(
        "appLabelKey".into(),
        json!(
            settings
                .get(INSTANCE_LABEL_KEY)
                .unwrap_or(DEFAULT_INSTANCE_LABEL)
        ),
    );
    out.insert(
        "trackingMethod".into(),
        json!(settings.get(TRACKING_METHOD).unwrap_or("annotation")),
    );
    out.insert("controllerNamespace".into(), json!(s.namespace));
    // Argo's `KustomizeOptions`: the build options argocd-cm sets (`kustomize.buildOptions`).
    let build_options = settings
        .get("kustomize.buildOptions")
        .filter(|o| !o.trim().is_empty());
    out.insert(
        "kustomizeOptions".into(),
        match build_options {
            Some(o) => json!({"buildOptions": o}),
            None => json!({}),
        },
    );
    // Plumb's: the brake on mass deletion, which `plumb app sync --prune` asks about through
    // the server as in core mode.
    let mut brake = Map::new();
    for (key, field) in [
        (plumb_model::settings::PRUNE_MAX_DELETIONS, "maxDeletions"),
        (plumb_model::settings::PRUNE_MAX_FRACTION, "maxFraction"),
    ] {
        if let Some(v) = settings.get(key) {
            brake.insert(field.into(), json!(v));
        }
    }
    if !brake.is_empty() {
        out.insert("pruneBrake".into(), Value::Object(brake));
    }
    for (key, field) in [
        ("statusbadge.enabled", "statusBadgeEnabled"),
        ("exec.enabled", "execEnabled"),
    ] {
        if settings.get(key) == Some("true") {
            out.insert(field.into(), json!(true));
        }
    }
    Ok(Json(Value::Object(out)))
}

/// `GET /api/v1/clusters/{server}` (Argo's `ClusterService.Get`; the server URL percent-encoded,
/// or its name with `id.type=name`): the server's own cluster, the one it compares, with
/// `serverVersion` (`MAJOR.MINOR`) and `info.apiVersions` (the preferred group/versions of its
/// discovery, what the controller renders with). RBAC: `clusters, get, <server URL>`. Other
/// registered clusters are not served (403, as Argo answers for a cluster it does not have):
/// this server compares its own cluster only.
pub(crate) async fn cluster(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let cluster = s.cluster().await?;
    let by_name = q.get("id.type") == Some("name");
    let known = if by_name {
        id == cluster.name
    } else {
        cluster.is_destination(Some(id.trim_end_matches('/')), None)
    };
    // As Argo's `getClusterWith403IfNotExist`: an unknown cluster is "permission denied", so
    // cluster URLs cannot be probed.
    if !known {
        return Err(Error::PermissionDenied("permission denied".into()));
    }
    crate::rbac::Authz::new(&s, &caller)
        .await?
        .check("clusters", "get", &cluster.server)
        .await?;
    let version = s
        .client
        .apiserver_version()
        .await
        .map_err(|e| Error::kube("reading the cluster's version".to_string(), e))?;
    let server_version = format!("{}.{}", version.major, version.minor.trim_end_matches('+'));
    let api_versions = cluster.discovery.catalog().preferred_api_versions();
    let state = json!({"status": "Successful"});
    Ok(Json(json!({
        "server": cluster.server,
        "name": cluster.name,
        "serverVersion": server_version,
        "connectionState": state,
        "info": {
            "connectionState": state,
            "serverVersion": server_version,
            "apiVersions": api_versions,
        },
    })))
}

/// `GET /readyz`: ready when the Kubernetes API answers a list of the control namespace's
/// Applications within 5 s (the server keeps no caches of its own, so that is what it needs to
/// answer); 503 naming the failure otherwise.
pub(crate) async fn ready(State(s): State<AppState>) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let apps = s.apps();
    let params = kube::api::ListParams::default().limit(1);
    match tokio::time::timeout(std::time::Duration::from_secs(5), apps.list(&params)).await {
        Ok(Ok(_)) => (StatusCode::OK, "ok\n".to_string()).into_response(),
        Ok(Err(e)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: listing Applications in {}: {e}\n", s.namespace),
        )
            .into_response(),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: the Kubernetes API did not answer within 5 s\n".to_string(),
        )
            .into_response(),
    }
}
