//! `GET /api/v1/stream/applications`: Application watch events as Argo CD's gateway streams
//! them, one `{"result": {"type": "ADDED|MODIFIED|DELETED", "application": {...}}}` per line,
//! or as server-sent events (`data: ...`) when the client accepts `text/event-stream` (what
//! Argo's UI uses). Current Applications come first as ADDED. Filters: `name`, `projects`,
//! `selector`. The stream ends when the server shuts down.

use std::collections::BTreeSet;
use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use kube::api::DynamicObject;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::gateway::Query;
use crate::rbac::{Authz, app_object};
use crate::state::{AppState, to_value};

/// What one watch event becomes on the wire.
fn frame(kind: &str, obj: &DynamicObject, projects: &[String], sse: bool) -> Option<String> {
    let app = to_value(obj).ok()?;
    let project = app
        .pointer("/spec/project")
        .and_then(Value::as_str)
        .unwrap_or("default");
    if !projects.is_empty() && !projects.iter().any(|p| p == project) {
        return None;
    }
    let line = json!({"result": {"type": kind, "application": app}}).to_string();
    Some(if sse {
        format!("data: {line}\n\n")
    } else {
        format!("{line}\n")
    })
}

/// `GET /api/v1/stream/applications`.
pub(crate) async fn applications(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Response {
    let authz = match Authz::new(&s, &caller).await {
        Ok(a) => std::sync::Arc::new(tokio::sync::Mutex::new(a)),
        Err(e) => return e.into_response(),
    };
    let q = Query::parse(raw.as_deref());
    let sse = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    let mut config = watcher::Config::default();
    if let Some(sel) = q.get("selector") {
        config = config.labels(sel);
    }
    if let Some(name) = q.get("name") {
        config = config.fields(&format!("metadata.name={name}"));
    }
    let mut projects = q.all("projects");
    projects.extend(q.all("project"));
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut stop = s.shutdown.clone();
    let stopped = async move {
        let _ = stop.wait_for(|v| *v).await;
    };
    let events = watcher::watcher(s.apps(), config)
        .default_backoff()
        // Only Applications the caller may get, as Argo's Watch.
        .filter_map(move |event| {
            let authz = authz.clone();
            async move {
                let obj = match &event {
                    Ok(Event::InitApply(obj)) | Ok(Event::Apply(obj)) | Ok(Event::Delete(obj)) => {
                        obj
                    }
                    _ => return Some(event),
                };
                let object = app_object(&to_value(obj).ok()?);
                let allowed = authz
                    .lock()
                    .await
                    .allows("applications", "get", &object)
                    .await
                    .unwrap_or(false);
                allowed.then_some(event)
            }
        })
        .map(move |event| {
            let frames: Vec<String> = match event {
                Ok(Event::InitApply(obj)) | Ok(Event::Apply(obj)) => {
                    let name = obj.metadata.name.clone().unwrap_or_default();
                    let kind = if seen.insert(name) {
                        "ADDED"
                    } else {
                        "MODIFIED"
                    };
                    frame(kind, &obj, &projects, sse).into_iter().collect()
                }
                Ok(Event::Delete(obj)) => {
                    seen.remove(obj.metadata.name.as_deref().unwrap_or_default());
                    frame("DELETED", &obj, &projects, sse).into_iter().collect()
                }
                Ok(Event::Init) | Ok(Event::InitDone) => Vec::new(),
                Err(e) => {
                    tracing::debug!("watching Applications for a stream: {e}");
                    Vec::new()
                }
            };
            futures::stream::iter(frames.into_iter().map(Ok::<_, Infallible>))
        })
        .flatten()
        .take_until(stopped);
    let content_type = if sse {
        "text/event-stream"
    } else {
        "application/json"
    };
    let mut response = Body::from_stream(events).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
