//! The server's Prometheus metrics on their own port (Argo's argocd-server serves them on
//! 8083), with the `prometheus-client` library as the controller. Argo's API server counts its
//! calls with go-grpc-prometheus: `grpc_server_started_total` and `grpc_server_handled_total`
//! (`grpc_service`, `grpc_method`, `grpc_type`, and `grpc_code` once answered). Plumb's REST
//! routes are Argo's gateway paths, so each is counted under the gRPC call the gateway would
//! have made; a stream counts as handled when it is opened. Argo's `argocd_redis_request_*`
//! series have no counterpart (Plumb keeps no Redis). Plumb's own:
//! `plumb_server_http_requests_total` for every request, routes outside Argo's gRPC API
//! (webhooks, health) included, labelled by route pattern, never by the raw path.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::error::{Error, GrpcCode, Result};

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct Started {
    grpc_method: String,
    grpc_service: String,
    grpc_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct Handled {
    grpc_code: String,
    grpc_method: String,
    grpc_service: String,
    grpc_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct Http {
    method: String,
    route: String,
    code: String,
}

/// The server's counters.
pub(crate) struct ServerMetrics {
    registry: Registry,
    started: Family<Started, Counter>,
    handled: Family<Handled, Counter>,
    http: Family<Http, Counter>,
}

impl ServerMetrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::default();
        let started = Family::<Started, Counter>::default();
        registry.register(
            "grpc_server_started",
            "Total number of RPCs started on the server.",
            started.clone(),
        );
        let handled = Family::<Handled, Counter>::default();
        registry.register(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure.",
            handled.clone(),
        );
        let http = Family::<Http, Counter>::default();
        registry.register(
            "plumb_server_http_requests",
            "HTTP requests answered by plumb server, by route pattern and status.",
            http.clone(),
        );
        Self {
            registry,
            started,
            handled,
            http,
        }
    }

    /// Registers `plumb_server_logins_total{result}` (counted by [`crate::auth`]).
    pub(crate) fn register_logins(&mut self, logins: crate::auth::LoginCounter) {
        self.registry.register(
            "plumb_server_logins",
            "Local-account login attempts by result: success, failed (a password was checked), throttled (refused unchecked).",
            logins,
        );
    }

    fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!("encoding metrics: {e}");
        }
        out
    }
}

/// The gRPC call of Argo's API behind a REST route: (service, method, server-streaming).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Call {
    pub(crate) service: &'static str,
    pub(crate) method: &'static str,
    pub(crate) stream: bool,
    /// The route pattern (`/api/v1/applications/{name}/sync`).
    pub(crate) route: &'static str,
}

const APPS: &str = "application.ApplicationService";
const PROJECTS: &str = "project.ProjectService";
const SESSION: &str = "session.SessionService";
const ACCOUNT: &str = "account.AccountService";

const fn call(service: &'static str, method: &'static str, route: &'static str) -> Option<Call> {
    Some(Call {
        service,
        method,
        stream: false,
        route,
    })
}

/// Classifies a request by Argo's REST gateway table.
pub(crate) fn classify(method: &Method, path: &str) -> Option<Call> {
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let m = method.as_str();
    match (m, segs.as_slice()) {
        ("GET", ["api", "version"]) => call("version.VersionService", "Version", "/api/version"),
        ("GET", ["api", "v1", "settings"]) => {
            call("cluster.SettingsService", "Get", "/api/v1/settings")
        }
        (_, ["api", "v1", rest @ ..]) => classify_v1(m, rest),
        _ => None,
    }
}

