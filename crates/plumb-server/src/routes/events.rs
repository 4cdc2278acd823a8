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
use crate::routes::resources::app_tree;
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
    let (client, namespace, fields) = if q.get("resourceName").is_none()
        && q.get("resourceNamespace").is_none()
        && q.get("resourceUID").is_none()
    {
        // The Application's own Events are in its namespace, on the control plane.
        let uid = obj.metadata.uid.clone().unwrap_or_default();
        let app_ns = app.namespace().to_string();
        let f = involving(&name, &app_ns, &uid);
        (s.client.clone(), app_ns, f)
    } else {
        resource_events_query(&s, &key, &app, &q).await?
    };
    let what = format!("Application {}/{name}", s.namespace);
    Ok(Json(list_events(client, &namespace, &fields, &what).await?))
}

/// The field selector of the Events about one object (Argo's `involvedObject` triple).
pub(crate) fn involving(name: &str, namespace: &str, uid: &str) -> String {
    format!(
        "involvedObject.name={name},involvedObject.namespace={namespace},involvedObject.uid={uid}"
    )
}

/// The Events of `namespace` (all namespaces when empty) matching `fields`, oldest first, as
/// Argo's `EventList`; `what` names the object in errors.
pub(crate) async fn list_events(
    client: kube::Client,
    namespace: &str,
    fields: &str,
    what: &str,
) -> Result<Value> {
    let api: Api<Event> = if namespace.is_empty() {
        Api::all(client)
    } else {
        Api::namespaced(client, namespace)
    };
    let list = api
        .list(&ListParams::default().fields(fields))
        .await
        .map_err(|e| Error::kube(format!("listing Events of {what}"), e))?;
    let mut items = list
        .items
        .iter()
        .map(to_value)
        .collect::<Result<Vec<_>>>()?;
    // Oldest first, as `kubectl get events --sort-by` and Argo's UI show them.
    items.sort_by(|a, b| event_time(a).cmp(&event_time(b)));
    Ok(gateway::list(list.metadata.resource_version, items))
}

/// Where the Events of one object of the Application live, as Argo's `ListResourceEvents` finds
/// them: the object must be a node of the Application's resource tree (managed, or a descendant
/// such as a Pod), matched by name, namespace and UID, so neither an object the project forbids
/// nor an object outside the Application is reachable; the Events are read from the
/// destination cluster with its credentials, by the node's UID.
async fn resource_events_query(
    s: &AppState,
    key: &str,
    app: &plumb_model::application::Application,
    q: &Query,
) -> Result<(kube::Client, String, String)> {
    let res_name = q.get("resourceName").unwrap_or_default();
    let res_ns = q.get("resourceNamespace").unwrap_or_default();
    let res_uid = q.get("resourceUID").filter(|u| !u.is_empty());
    let tree = app_tree(s, key).await?;
    let node = tree
        .get("nodes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|n| {
            let field = |f: &str| n.get(f).and_then(Value::as_str).unwrap_or_default();
            field("name") == res_name
                && field("namespace") == res_ns
                && res_uid.is_none_or(|u| field("uid") == u)
        });
    let Some(node) = node else {
        return Err(Error::InvalidArgument(format!(
            "{res_name} not found as part of application {}",
            app.name()
        )));
    };
    let uid = node.get("uid").and_then(Value::as_str).unwrap_or_default();
    let cluster = s.cluster_of(&app.spec.destination).await?;
    let f = involving(res_name, res_ns, uid);
    Ok((cluster.client().clone(), res_ns.to_string(), f))
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
