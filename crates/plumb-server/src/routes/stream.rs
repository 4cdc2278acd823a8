//! `GET /api/v1/stream/applications`: Application watch events as Argo CD's gateway streams
//! them, one `{"result": {"type": "ADDED|MODIFIED|DELETED", "application": {...}}}` per line,
//! or as server-sent events (`data: ...`) when the client accepts `text/event-stream` (what
//! Argo's UI uses). Current Applications come first as ADDED, except those a client that
//! passes `resourceVersion` (of its list) already has. Filters: `name`, `projects`,
//! `selector`, `appNamespace` (Argo's `ApplicationQuery.appNamespace`: with `name`, the
//! Application of that namespace, as Argo's Watch; Plumb also applies it alone, to every
//! Application of the namespace); `fields` cuts each event down (see `crate::fields`). The stream ends when the
//! server shuts down.
//!
//! `GET /api/v1/stream/applicationsets`: Argo's `ApplicationSetService.Watch` through the same
//! machinery (`Kind`): `{"result": {"type": ..., "applicationSet": {...}}}`, RBAC on
//! `applicationsets, get`, `appSetNamespace` for the namespace.
//!
//! `GET /api/v1/stream/applications/{name}/resource-tree`: Argo's `WatchResourceTree`, one
//! `{"result": ApplicationTree}` per change of the tree, the current tree first.

use std::collections::BTreeSet;
use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};

use crate::auth::middleware::Authenticated;
use crate::error::Error;
use crate::fields::Fields;
use crate::gateway::Query;
use crate::rbac::{Authz, app_object};
use crate::state::{AppState, to_value};

/// What a watch stream streams: Argo's `ApplicationService.Watch` or
/// `ApplicationSetService.Watch`, one machinery with the differences of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Applications,
    ApplicationSets,
}

impl Kind {
    /// The field of `result` that holds the object (Argo's watch event messages).
    fn field(self) -> &'static str {
        match self {
            Self::Applications => "application",
            Self::ApplicationSets => "applicationSet",
        }
    }

    /// The query parameter naming one namespace (Argo's `ApplicationQuery.appNamespace`,
    /// `ApplicationSetWatchQuery.appSetNamespace`).
    fn namespace_param(self) -> &'static str {
        match self {
            Self::Applications => "appNamespace",
            Self::ApplicationSets => "appSetNamespace",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Self::Applications => "Applications",
            Self::ApplicationSets => "ApplicationSets",
        }
    }

    /// The project of an object (the template's, for a set).
    fn project(self, obj: &Value) -> &str {
        let pointer = match self {
            Self::Applications => "/spec/project",
            Self::ApplicationSets => "/spec/template/spec/project",
        };
        obj.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or("default")
    }

    /// The RBAC resource and object a caller must `get` to see `obj`.
    fn rbac(self, obj: &Value, control_namespace: &str) -> (&'static str, String) {
        match self {
            Self::Applications => ("applications", app_object(obj, control_namespace)),
            Self::ApplicationSets => {
                let name = obj
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let project = self.project(obj);
                let object = match obj.pointer("/metadata/namespace").and_then(Value::as_str) {
                    Some(ns) if !ns.is_empty() && ns != control_namespace => {
                        format!("{project}/{ns}/{name}")
                    }
                    _ => format!("{project}/{name}"),
                };
                ("applicationsets", object)
            }
        }
    }

    /// The watched API: every namespace the server serves (one cluster-wide watch, filtered,
    /// when `--application-namespaces` permits others), else the control namespace.
    fn api(self, s: &AppState) -> Api<DynamicObject> {
        let resource = match self {
            Self::Applications => plumb_app::application_resource(),
            Self::ApplicationSets => plumb_appset::api::applicationset_resource(),
        };
        if s.app_namespaces.is_empty() {
            Api::namespaced_with(s.client.clone(), &s.namespace, &resource)
        } else {
            Api::all_with(s.client.clone(), &resource)
        }
    }

    /// Whether the objects there are when the stream opens are sent as ADDED. Argo's
    /// ApplicationSet Watch sends them only to a client watching one set by `name`; one
    /// watching them all lists first and is sent the changes.
    fn initial(self, q: &Query) -> bool {
        match self {
            Self::Applications => true,
            Self::ApplicationSets => q.get("name").is_some(),
        }
    }
}