fn classify_v1(m: &str, rest: &[&str]) -> Option<Call> {
    match (m, rest) {
        ("GET", ["applications"]) => call(APPS, "List", "/api/v1/applications"),
        ("POST", ["applications"]) => call(APPS, "Create", "/api/v1/applications"),
        ("GET", ["applications", _]) => call(APPS, "Get", "/api/v1/applications/{name}"),
        ("PUT", ["applications", _]) => call(APPS, "Update", "/api/v1/applications/{name}"),
        ("PATCH", ["applications", _]) => call(APPS, "Patch", "/api/v1/applications/{name}"),
        ("DELETE", ["applications", _]) => call(APPS, "Delete", "/api/v1/applications/{name}"),
        ("PUT", ["applications", _, "spec"]) => {
            call(APPS, "UpdateSpec", "/api/v1/applications/{name}/spec")
        }
        ("GET", ["applications", _, "resource-tree"]) => call(
            APPS,
            "ResourceTree",
            "/api/v1/applications/{name}/resource-tree",
        ),
        ("GET", ["applications", _, "managed-resources"]) => call(
            APPS,
            "ManagedResources",
            "/api/v1/applications/{name}/managed-resources",
        ),
        ("GET", ["applications", _, "manifests"]) => call(
            APPS,
            "GetManifests",
            "/api/v1/applications/{name}/manifests",
        ),
        ("GET", ["applications", _, "events"]) => call(
            APPS,
            "ListResourceEvents",
            "/api/v1/applications/{name}/events",
        ),
        ("POST", ["applications", _, "sync"]) => {
            call(APPS, "Sync", "/api/v1/applications/{name}/sync")
        }
        ("POST", ["applications", _, "rollback"]) => {
            call(APPS, "Rollback", "/api/v1/applications/{name}/rollback")
        }
        ("DELETE", ["applications", _, "operation"]) => call(
            APPS,
            "TerminateOperation",
            "/api/v1/applications/{name}/operation",
        ),
        ("GET", ["applications", _, "revisions", _, "metadata"]) => call(
            APPS,
            "RevisionMetadata",
            "/api/v1/applications/{name}/revisions/{revision}/metadata",
        ),
        ("GET", ["applications", _, "resource"]) => {
            call(APPS, "GetResource", "/api/v1/applications/{name}/resource")
        }
        ("POST", ["applications", _, "resource"]) => call(
            APPS,
            "PatchResource",
            "/api/v1/applications/{name}/resource",
        ),
        ("DELETE", ["applications", _, "resource"]) => call(
            APPS,
            "DeleteResource",
            "/api/v1/applications/{name}/resource",
        ),
        ("GET", ["applications", _, "resource", "actions"]) => call(
            APPS,
            "ListResourceActions",
            "/api/v1/applications/{name}/resource/actions",
        ),
        ("POST", ["applications", _, "resource", "actions"]) => call(
            APPS,
            "RunResourceAction",
            "/api/v1/applications/{name}/resource/actions",
        ),
        ("POST", ["applications", _, "resource", "actions", "v2"]) => call(
            APPS,
            "RunResourceActionV2",
            "/api/v1/applications/{name}/resource/actions/v2",
        ),
        ("GET", ["applications", _, "logs"]) => Some(Call {
            service: APPS,
            method: "PodLogs",
            stream: true,
            route: "/api/v1/applications/{name}/logs",
        }),
        ("GET", ["stream", "applications"]) => Some(Call {
            service: APPS,
            method: "Watch",
            stream: true,
            route: "/api/v1/stream/applications",
        }),
        ("GET", ["stream", "applications", _, "resource-tree"]) => Some(Call {
            service: APPS,
            method: "WatchResourceTree",
            stream: true,
            route: "/api/v1/stream/applications/{name}/resource-tree",
        }),
        ("GET", ["projects"]) => call(PROJECTS, "List", "/api/v1/projects"),
        ("POST", ["projects"]) => call(PROJECTS, "Create", "/api/v1/projects"),
        ("GET", ["projects", _]) => call(PROJECTS, "Get", "/api/v1/projects/{name}"),
        ("PUT", ["projects", _]) => call(PROJECTS, "Update", "/api/v1/projects/{name}"),
        ("DELETE", ["projects", _]) => call(PROJECTS, "Delete", "/api/v1/projects/{name}"),
        ("POST", ["projects", _, "roles", _, "token"]) => call(
            PROJECTS,
            "CreateToken",
            "/api/v1/projects/{project}/roles/{role}/token",
        ),
        ("DELETE", ["projects", _, "roles", _, "token", _]) => call(
            PROJECTS,
            "DeleteToken",
            "/api/v1/projects/{project}/roles/{role}/token/{iat}",
        ),
        ("POST", ["session"]) => call(SESSION, "Create", "/api/v1/session"),
        ("DELETE", ["session"]) => call(SESSION, "Delete", "/api/v1/session"),
        ("GET", ["session", "userinfo"]) => {
            call(SESSION, "GetUserInfo", "/api/v1/session/userinfo")
        }
        ("GET", ["account"]) => call(ACCOUNT, "ListAccounts", "/api/v1/account"),
        ("PUT", ["account", "password"]) => {
            call(ACCOUNT, "UpdatePassword", "/api/v1/account/password")
        }
        ("GET", ["account", "can-i", ..]) => call(
            ACCOUNT,
            "CanI",
            "/api/v1/account/can-i/{resource}/{action}/{subresource}",
        ),
        ("GET", ["account", _]) => call(ACCOUNT, "GetAccount", "/api/v1/account/{name}"),
        ("POST", ["account", _, "token"]) => {
            call(ACCOUNT, "CreateToken", "/api/v1/account/{name}/token")
        }
        ("DELETE", ["account", _, "token", _]) => {
            call(ACCOUNT, "DeleteToken", "/api/v1/account/{name}/token/{id}")
        }
        _ => None,
    }
}

/// The routes outside Argo's gRPC API, by pattern.
fn other_route(path: &str) -> &'static str {
    match path {
        "/api/webhook" => "/api/webhook",
        "/healthz" => "/healthz",
        "/readyz" => "/readyz",
        _ => "other",
    }
}

