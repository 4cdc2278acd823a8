//! The routes: Argo CD's REST gateway paths, each handled in the module of its service.

mod accounts;
mod applications;
mod applicationsets;
mod certificates;
mod cluster_edit;
mod clusters;
mod events;
mod gpgkeys;
mod live;
mod logs;
mod meta;
mod operations;
mod project_delete;
mod project_views;
mod projects;
mod repocreds;
mod repositories;
mod resources;
mod revisions;
mod session;
mod sso;
mod stream;

pub(crate) use session::SecureCookie;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::routing::{MethodRouter, delete, get, post, put};
use tower::limit::GlobalConcurrencyLimitLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

use crate::config::Limits;
use crate::state::AppState;

/// Routes as (path pattern, handlers by method): the tables below, read by [`router`] and by
/// the test that every route is named in the metrics.
type Routes = Vec<(String, MethodRouter<AppState>)>;

/// The pattern of one Application's routes.
const APP: &str = "/api/v1/applications/{name}";

/// Every route, with the limits: body size and concurrency everywhere, the request deadline on
/// everything but watch streams.
pub(crate) fn router(
    state: AppState,
    limits: &Limits,
    metrics: std::sync::Arc<crate::metrics::ServerMetrics>,
) -> Router {
    let timeout =
        || TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, limits.request_timeout);
    let timed = table(timed_routes()).layer(timeout());
    let streams = table(stream_routes());
    // Webhooks read their body under their own limit (`webhook.maxPayloadSizeMB`, Argo's 50 MB
    // by default), so they are outside the API's body limit.
    let webhooks = table(webhook_routes())
        .layer(DefaultBodyLimit::disable())
        .layer(timeout());
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
        // How a browser gets a session: outside authentication (and its API content-type
        // check, which Dex's login form would fail), under the same limits.
        .merge(
            table(sso_routes())
                .layer(DefaultBodyLimit::max(limits.max_body_bytes))
                .layer(RequestBodyLimitLayer::new(limits.max_body_bytes))
                .layer(timeout()),
        )
        .layer(GlobalConcurrencyLimitLayer::new(limits.max_concurrent))
        // Outermost: every answer counted, the limits' and authentication's refusals too. Still
        // inside the router (`Router::layer` wraps each route), where the matched route is known.
        .layer(axum::middleware::from_fn_with_state(
            metrics,
            crate::metrics::record,
        ))
        .with_state(state)
}

/// A router of `routes`.
fn table(routes: Routes) -> Router<AppState> {
    routes
        .into_iter()
        .fold(Router::new(), |router, (path, handlers)| {
            router.route(&path, handlers)
        })
}

/// The routes under the request deadline.
fn timed_routes() -> Routes {
    [
        meta_routes(),
        application_routes(),
        application_resource_routes(),
        applicationset_routes(),
        project_routes(),
        repository_routes(),
        session_routes(),
        account_routes(),
        gpgkey_routes(),
    ]
    .concat()
}

/// Version, settings, clusters and the probes.
fn meta_routes() -> Routes {
    vec![
        ("/api/version".into(), get(meta::version)),
        ("/api/v1/settings".into(), get(meta::settings)),
        ("/api/v1/settings/plugins".into(), get(meta::plugins)),
        (
            "/api/v1/clusters".into(),
            get(clusters::list).post(cluster_edit::create),
        ),
        (
            "/api/v1/clusters/{server}".into(),
            get(clusters::get)
                .put(cluster_edit::update)
                .delete(clusters::delete),
        ),
        (
            "/api/v1/clusters/{server}/invalidate-cache".into(),
            post(clusters::invalidate_cache),
        ),
        (
            "/api/v1/clusters/{server}/rotate-auth".into(),
            post(clusters::rotate_auth),
        ),
        ("/healthz".into(), get(|| async { "ok" })),
        ("/readyz".into(), get(meta::ready)),
    ]
}

/// Applications, their comparison and their operations.
fn application_routes() -> Routes {
    vec![
        (
            "/api/v1/applications".into(),
            get(applications::list).post(applications::create),
        ),
        (
            APP.into(),
            get(applications::get)
                .put(applications::update)
                .patch(applications::patch)
                .delete(applications::delete),
        ),
        (format!("{APP}/resource-tree"), get(resources::tree)),
        (
            format!("{APP}/managed-resources"),
            get(resources::managed).post(resources::managed_local),
        ),
        (format!("{APP}/manifests"), get(resources::manifests)),
        (format!("{APP}/events"), get(events::list)),
        (
            format!("{APP}/revisions/{{revision}}/metadata"),
            get(revisions::metadata),
        ),
        (format!("{APP}/sync"), post(operations::sync)),
        (format!("{APP}/rollback"), post(operations::rollback)),
        (format!("{APP}/operation"), delete(operations::terminate)),
    ]
}

