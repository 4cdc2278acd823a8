//! `GET /api/v1/projects[/{name}]`: AppProjects of the control namespace (Argo's
//! `ProjectService` List and Get).

use axum::Json;
use axum::extract::{Path, State};
use kube::api::ListParams;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::gateway;
use crate::state::{AppState, check_name, not_found_or, to_value};

/// `GET /api/v1/projects`: `{"metadata", "items"}`, by name.
pub(crate) async fn list(State(s): State<AppState>) -> Result<Json<Value>> {
    let list = s
        .projects()
        .list(&ListParams::default())
        .await
        .map_err(|e| {
            Error::kube(
                format!("listing AppProjects in namespace {}", s.namespace),
                e,
            )
        })?;
    let mut items = list
        .items
        .iter()
        .map(to_value)
        .collect::<Result<Vec<_>>>()?;
    items.sort_by_key(|p| {
        p.pointer("/metadata/name")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Ok(Json(gateway::list(list.metadata.resource_version, items)))
}

/// `GET /api/v1/projects/{name}`.
pub(crate) async fn get(
    State(s): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Value>> {
    check_name("AppProject", &name)?;
    let obj = s.projects().get(&name).await.map_err(|e| {
        not_found_or(
            e,
            &format!("appprojects.argoproj.io \"{name}\" not found"),
            || format!("reading AppProject {}/{name}", s.namespace),
        )
    })?;
    Ok(Json(to_value(&obj)?))
}
