//! How a request is named in the metrics: by the route axum matched ([`MatchedPath`]), never
//! by the raw path, and, for Argo's API, by the gRPC call Argo's REST gateway would have made.
//! The route pattern comes from the router itself, so a new route is labelled without an edit
//! here; only a route of Argo's API needs its gRPC name in [`ARGO_CALLS`].
//!
//! [`MatchedPath`]: axum::extract::MatchedPath

use axum::http::Method;

/// The gRPC call of Argo's API behind a REST route: (service, method, server-streaming).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Call {
    pub(crate) service: &'static str,
    pub(crate) method: &'static str,
    pub(crate) stream: bool,
}

/// What the metrics count a request under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    /// Argo's gRPC call, for Argo's API.
    pub(crate) call: Option<Call>,
    /// The `route` label: the route pattern (`/api/v1/applications/{name}/sync`), or `other`.
    pub(crate) route: String,
}

/// The `route` label of requests no route names (404s, the UI's pages).
pub(crate) const OTHER: &str = "other";

const APPS: &str = "application.ApplicationService";
const PROJECTS: &str = "project.ProjectService";
const SESSION: &str = "session.SessionService";
const ACCOUNT: &str = "account.AccountService";
const GPGKEYS: &str = "gpgkey.GPGKeyService";
const REPOS: &str = "repository.RepositoryService";
const REPOCREDS: &str = "repocreds.RepoCredsService";
const CERTS: &str = "certificate.CertificateService";
const CLUSTERS: &str = "cluster.ClusterService";
const APPSETS: &str = "applicationset.ApplicationSetService";

/// One route of Argo's API: (HTTP method, route pattern as the router spells it, call).
struct ArgoRoute {
    http: &'static str,
    route: &'static str,
    call: Call,
}

const fn unary(
    http: &'static str,
    route: &'static str,
    service: &'static str,
    method: &'static str,
) -> ArgoRoute {
    ArgoRoute {
        http,
        route,
        call: Call {
            service,
            method,
            stream: false,
        },
    }
}

const fn stream(http: &'static str, route: &'static str, method: &'static str) -> ArgoRoute {
    stream_of(http, route, APPS, method)
}

const fn stream_of(
    http: &'static str,
    route: &'static str,
    service: &'static str,
    method: &'static str,
) -> ArgoRoute {
    ArgoRoute {
        http,
        route,
        call: Call {
            service,
            method,
            stream: true,
        },
    }
}