/// One live resource of an Application, and its actions.
fn application_resource_routes() -> Routes {
    vec![
        (
            format!("{APP}/resource"),
            get(live::get).post(live::patch).delete(live::delete),
        ),
        (
            format!("{APP}/resource/actions"),
            get(live::list_actions).post(live::run_action_v1),
        ),
        (
            format!("{APP}/resource/actions/v2"),
            post(live::run_action_v2),
        ),
    ]
}

/// The pattern of one ApplicationSet's routes.
const APPSET: &str = "/api/v1/applicationsets/{name}";

/// ApplicationSets (Argo's `ApplicationSetService`), and the brake's confirmation (Plumb's).
fn applicationset_routes() -> Routes {
    vec![
        (
            "/api/v1/applicationsets".into(),
            get(applicationsets::list).post(applicationsets::create),
        ),
        (
            "/api/v1/applicationsets/generate".into(),
            post(applicationsets::generate),
        ),
        (
            APPSET.into(),
            get(applicationsets::get).delete(applicationsets::delete),
        ),
        (
            format!("{APPSET}/resource-tree"),
            get(applicationsets::tree),
        ),
        (format!("{APPSET}/events"), get(applicationsets::events)),
        (
            format!("{APPSET}/applications"),
            get(applicationsets::owned),
        ),
        (
            format!("{APPSET}/confirm-deletion"),
            post(applicationsets::confirm_deletion),
        ),
    ]
}

/// AppProjects and their role tokens.
fn project_routes() -> Routes {
    vec![
        (
            "/api/v1/projects".into(),
            get(projects::list).post(projects::create),
        ),
        (
            "/api/v1/projects/{name}".into(),
            get(projects::get)
                .put(projects::update)
                .delete(project_delete::delete),
        ),
        (
            "/api/v1/projects/{name}/detailed".into(),
            get(project_views::detailed),
        ),
        (
            "/api/v1/projects/{name}/syncwindows".into(),
            get(project_views::sync_windows),
        ),
        (
            "/api/v1/projects/{name}/events".into(),
            get(project_views::events),
        ),
        (
            "/api/v1/projects/{project}/roles/{role}/token".into(),
            post(projects::create_token),
        ),
        (
            "/api/v1/projects/{project}/roles/{role}/token/{iat}".into(),
            delete(projects::delete_token),
        ),
    ]
}

/// GnuPG public keys (`argocd-gpg-keys-cm`).
fn gpgkey_routes() -> Routes {
    vec![
        (
            "/api/v1/gpgkeys".into(),
            get(gpgkeys::list)
                .post(gpgkeys::create)
                .delete(gpgkeys::delete),
        ),
        (
            "/api/v1/gpgkeys/{keyID}".into(),
            get(gpgkeys::get).delete(gpgkeys::delete_path),
        ),
    ]
}

/// Repositories, credential templates and certificates (`argocd repo`, `repocreds`, `cert`).
fn repository_routes() -> Routes {
    vec![
        (
            "/api/v1/repositories".into(),
            get(repositories::list).post(repositories::create),
        ),
        (
            "/api/v1/repositories/{repo}".into(),
            get(repositories::get)
                .put(repositories::update)
                .delete(repositories::delete),
        ),
        (
            "/api/v1/repositories/{repo}/validate".into(),
            post(repositories::validate),
        ),
        (
            "/api/v1/repocreds".into(),
            get(repocreds::list).post(repocreds::create),
        ),
        (
            "/api/v1/repocreds/{url}".into(),
            put(repocreds::update).delete(repocreds::delete),
        ),
        (
            "/api/v1/write-repositories".into(),
            get(repositories::write_credentials).post(repositories::write_credentials),
        ),
        (
            "/api/v1/write-repositories/{repo}".into(),
            get(repositories::write_credentials)
                .put(repositories::write_credentials)
                .delete(repositories::write_credentials),
        ),
        (
            "/api/v1/write-repocreds".into(),
            get(repositories::write_credentials).post(repositories::write_credentials),
        ),
        (
            "/api/v1/write-repocreds/{url}".into(),
            put(repositories::write_credentials).delete(repositories::write_credentials),
        ),
        (
            "/api/v1/certificates".into(),
            get(certificates::list)
                .post(certificates::create)
                .delete(certificates::delete),
        ),
    ]
}

/// Logging in and out.
fn session_routes() -> Routes {
    vec![
        (
            "/api/v1/session".into(),
            post(session::create).delete(session::delete),
        ),
        ("/api/v1/session/userinfo".into(), get(session::userinfo)),
    ]
}