/// What one watch event becomes on the wire (cut down to Argo's `fields` when asked).
fn frame(kind: &str, obj: &DynamicObject, framer: &Framer) -> Option<String> {
    let object = to_value(obj).ok()?;
    let projects = &framer.projects;
    if !projects.is_empty() && !projects.iter().any(|p| p == framer.kind.project(&object)) {
        return None;
    }
    let mut result = serde_json::Map::new();
    result.insert("type".into(), json!(kind));
    result.insert(framer.kind.field().into(), object);
    let value = json!({"result": result});
    let line = match &framer.fields {
        Some(f) => f.apply(value),
        None => value,
    }
    .to_string();
    Some(if framer.sse {
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
    watch(s, caller, &headers, raw.as_deref(), Kind::Applications).await
}

/// `GET /api/v1/stream/applicationsets` (Argo's `ApplicationSetService.Watch`): one
/// `{"result": {"type": ..., "applicationSet": {...}}}` per change of a set the caller may get;
/// `name`, `projects`, `selector`, `appSetNamespace`, `resourceVersion` as Argo's
/// `ApplicationSetWatchQuery`.
pub(crate) async fn applicationsets(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Response {
    watch(s, caller, &headers, raw.as_deref(), Kind::ApplicationSets).await
}

/// The watch stream of `kind`: checked up front (a bad namespace, name or selector is an
/// error, not a silent stream), then open until the client goes or the server shuts down.
async fn watch(
    s: AppState,
    caller: crate::auth::Caller,
    headers: &HeaderMap,
    raw: Option<&str>,
    kind: Kind,
) -> Response {
    let authz = match Authz::new(&s, &caller).await {
        Ok(a) => tokio::sync::Mutex::new(a),
        Err(e) => return e.into_response(),
    };
    let q = Query::parse(raw);
    let namespace = match checked_query(&s, &q, kind).await {
        Ok(ns) => ns,
        Err(e) => return e.into_response(),
    };
    let sse = wants_sse(headers);
    let mut framer = Framer::new(&q, sse, kind);
    let mut stop = s.shutdown.clone();
    let stopped = async move {
        let _ = stop.wait_for(|v| *v).await;
    };
    let api = kind.api(&s);
    let scope = std::sync::Arc::new(Scope {
        authz,
        served: s.clone(),
        namespace,
        kind,
    });
    let events = watcher::watcher(api, watch_config(&q))
        .default_backoff()
        .filter_map(move |event| visible(event, scope.clone()))
        .map(move |event| {
            let frames = framer.frames(event);
            futures::stream::iter(frames.into_iter().map(Ok::<_, Infallible>))
        })
        .flatten()
        .take_until(stopped);
    streaming(events, sse)
}

/// The namespace of the query, checked as every route checks it (a namespace the server does
/// not serve is refused); for sets, also the `name` and `selector`, which Argo parses before
/// streaming (a selector the API server refuses would otherwise make a stream that never
/// sends anything).
async fn checked_query(s: &AppState, q: &Query, kind: Kind) -> Result<Option<String>, Error> {
    let ns = match q.get(kind.namespace_param()).filter(|ns| !ns.is_empty()) {
        None => None,
        Some(ns) => {
            s.app_key("stream", Some(ns))?;
            Some(ns.to_string())
        }
    };
    if kind == Kind::ApplicationSets {
        if let Some(name) = q.get("name").filter(|n| !n.is_empty()) {
            crate::state::check_name("ApplicationSet", name)?;
        }
        if let Some(sel) = q.get("selector").filter(|s| !s.is_empty()) {
            kind.api(s)
                .list(&kube::api::ListParams::default().labels(sel).limit(1))
                .await
                .map_err(|e| match e {
                    kube::Error::Api(ae) if ae.code == 400 => Error::InvalidArgument(format!(
                        "error parsing labels with selectors: {}",
                        ae.message
                    )),
                    e => Error::kube("listing ApplicationSets", e),
                })?;
        }
    }
    Ok(ns)
}

/// The watch of the query's `selector` and `name`.
fn watch_config(q: &Query) -> watcher::Config {
    let mut config = watcher::Config::default();
    if let Some(sel) = q.get("selector").filter(|s| !s.is_empty()) {
        config = config.labels(sel);
    }
    if let Some(name) = q.get("name").filter(|n| !n.is_empty()) {
        config = config.fields(&format!("metadata.name={name}"));
    }
    config
}

/// Whose objects a stream shows.
struct Scope {
    authz: tokio::sync::Mutex<Authz>,
    served: AppState,
    /// `appNamespace` / `appSetNamespace`: only objects of this namespace.
    namespace: Option<String>,
    kind: Kind,
}

type WatchEvent = Result<Event<DynamicObject>, watcher::Error>;

/// The event when its object is of a namespace the stream shows and the caller may get it
/// (as Argo's Watch); other events pass.
async fn visible(event: WatchEvent, scope: std::sync::Arc<Scope>) -> Option<WatchEvent> {
    let obj = match &event {
        Ok(Event::InitApply(obj)) | Ok(Event::Apply(obj)) | Ok(Event::Delete(obj)) => obj,
        _ => return Some(event),
    };
    let ns = obj.metadata.namespace.as_deref().unwrap_or_default();
    if !scope.served.namespace_enabled(ns)
        || scope.namespace.as_deref().is_some_and(|want| want != ns)
    {
        return None;
    }
    let (resource, object) = scope
        .kind
        .rbac(&to_value(obj).ok()?, &scope.served.namespace);
    let allowed = scope
        .authz
        .lock()
        .await
        .allows(resource, "get", &object)
        .await
        .unwrap_or(false);
    allowed.then_some(event)
}

/// Turns watch events into frames, remembering which Applications the client has.
struct Framer {
    kind: Kind,
    /// Whether the objects there are when the stream opens are sent.
    initial: bool,
    projects: Vec<String>,
    fields: Option<Fields>,
    sse: bool,
    /// The resourceVersion of the client's list, when it listed first.
    since: Option<u64>,
    seen: BTreeSet<String>,
}

impl Framer {
    fn new(q: &Query, sse: bool, kind: Kind) -> Self {
        let mut projects = q.all("projects");
        projects.extend(q.all("project"));
        // As Argo's Watch: a client that listed first passes the list's resourceVersion and is
        // not sent again, as ADDED, what it already has (unless it watches one Application by
        // name). Kubernetes resourceVersions are opaque; they are compared as numbers when both
        // are (etcd's are), and an object whose version cannot be compared is sent.
        let since: Option<u64> = q
            .get("resourceVersion")
            .filter(|_| q.get("name").is_none())
            .and_then(|rv| rv.parse().ok());
        Self {
            kind,
            initial: kind.initial(q),
            projects,
            fields: Fields::from_query(q),
            sse,
            since,
            seen: BTreeSet::new(),
        }
    }

    /// The frames of one watch event (none, or one).
    fn frames(&mut self, event: WatchEvent) -> Vec<String> {
        match event {
            Ok(Event::InitApply(obj)) if !self.initial || known_since(&obj, self.since) => {
                self.seen.insert(stream_key(&obj));
                Vec::new()
            }
            Ok(Event::InitApply(obj)) | Ok(Event::Apply(obj)) => {
                let kind = if self.seen.insert(stream_key(&obj)) {
                    "ADDED"
                } else {
                    "MODIFIED"
                };
                self.frame(kind, &obj)
            }
            Ok(Event::Delete(obj)) => {
                self.seen.remove(&stream_key(&obj));
                self.frame("DELETED", &obj)
            }
            Ok(Event::Init) | Ok(Event::InitDone) => Vec::new(),
            Err(e) => {
                tracing::debug!("watching {} for a stream: {e}", self.kind.noun());
                Vec::new()
            }
        }
    }

    fn frame(&self, kind: &str, obj: &DynamicObject) -> Vec<String> {
        frame(kind, obj, self).into_iter().collect()
    }
}

/// Whether the client asked for server-sent events.
fn wants_sse(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"))
}

/// A streaming response of frames.
fn streaming(
    events: impl futures::Stream<Item = Result<String, Infallible>> + Send + 'static,
    sse: bool,
) -> Response {
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

/// How often an open resource-tree stream reads the live objects below the Application again
/// (the server keeps no live cache to be told of their changes; the Application's own changes
/// are watched and answered at once).
const TREE_POLL: std::time::Duration = std::time::Duration::from_secs(10);

/// `GET /api/v1/stream/applications/{name}/resource-tree`: the tree whenever it differs from
/// the last one sent, after each change of the Application and each poll of the live objects.
/// The stream ends when the Application is deleted or the server shuts down.
pub(crate) async fn resource_tree(
    State(s): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let q = Query::parse(raw.as_deref());
    let name = match s.app_key(&name, q.get("appNamespace")) {
        Ok(key) => key,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = s.authorize_app(&caller, &name, "get").await {
        return e.into_response();
    }
    let (apps, bare) = match s.apps_for(&name) {
        Ok((api, _, bare)) => (api, bare.to_string()),
        Err(e) => return e.into_response(),
    };
    // The first tree now: a missing Application (or a broken one) is an error, not a stream.
    let first = match crate::routes::resources::app_tree(&s, &name).await {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let sse = wants_sse(&headers);
    let config = watcher::Config::default().fields(&format!("metadata.name={bare}"));
    let changes = watcher::watcher(apps, config)
        .default_backoff()
        .filter_map(|event| async move {
            match event {
                Ok(Event::Apply(_)) | Ok(Event::Delete(_)) | Ok(Event::InitDone) => Some(()),
                Ok(_) => None,
                Err(e) => {
                    tracing::debug!("watching an Application for its tree stream: {e}");
                    None
                }
            }
        });
    let polls = futures::stream::unfold((), |()| async {
        tokio::time::sleep(TREE_POLL).await;
        Some(((), ()))
    });
    let mut stop = s.shutdown.clone();
    let stopped = async move {
        let _ = stop.wait_for(|v| *v).await;
    };
    let frame = move |tree: &Value| {
        let line = json!({"result": tree}).to_string();
        if sse {
            format!("data: {line}\n\n")
        } else {
            format!("{line}\n")
        }
    };
    let first_frame = frame(&first);
    // Changes arriving together make one read.
    let triggers = futures::stream::select(changes, polls)
        .ready_chunks(64)
        .boxed();
    let updates = futures::stream::unfold(
        (triggers, s, name, first),
        move |(mut triggers, s, name, last)| async move {
            loop {
                triggers.next().await?;
                match crate::routes::resources::app_tree(&s, &name).await {
                    Ok(tree) if tree == last => {}
                    Ok(tree) => return Some((frame(&tree), (triggers, s, name, tree))),
                    // Deleted: the stream ends.
                    Err(Error::NotFound(_)) => return None,
                    Err(e) => tracing::debug!("reading the tree of {name} for a stream: {e}"),
                }
            }
        },
    );
    let events = futures::stream::once(async move { first_frame })
        .chain(updates)
        .map(Ok::<_, Infallible>)
        .take_until(stopped);
    streaming(events, sse)
}

/// Whether the client that passed `resourceVersion` (`since`) already has this version of the
/// object from its list.
fn known_since(obj: &DynamicObject, since: Option<u64>) -> bool {
    let Some(since) = since else { return false };
    obj.metadata
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse::<u64>().ok())
        .is_some_and(|rv| rv <= since)
}

/// What tells two streamed Applications apart: `namespace/name`.
fn stream_key(obj: &DynamicObject) -> String {
    format!(
        "{}/{}",
        obj.metadata.namespace.as_deref().unwrap_or_default(),
        obj.metadata.name.as_deref().unwrap_or_default()
    )
}
