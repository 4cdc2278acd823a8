//! `GET /api/v1/applications/{name}/events`: Kubernetes Events of the Application (in its own
//! namespace, `appNamespace`), or of one of its resources (`resourceNamespace`, `resourceName`,
//! `resourceUID`), as Argo's `ListResourceEvents`.

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use serde_json::Value;

use crate::auth::middleware::Authenticated;
use crate::error::{Error, Result};
use crate::gateway::{self, Query};
use crate::state::{AppState, to_value};

/// `GET /api/v1/applications/{name}/events`.
pub(crate) async fn list(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>> {
    let q = Query::parse(raw.as_deref());
    let key = s.app_key(&name, q.get("appNamespace"))?;
    s.authorize_app(&caller, &key, "get").await?;
    let (obj, app) = s.app(&key).await?;
    let (namespace, fields) = match (q.get("resourceName"), q.get("resourceNamespace")) {
        (Some(res_name), res_ns) => {
            // A resource of this Application only: one it lists in its status.
            let ns = res_ns.unwrap_or_default();
            let listed = app
                .status
                .as_ref()
                .and_then(|st| st.resources.as_ref())
                .is_some_and(|rs| {
                    rs.iter().any(|r| {
                        r.name.as_deref() == Some(res_name)
                            && r.namespace.as_deref().unwrap_or_default() == ns
                    })
                });
            if !listed {
                return Err(Error::NotFound(format!(
                    "{ns}/{res_name} is not a resource of application '{name}'"
                )));
            }
            let mut f = format!("involvedObject.name={res_name},involvedObject.namespace={ns}");
            if let Some(uid) = q.get("resourceUID") {
                f.push_str(&format!(",involvedObject.uid={uid}"));
            }
            (ns.to_string(), f)
        }
        (None, _) => {
            // The Application's own Events are in its namespace.
            let uid = obj.metadata.uid.clone().unwrap_or_default();
            let app_ns = app.namespace().to_string();
            let f = format!(
                "involvedObject.name={name},involvedObject.namespace={app_ns},involvedObject.uid={uid}"
            );
            (app_ns, f)
        }
    };
    let api: Api<Event> = if namespace.is_empty() {
        Api::all(s.client.clone())
    } else {
        Api::namespaced(s.client.clone(), &namespace)
    };
    let list = api
        .list(&ListParams::default().fields(&fields))
        .await
        .map_err(|e| {
            Error::kube(
                format!("listing Events of Application {}/{name}", s.namespace),
                e,
            )
        })?;
    let mut items = list
        .items
        .iter()
        .map(to_value)
        .collect::<Result<Vec<_>>>()?;
    // Oldest first, as `kubectl get events --sort-by` and Argo's UI show them.
    items.sort_by(|a, b| event_time(a).cmp(&event_time(b)));
    Ok(Json(gateway::list(list.metadata.resource_version, items)))
}

fn event_time(e: &Value) -> (&str, &str) {
    let t = [
        "/lastTimestamp",
        "/eventTime",
        "/metadata/creationTimestamp",
    ]
    .iter()
    .find_map(|p| e.pointer(p).and_then(Value::as_str))
    .unwrap_or_default();
    (
        t,
        e.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default(),
    )
}
