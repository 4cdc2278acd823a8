//! `DELETE /api/v1/projects/{name}`: Argo's `ProjectService.Delete`. `default` is never deleted,
//! and a project Applications of the control namespace still use is refused with Argo's
//! message, so no Application is left pointing at a project that is gone.

use axum::Json;
use axum::extract::{Path, State};
use kube::api::{DeleteParams, ListParams};
use serde_json::Value;

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::rbac::Authz;
use crate::state::{AppState, check_name, not_found_or};

/// `DELETE /api/v1/projects/{name}` (`projects, delete, <name>`): `{}`.
pub(crate) async fn delete(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
) -> Result<Json<Value>> {
    if name == "default" {
        return Err(Error::InvalidArgument(format!(
            "name '{name}' is reserved and cannot be deleted"
        )));
    }
    check_name("AppProject", &name)?;
    Authz::new(&s, &caller)
        .await?
        .check("projects", "delete", &name)
        .await?;
    s.projects().get(&name).await.map_err(|e| {
        not_found_or(
            e,
            &format!("appprojects.argoproj.io \"{name}\" not found"),
            || format!("reading AppProject {}/{name}", s.namespace),
        )
    })?;
    let apps = s.apps().list(&ListParams::default()).await.map_err(|e| {
        Error::kube(
            format!("listing Applications in namespace {}", s.namespace),
            e,
        )
    })?;
    let using = apps
        .items
        .iter()
        .filter(|a| {
            let project = a.data.pointer("/spec/project").and_then(Value::as_str);
            project.filter(|p| !p.is_empty()).unwrap_or("default") == name
        })
        .count();
    if using > 0 {
        return Err(Error::InvalidArgument(format!(
            "project is referenced by {using} applications"
        )));
    }
    s.projects()
        .delete(&name, &DeleteParams::default())
        .await
        .map_err(|e| {
            not_found_or(
                e,
                &format!("appprojects.argoproj.io \"{name}\" not found"),
                || format!("deleting AppProject {}/{name}", s.namespace),
            )
        })?;
    tracing::info!(project = %name, user = %caller.subject, "deleted project");
    Ok(Json(serde_json::json!({})))
}