/// Argo's REST gateway table: the gRPC call behind each route of Argo's API that Plumb serves.
#[rustfmt::skip]
const ARGO_CALLS: &[ArgoRoute] = &[
    unary("GET", "/api/version", "version.VersionService", "Version"),
    unary("GET", "/api/v1/settings", "cluster.SettingsService", "Get"),
    unary("GET", "/api/v1/settings/plugins", "cluster.SettingsService", "GetPlugins"),
    unary("GET", "/api/v1/applications", APPS, "List"),
    unary("POST", "/api/v1/applications", APPS, "Create"),
    unary("GET", "/api/v1/applications/{name}", APPS, "Get"),
    unary("PUT", "/api/v1/applications/{name}", APPS, "Update"),
    unary("PATCH", "/api/v1/applications/{name}", APPS, "Patch"),
    unary("DELETE", "/api/v1/applications/{name}", APPS, "Delete"),
    unary("PUT", "/api/v1/applications/{name}/spec", APPS, "UpdateSpec"),
    unary("GET", "/api/v1/applications/{name}/resource-tree", APPS, "ResourceTree"),
    unary("GET", "/api/v1/applications/{name}/managed-resources", APPS, "ManagedResources"),
    unary("GET", "/api/v1/applications/{name}/manifests", APPS, "GetManifests"),
    unary("GET", "/api/v1/applications/{name}/events", APPS, "ListResourceEvents"),
    unary("POST", "/api/v1/applications/{name}/sync", APPS, "Sync"),
    unary("POST", "/api/v1/applications/{name}/rollback", APPS, "Rollback"),
    unary("DELETE", "/api/v1/applications/{name}/operation", APPS, "TerminateOperation"),
    unary("GET", "/api/v1/applications/{name}/revisions/{revision}/metadata", APPS, "RevisionMetadata"),
    unary("GET", "/api/v1/applications/{name}/resource", APPS, "GetResource"),
    unary("POST", "/api/v1/applications/{name}/resource", APPS, "PatchResource"),
    unary("DELETE", "/api/v1/applications/{name}/resource", APPS, "DeleteResource"),
    unary("GET", "/api/v1/applications/{name}/resource/actions", APPS, "ListResourceActions"),
    unary("POST", "/api/v1/applications/{name}/resource/actions", APPS, "RunResourceAction"),
    unary("POST", "/api/v1/applications/{name}/resource/actions/v2", APPS, "RunResourceActionV2"),
    stream("GET", "/api/v1/applications/{name}/logs", "PodLogs"),
    stream("GET", "/api/v1/stream/applications", "Watch"),
    stream("GET", "/api/v1/stream/applications/{name}/resource-tree", "WatchResourceTree"),
    unary("GET", "/api/v1/projects", PROJECTS, "List"),
    unary("POST", "/api/v1/projects", PROJECTS, "Create"),
    unary("GET", "/api/v1/projects/{name}", PROJECTS, "Get"),
    unary("PUT", "/api/v1/projects/{name}", PROJECTS, "Update"),
    unary("DELETE", "/api/v1/projects/{name}", PROJECTS, "Delete"),
    unary("GET", "/api/v1/projects/{name}/detailed", PROJECTS, "GetDetailedProject"),
    unary("GET", "/api/v1/projects/{name}/syncwindows", PROJECTS, "GetSyncWindowsState"),
    unary("GET", "/api/v1/projects/{name}/events", PROJECTS, "ListEvents"),
    unary("POST", "/api/v1/projects/{project}/roles/{role}/token", PROJECTS, "CreateToken"),
    unary("DELETE", "/api/v1/projects/{project}/roles/{role}/token/{iat}", PROJECTS, "DeleteToken"),
    unary("GET", "/api/v1/applicationsets", APPSETS, "List"),
    unary("POST", "/api/v1/applicationsets", APPSETS, "Create"),
    unary("POST", "/api/v1/applicationsets/generate", APPSETS, "Generate"),
    unary("GET", "/api/v1/applicationsets/{name}", APPSETS, "Get"),
    unary("DELETE", "/api/v1/applicationsets/{name}", APPSETS, "Delete"),
    unary("GET", "/api/v1/applicationsets/{name}/resource-tree", APPSETS, "ResourceTree"),
    unary("GET", "/api/v1/applicationsets/{name}/events", APPSETS, "ListResourceEvents"),
    stream_of("GET", "/api/v1/stream/applicationsets", APPSETS, "Watch"),
    // Plumb's, beyond Argo's service: the generated Applications and the brake's confirmation.
    unary("GET", "/api/v1/applicationsets/{name}/applications", APPSETS, "ListApplications"),
    unary("POST", "/api/v1/applicationsets/{name}/confirm-deletion", APPSETS, "ConfirmDeletion"),
    unary("GET", "/api/v1/repositories", REPOS, "ListRepositories"),
    unary("POST", "/api/v1/repositories", REPOS, "CreateRepository"),
    unary("GET", "/api/v1/repositories/{repo}", REPOS, "Get"),
    unary("PUT", "/api/v1/repositories/{repo}", REPOS, "UpdateRepository"),
    unary("DELETE", "/api/v1/repositories/{repo}", REPOS, "DeleteRepository"),
    unary("POST", "/api/v1/repositories/{repo}/validate", REPOS, "ValidateAccess"),
    unary("GET", "/api/v1/repocreds", REPOCREDS, "ListRepositoryCredentials"),
    unary("POST", "/api/v1/repocreds", REPOCREDS, "CreateRepositoryCredentials"),
    unary("PUT", "/api/v1/repocreds/{url}", REPOCREDS, "UpdateRepositoryCredentials"),
    unary("DELETE", "/api/v1/repocreds/{url}", REPOCREDS, "DeleteRepositoryCredentials"),
    unary("GET", "/api/v1/write-repositories", REPOS, "ListWriteRepositories"),
    unary("POST", "/api/v1/write-repositories", REPOS, "CreateWriteRepository"),
    unary("GET", "/api/v1/write-repositories/{repo}", REPOS, "GetWrite"),
    unary("PUT", "/api/v1/write-repositories/{repo}", REPOS, "UpdateWriteRepository"),
    unary("DELETE", "/api/v1/write-repositories/{repo}", REPOS, "DeleteWriteRepository"),
    unary("GET", "/api/v1/write-repocreds", REPOCREDS, "ListWriteRepositoryCredentials"),
    unary("POST", "/api/v1/write-repocreds", REPOCREDS, "CreateWriteRepositoryCredentials"),
    unary("PUT", "/api/v1/write-repocreds/{url}", REPOCREDS, "UpdateWriteRepositoryCredentials"),
    unary("DELETE", "/api/v1/write-repocreds/{url}", REPOCREDS, "DeleteWriteRepositoryCredentials"),
    unary("GET", "/api/v1/certificates", CERTS, "ListCertificates"),
    unary("POST", "/api/v1/certificates", CERTS, "CreateCertificate"),
    unary("DELETE", "/api/v1/certificates", CERTS, "DeleteCertificate"),
    unary("POST", "/api/v1/session", SESSION, "Create"),
    unary("DELETE", "/api/v1/session", SESSION, "Delete"),
    unary("GET", "/api/v1/session/userinfo", SESSION, "GetUserInfo"),
    unary("GET", "/api/v1/account", ACCOUNT, "ListAccounts"),
    unary("PUT", "/api/v1/account/password", ACCOUNT, "UpdatePassword"),
    unary("GET", "/api/v1/account/can-i/{resource}/{action}/{*subresource}", ACCOUNT, "CanI"),
    unary("GET", "/api/v1/account/{name}", ACCOUNT, "GetAccount"),
    unary("POST", "/api/v1/account/{name}/token", ACCOUNT, "CreateToken"),
    unary("DELETE", "/api/v1/account/{name}/token/{id}", ACCOUNT, "DeleteToken"),
    unary("GET", "/api/v1/gpgkeys", GPGKEYS, "List"),
    unary("POST", "/api/v1/gpgkeys", GPGKEYS, "Create"),
    unary("DELETE", "/api/v1/gpgkeys", GPGKEYS, "Delete"),
    unary("GET", "/api/v1/gpgkeys/{keyID}", GPGKEYS, "Get"),
    // Plumb's spelling of Delete with the key ID in the path.
    unary("DELETE", "/api/v1/gpgkeys/{keyID}", GPGKEYS, "Delete"),
    unary("GET", "/api/v1/clusters", CLUSTERS, "List"),
    unary("POST", "/api/v1/clusters", CLUSTERS, "Create"),
    unary("GET", "/api/v1/clusters/{server}", CLUSTERS, "Get"),
    unary("PUT", "/api/v1/clusters/{server}", CLUSTERS, "Update"),
    unary("DELETE", "/api/v1/clusters/{server}", CLUSTERS, "Delete"),
    unary("POST", "/api/v1/clusters/{server}/rotate-auth", CLUSTERS, "RotateAuth"),
    unary("POST", "/api/v1/clusters/{server}/invalidate-cache", CLUSTERS, "InvalidateCache"),
];