/// Local accounts, their tokens, and permission checks.
fn account_routes() -> Routes {
    vec![
        ("/api/v1/account".into(), get(accounts::list)),
        (
            "/api/v1/account/password".into(),
            put(accounts::update_password),
        ),
        (
            "/api/v1/account/can-i/{resource}/{action}/{*subresource}".into(),
            get(accounts::can_i),
        ),
        ("/api/v1/account/{name}".into(), get(accounts::get)),
        (
            "/api/v1/account/{name}/token".into(),
            post(accounts::create_token),
        ),
        (
            "/api/v1/account/{name}/token/{id}".into(),
            delete(accounts::delete_token),
        ),
    ]
}

/// Watch streams and logs: open for as long as the client reads (logs follow Pods with
/// `follow=true`), so outside the request deadline.
fn stream_routes() -> Routes {
    vec![
        (
            "/api/v1/stream/applications".into(),
            get(stream::applications),
        ),
        (
            "/api/v1/stream/applications/{name}/resource-tree".into(),
            get(stream::resource_tree),
        ),
        (
            "/api/v1/stream/applicationsets".into(),
            get(stream::applicationsets),
        ),
        (format!("{APP}/logs"), get(logs::logs)),
    ]
}

/// Single sign-on: Argo's login, callback and logout, and the bundled Dex.
fn sso_routes() -> Routes {
    vec![
        ("/auth/login".into(), get(sso::login)),
        ("/auth/callback".into(), get(sso::callback)),
        ("/auth/logout".into(), get(sso::logout)),
        ("/api/dex".into(), get(sso::dex_proxy).post(sso::dex_proxy)),
        (
            "/api/dex/{*rest}".into(),
            get(sso::dex_proxy).post(sso::dex_proxy),
        ),
    ]
}

/// Git providers' push events.
fn webhook_routes() -> Routes {
    vec![("/api/webhook".into(), post(crate::webhook::receive))]
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::extract::{MatchedPath, Request};
    use axum::http::Method;
    use axum::middleware::Next;
    use axum::response::{IntoResponse, Response};
    use tower::ServiceExt;

    use super::*;
    use crate::metrics::calls::{self, OTHER};

    fn all_routes() -> Routes {
        [
            timed_routes(),
            stream_routes(),
            webhook_routes(),
            sso_routes(),
        ]
        .concat()
    }

    /// A request path the route `pattern` matches.
    fn path_of(pattern: &str) -> String {
        pattern
            .split('/')
            .map(|seg| match seg.strip_prefix("{*") {
                Some(_) => "x/y",
                None if seg.starts_with('{') => "x",
                None => seg,
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Answers with the metrics' name of the request instead of running the handler.
    async fn name_it(req: Request, _: Next) -> Response {
        let matched = req
            .extensions()
            .get::<MatchedPath>()
            .map(MatchedPath::as_str);
        let named = calls::classify(req.method(), matched);
        let call = named.call.map(|c| c.method).unwrap_or("-");
        format!("{call} {} {}", named.route, matched.unwrap_or("")).into_response()
    }

    #[tokio::test]
    async fn every_route_is_named_in_the_metrics() {
        let dir = tempfile::tempdir().expect("tempdir");
        let router = all_routes()
            .into_iter()
            .fold(Router::new(), |r, (path, handlers)| {
                r.route(
                    &path,
                    handlers.route_layer(axum::middleware::from_fn(name_it)),
                )
            })
            .with_state(crate::state::test_state(dir.path(), None));
        let methods = [
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ];
        let mut served = 0;
        for (pattern, _) in all_routes() {
            for method in methods.clone() {
                let req = Request::builder()
                    .method(method.clone())
                    .uri(path_of(&pattern))
                    .body(Body::empty())
                    .expect("request");
                let response = router.clone().oneshot(req).await.expect("infallible");
                if response.status() == StatusCode::METHOD_NOT_ALLOWED {
                    continue;
                }
                served += 1;
                let body = axum::body::to_bytes(response.into_body(), 4096)
                    .await
                    .expect("body");
                let body = String::from_utf8_lossy(&body).to_string();
                let [call, label, matched] = body.split(' ').collect::<Vec<_>>()[..] else {
                    panic!("{method} {pattern}: {body}");
                };
                assert_eq!(matched, pattern, "{method} {pattern}: the matched route");
                // Counted as `other` before labels came from the matched route; kept.
                let other_before = [("POST", "/api/v1/applications/{name}/managed-resources")];
                if other_before.contains(&(method.as_str(), pattern.as_str())) {
                    assert_eq!((call, label), ("-", OTHER), "{method} {pattern}");
                    continue;
                }
                assert_eq!(
                    label,
                    pattern.replace("{*", "{"),
                    "{method} {pattern}: unnamed in the metrics"
                );
                let argo_api = pattern.starts_with("/api/v1/") || pattern == "/api/version";
                assert_eq!(
                    call != "-",
                    argo_api,
                    "{method} {pattern}: Argo's gRPC name"
                );
            }
        }
        assert_eq!(served, 100, "routes served by method");
    }
}