/// gRPC's name of a status code.
fn code_name(code: i32) -> &'static str {
    match code {
        0 => "OK",
        1 => "Canceled",
        3 => "InvalidArgument",
        4 => "DeadlineExceeded",
        5 => "NotFound",
        6 => "AlreadyExists",
        7 => "PermissionDenied",
        8 => "ResourceExhausted",
        9 => "FailedPrecondition",
        10 => "Aborted",
        12 => "Unimplemented",
        13 => "Internal",
        14 => "Unavailable",
        16 => "Unauthenticated",
        _ => "Unknown",
    }
}

/// The gRPC code of an answer: the one the API's error carried, else from the HTTP status
/// (answers of the limits: 408 and 413).
fn grpc_code(response: &Response) -> i32 {
    if let Some(GrpcCode(c)) = response.extensions().get::<GrpcCode>() {
        return *c;
    }
    match response.status() {
        s if s.is_success() => 0,
        StatusCode::REQUEST_TIMEOUT => 4,
        StatusCode::PAYLOAD_TOO_LARGE => 8,
        StatusCode::UNAUTHORIZED => 16,
        StatusCode::FORBIDDEN => 7,
        StatusCode::NOT_FOUND => 5,
        StatusCode::BAD_REQUEST => 3,
        _ => 2,
    }
}

/// The middleware counting every request.
pub(crate) async fn record(
    State(m): State<Arc<ServerMetrics>>,
    req: Request,
    next: Next,
) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let call = classify(&method, &path);
    let kind = |c: &Call| if c.stream { "server_stream" } else { "unary" };
    if let Some(c) = &call {
        m.started
            .get_or_create(&Started {
                grpc_method: c.method.into(),
                grpc_service: c.service.into(),
                grpc_type: kind(c).into(),
            })
            .inc();
    }
    let response = next.run(req).await;
    if let Some(c) = &call {
        m.handled
            .get_or_create(&Handled {
                grpc_code: code_name(grpc_code(&response)).into(),
                grpc_method: c.method.into(),
                grpc_service: c.service.into(),
                grpc_type: kind(c).into(),
            })
            .inc();
    }
    m.http
        .get_or_create(&Http {
            method: method.as_str().to_string(),
            route: call
                .map(|c| c.route)
                .unwrap_or_else(|| other_route(&path))
                .to_string(),
            code: response.status().as_u16().to_string(),
        })
        .inc();
    response
}

async fn scrape(State(m): State<Arc<ServerMetrics>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.render(),
    )
        .into_response()
}

/// Serves `/metrics` (plain HTTP, as Argo's 8083) until the server stops.
pub(crate) async fn listen(
    addr: SocketAddr,
    metrics: Arc<ServerMetrics>,
    mut stop: watch::Receiver<bool>,
) -> Result<SocketAddr> {
    let listener = TcpListener::bind(addr).await.map_err(|source| Error::Io {
        context: format!("listening for metrics on {addr}"),
        source,
    })?;
    let bound = listener.local_addr().map_err(|source| Error::Io {
        context: "reading the metrics address".into(),
        source,
    })?;
    let app = Router::new()
        .route("/metrics", get(scrape))
        .with_state(metrics);
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stop.wait_for(|v| *v).await;
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(stopped)
            .await
        {
            tracing::warn!("the metrics listener stopped: {e}");
        }
    });
    tracing::info!("server metrics on http://{bound}/metrics");
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_named_by_argos_grpc_calls_and_patterns() {
        let c = |m: Method, p: &str| classify(&m, p).map(|c| (c.service, c.method, c.route));
        assert_eq!(
            c(Method::POST, "/api/v1/applications/web/sync"),
            Some((APPS, "Sync", "/api/v1/applications/{name}/sync"))
        );
        assert_eq!(
            c(
                Method::GET,
                "/api/v1/applications/web/revisions/abc/metadata"
            ),
            Some((
                APPS,
                "RevisionMetadata",
                "/api/v1/applications/{name}/revisions/{revision}/metadata"
            ))
        );
        assert_eq!(
            c(Method::PUT, "/api/v1/account/password"),
            Some((ACCOUNT, "UpdatePassword", "/api/v1/account/password"))
        );
        assert_eq!(
            c(Method::GET, "/api/v1/account/admin"),
            Some((ACCOUNT, "GetAccount", "/api/v1/account/{name}"))
        );
        assert!(
            classify(
                &Method::GET,
                "/api/v1/stream/applications/web/resource-tree"
            )
            .is_some_and(|c| c.stream)
        );
        assert_eq!(c(Method::POST, "/api/webhook"), None);
        assert_eq!(other_route("/api/v1/../../etc"), "other");
    }
}