/// Names a request by its method and the route pattern axum matched (`None`: no route did).
/// A method an Argo route does not serve under a gRPC call is counted as `other`.
pub(crate) fn classify(method: &Method, matched: Option<&str>) -> Named {
    let other = || Named {
        call: None,
        route: OTHER.into(),
    };
    let Some(route) = matched else {
        return other();
    };
    let mut argo = ARGO_CALLS.iter().filter(|a| a.route == route).peekable();
    if argo.peek().is_none() {
        return Named {
            call: None,
            route: label(route),
        };
    }
    match argo.find(|a| a.http == method.as_str()) {
        Some(a) => Named {
            call: Some(a.call),
            route: label(route),
        },
        None => other(),
    }
}

/// The label of a route pattern: a catch-all segment (`{*subresource}`) reads as a parameter.
fn label(route: &str) -> String {
    route.replace("{*", "{")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(m: Method, route: &str) -> (Option<(&'static str, &'static str)>, String) {
        let n = classify(&m, Some(route));
        (n.call.map(|c| (c.service, c.method)), n.route)
    }

    #[test]
    fn routes_are_named_by_argos_grpc_calls_and_patterns() {
        assert_eq!(
            named(Method::POST, "/api/v1/applications/{name}/sync"),
            (
                Some((APPS, "Sync")),
                "/api/v1/applications/{name}/sync".into()
            )
        );
        assert_eq!(
            named(
                Method::GET,
                "/api/v1/applications/{name}/revisions/{revision}/metadata"
            ),
            (
                Some((APPS, "RevisionMetadata")),
                "/api/v1/applications/{name}/revisions/{revision}/metadata".into()
            )
        );
        assert_eq!(
            named(Method::PUT, "/api/v1/account/password"),
            (
                Some((ACCOUNT, "UpdatePassword")),
                "/api/v1/account/password".into()
            )
        );
        assert_eq!(
            named(Method::GET, "/api/v1/account/{name}"),
            (
                Some((ACCOUNT, "GetAccount")),
                "/api/v1/account/{name}".into()
            )
        );
        assert_eq!(
            named(
                Method::GET,
                "/api/v1/account/can-i/{resource}/{action}/{*subresource}"
            ),
            (
                Some((ACCOUNT, "CanI")),
                "/api/v1/account/can-i/{resource}/{action}/{subresource}".into()
            )
        );
        assert!(
            classify(
                &Method::GET,
                Some("/api/v1/stream/applications/{name}/resource-tree")
            )
            .call
            .is_some_and(|c| c.stream)
        );
        assert_eq!(
            named(Method::POST, "/api/webhook"),
            (None, "/api/webhook".into())
        );
        assert_eq!(named(Method::GET, "/healthz"), (None, "/healthz".into()));
    }

    #[test]
    fn unmatched_requests_and_unnamed_methods_are_other() {
        assert_eq!(classify(&Method::GET, None).route, OTHER);
        assert_eq!(
            classify(&Method::GET, Some("/api/v1/applications/{name}/sync")),
            Named {
                call: None,
                route: OTHER.into()
            }
        );
    }
}
