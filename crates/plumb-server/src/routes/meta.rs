//! `GET /api/version` and `GET /api/v1/settings`: what the server is and how it is configured,
//! in Argo's `VersionMessage` and `Settings` shapes (the fields Plumb has).

use axum::Json;
use axum::extract::State;
use plumb_model::annotations::DEFAULT_INSTANCE_LABEL;
use plumb_model::settings::{INSTANCE_LABEL_KEY, TRACKING_METHOD};
use serde_json::{Map, Value, json};

use crate::error::Result;
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
