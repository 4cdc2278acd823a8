//! The routes: Argo CD's REST gateway paths, each handled in the module of its service.

mod accounts;
mod applications;
mod events;
mod live;
mod logs;
mod meta;
mod operations;
mod projects;
mod resources;
mod revisions;
mod session;
mod stream;

pub(crate) use session::SecureCookie;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{delete, get, post, put};
use tower::limit::GlobalConcurrencyLimitLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use crate::config::Limits;
use crate::state::AppState;

/// Every route, with the limits: body size and concurrency everywhere, the request deadline on
/// everything but watch streams.
pub(crate) fn router(
    state: AppState,
    limits: &Limits,
    metrics: std::sync::Arc<crate::metrics::ServerMetrics>,
) -> Router {
    let app = "/api/v1/applications/{name}";
    let timed = Router::new()
        .route("/api/version", get(meta::version))
        .route("/api/v1/settings", get(meta::settings))
        .route("/api/v1/clusters/{server}", get(meta::cluster))
        .route(
            "/api/v1/applications",
            get(applications::list).post(applications::create),
        )
        .route(
            app,
            get(applications::get)
                .put(applications::update)
                .patch(applications::patch)
                .delete(applications::delete),
        )
        .route(&format!("{app}/resource-tree"), get(resources::tree))
        .route(
            &format!("{app}/managed-resources"),
            get(resources::managed).post(resources::managed_local),
        )
        .route(&format!("{app}/manifests"), get(resources::manifests))
        .route(&format!("{app}/events"), get(events::list))
        .route(
            &format!("{app}/revisions/{{revision}}/metadata"),
            get(revisions::metadata),
        )
        .route(&format!("{app}/sync"), post(operations::sync))
        .route(&format!("{app}/rollback"), post(operations::rollback))
        .route(&format!("{app}/operation"), delete(operations::terminate))
        .route(
            &format!("{app}/resource"),
            get(live::get).post(live::patch).delete(live::delete),
        )
        .route(
            &format!("{app}/resource/actions"),
            get(live::list_actions).post(live::run_action_v1),
        )
        .route(
            &format!("{app}/resource/actions/v2"),
            post(live::run_action_v2),
        )
        .route(
            "/api/v1/projects",
            get(projects::list).post(projects::create),
        )
        .route(
            "/api/v1/projects/{name}",
            get(projects::get).put(projects::update),
        )
        .route(
            "/api/v1/projects/{project}/roles/{role}/token",
            post(projects::create_token),
        )
        .route(
            "/api/v1/projects/{project}/roles/{role}/token/{iat}",
            delete(projects::delete_token),
        )
        .route(
            "/api/v1/session",
            post(session::create).delete(session::delete),
        )
        .route("/api/v1/session/userinfo", get(session::userinfo))
        .route("/api/v1/account", get(accounts::list))
        .route("/api/v1/account/password", put(accounts::update_password))
        .route(
            "/api/v1/account/can-i/{resource}/{action}/{*object}",
            get(accounts::can_i),
        )
        .route("/api/v1/account/{name}", get(accounts::get))
        .route("/api/v1/account/{name}/token", post(accounts::create_token))
        .route(
            "/api/v1/account/{name}/token/{id}",
            delete(accounts::delete_token),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(meta::ready))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ));
    let streams = Router::new()
        .route("/api/v1/stream/applications", get(stream::applications))
        .route(
            "/api/v1/stream/applications/{name}/resource-tree",
            get(stream::resource_tree),
        )
        // Logs follow Pods for as long as the client reads (`follow=true`).
        .route(&format!("{app}/logs"), get(logs::logs));
    // Webhooks read their body under their own limit (`webhook.maxPayloadSizeMB`, Argo's 50 MB
    // by default), so they are outside the API's body limit.
    let webhooks = Router::new()
        .route("/api/webhook", post(crate::webhook::receive))
        .layer(DefaultBodyLimit::disable())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ));
    timed
        .merge(streams)
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        .layer(RequestBodyLimitLayer::new(limits.max_body_bytes))
        .merge(webhooks)
        .fallback(crate::ui::fallback)
        // Inside the concurrency limit: a request is authenticated only once it is admitted.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::auth::middleware::authenticate,
        ))
        .layer(GlobalConcurrencyLimitLayer::new(limits.max_concurrent))
        // Outermost: every answer counted, the limits' and authentication's refusals too.
        .layer(axum::middleware::from_fn_with_state(
            metrics,
            crate::metrics::record,
        ))
        .with_state(state)
}
