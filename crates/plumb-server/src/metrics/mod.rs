//! The server's Prometheus metrics on their own port (Argo's argocd-server serves them on
//! 8083), with the `prometheus-client` library as the controller. Argo's API server counts its
//! calls with go-grpc-prometheus: `grpc_server_started_total` and `grpc_server_handled_total`
//! (`grpc_service`, `grpc_method`, `grpc_type`, and `grpc_code` once answered). Plumb's REST
//! routes are Argo's gateway paths, so each is counted under the gRPC call the gateway would
//! have made; a stream counts as handled when it is opened. Argo's `argocd_redis_request_*`
//! series have no counterpart (Plumb keeps no Redis). Plumb's own:
//! `plumb_server_http_requests_total` for every request, routes outside Argo's gRPC API
//! (webhooks, health) included, labelled by route pattern, never by the raw path.

pub(crate) mod calls;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{StatusCode, header};
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
use calls::{Call, Named};

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
    crds: plumb_app::crd_check::CrdGauge,
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
        let crds = plumb_app::crd_check::register_gauge(&mut registry);
        Self {
            registry,
            started,
            handled,
            http,
            crds,
        }
    }

    /// Starts the start-up CRD check in the background; it sets `plumb_crd_outdated` and logs
    /// an outdated CRD at error level (never fatal: a crash loop would fix nothing).
    pub(crate) fn checking_crds(self, client: &kube::Client) -> Self {
        tokio::spawn(plumb_app::crd_check::check_and_report(
            client.clone(),
            self.crds.clone(),
            "server",
        ));
        self
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

/// The middleware counting every request, by the route axum matched: it runs inside the router
/// (added with `Router::layer`), where [`MatchedPath`] is known.
pub(crate) async fn record(
    State(m): State<Arc<ServerMetrics>>,
    req: Request,
    next: Next,
) -> Response {
    let method = req.method().clone();
    let matched = req
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    let Named { call, route } = calls::classify(&method, matched);
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
            route,
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
    use axum::body::Body;
    use axum::extract::Request;
    use tower::ServiceExt;

    use super::*;

    #[tokio::test]
    async fn requests_are_counted_under_the_route_the_router_matched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let auth = Arc::new(crate::auth::Auth::new(
            crate::ThrottleConfig::default(),
            crate::auth::DEFAULT_DEX_SERVER,
            std::time::Duration::from_secs(60),
        ));
        let state = crate::state::test_state(dir.path(), Some(auth));
        let metrics = Arc::new(ServerMetrics::new());
        let router = crate::routes::router(state, &crate::Limits::default(), metrics.clone());
        for path in [
            "/api/v1/applications/web/revisions/no-such-branch/metadata",
            "/api/v1/clusters/https%3A%2F%2Fkubernetes.default.svc",
            "/api/v1/applications/web/sync",
            "/healthz",
            "/no/such/page",
        ] {
            let req = Request::get(path).body(Body::empty()).expect("request");
            router.clone().oneshot(req).await.expect("infallible");
        }
        let text = metrics.render();
        for line in [
            "grpc_server_started_total{grpc_method=\"RevisionMetadata\",grpc_service=\"application.ApplicationService\",grpc_type=\"unary\"} 1",
            "grpc_server_handled_total{grpc_code=\"Unauthenticated\",grpc_method=\"RevisionMetadata\",grpc_service=\"application.ApplicationService\",grpc_type=\"unary\"} 1",
            "plumb_server_http_requests_total{method=\"GET\",route=\"/api/v1/applications/{name}/revisions/{revision}/metadata\",code=\"401\"} 1",
            "plumb_server_http_requests_total{method=\"GET\",route=\"/healthz\",code=\"200\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
        // GET on the sync route (405) and the UI's page (the clusters route is ClusterService's
        // Get now).
        let other: usize = text
            .lines()
            .filter(|l| l.contains("route=\"other\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<usize>().ok())
            .sum();
        assert_eq!(other, 2, "{text}");
        assert!(
            !text.contains("no-such-branch"),
            "raw paths never become labels"
        );
        assert!(
            !text.contains("\"Sync\""),
            "a method the route does not serve: {text}"
        );
    }
}
