//! The controller's HTTP endpoint on axum: `/metrics` (OpenMetrics text), `/healthz` (the
//! process answers) and `/readyz` (the live cache and the Application watch have their initial
//! lists; 503 naming what is missing until then). Plain HTTP, as Argo's controller serves 8082.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tower_http::timeout::TimeoutLayer;

use crate::metrics::Metrics;

/// The routes.
pub(crate) fn router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(30),
        ))
        .with_state(metrics)
}

async fn scrape(State(m): State<Arc<Metrics>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.render(),
    )
        .into_response()
}

async fn ready(State(m): State<Arc<Metrics>>) -> Response {
    let missing = m.not_ready();
    if missing.is_empty() {
        (StatusCode::OK, "ok\n".to_string()).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {}\n", missing.join(", ")),
        )
            .into_response()
    }
}

/// Serves until the listener fails.
pub(crate) async fn serve(listener: TcpListener, metrics: Arc<Metrics>) {
    if let Err(e) = axum::serve(listener, router(metrics)).await {
        tracing::warn!("metrics server stopped: {e}");
    }
}
