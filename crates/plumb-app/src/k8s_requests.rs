//! `argocd_app_k8s_request_total`: every request the controller makes to a Kubernetes API
//! server, counted with Argo CD's labels (`server`, `verb`, `resource_kind`, `response_code`,
//! `name`, `namespace`, `project`, `dry_run`). A client is wrapped by [`counted`]: a tower
//! service in front of the real client reads each request's method and path and the answer's
//! status. The Application a request is made for comes from the task-local scope
//! [`for_app`] sets around a reconcile (Argo labels the series with the Application's name,
//! namespace and project); requests made outside one (the live cache's lists and watches,
//! discovery, work spawned onto other tasks) have empty application labels.

use std::cell::RefCell;
use std::future::Future;
use std::sync::LazyLock;

use axum::http::{Method, Request, Response};
use kube::client::Body;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

/// One series of `argocd_app_k8s_request_total`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct K8sRequestLabels {
    server: String,
    verb: String,
    resource_kind: String,
    response_code: String,
    name: String,
    namespace: String,
    project: String,
    dry_run: String,
}

/// The counters, shared by every counted client of the process and registered by
/// [`crate::Metrics`].
pub static K8S_REQUESTS: LazyLock<Family<K8sRequestLabels, Counter>> =
    LazyLock::new(Family::default);

/// The Application a task works for.
#[derive(Debug, Clone, Default)]
struct AppLabels {
    name: String,
    namespace: String,
    project: String,
}

tokio::task_local! {
    static APP: RefCell<AppLabels>;
}

/// `fut` with its Kubernetes requests attributed to Application `namespace/name` of `project`
/// (empty when not known yet: [`set_project`] fills it in).
pub fn for_app<F: Future>(
    namespace: &str,
    name: &str,
    project: &str,
    fut: F,
) -> impl Future<Output = F::Output> + use<F> {
    let labels = AppLabels {
        name: name.to_string(),
        namespace: namespace.to_string(),
        project: project.to_string(),
    };
    APP.scope(RefCell::new(labels), fut)
}

/// Records the project of the Application the current task works for (known once it is read).
pub fn set_project(project: &str) {
    let _ = APP.try_with(|a| a.borrow_mut().project = project.to_string());
}

/// What a request path names: (resource, whether one object is named).
fn resource_of(path: &str) -> (String, bool) {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest: &[&str] = match segments.as_slice() {
        ["api", _version, rest @ ..] => rest,
        ["apis", _group, _version, rest @ ..] => rest,
        _ => return (String::new(), false),
    };
    match rest {
        ["namespaces", _ns, resource, name, ..] => ((*resource).to_string(), !name.is_empty()),
        ["namespaces", _ns, resource] => ((*resource).to_string(), false),
        [resource, name, ..] => ((*resource).to_string(), !name.is_empty()),
        [resource] => ((*resource).to_string(), false),
        [] => (String::new(), false),
    }
}

/// The verb of a request as the API server's RequestInfo names it.
fn verb_of(method: &Method, named: bool, query: &str) -> &'static str {
    let watch = query
        .split('&')
        .any(|kv| kv == "watch=true" || kv == "watch=1");
    match *method {
        Method::GET if watch => "watch",
        Method::GET if named => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "unknown",
    }
}

/// The labels of a request (all but the response code).
fn labels_of(server: &str, req: &Request<Body>) -> K8sRequestLabels {
    let path = req.uri().path();
    let query = req.uri().query().unwrap_or_default();
    let (resource, named) = resource_of(path);
    let app = APP.try_with(|a| a.borrow().clone()).unwrap_or_default();
    K8sRequestLabels {
        server: server.to_string(),
        verb: verb_of(req.method(), named, query).to_string(),
        resource_kind: resource,
        response_code: String::new(),
        name: app.name,
        namespace: app.namespace,
        project: app.project,
        dry_run: query
            .split('&')
            .any(|kv| kv.starts_with("dryRun="))
            .to_string(),
    }
}

/// `client` with every request counted under `server` (the destination's URL).
pub fn counted(client: kube::Client, server: &str) -> kube::Client {
    let namespace = client.default_namespace().to_string();
    let server = server.to_string();
    let svc = tower::service_fn(move |req: Request<Body>| {
        let client = client.clone();
        let server = server.clone();
        // Runs in the task that awaits the request (the client's buffer only hands the future
        // over), so the task-local Application is the caller's.
        async move {
            let mut labels = labels_of(&server, &req);
            let answer: Result<Response<Body>, kube::Error> = client.send(req).await;
            labels.response_code = match &answer {
                Ok(r) => r.status().as_u16().to_string(),
                // No answer: Argo's client-go reports such requests with code "<error>".
                Err(_) => "<error>".to_string(),
            };
            K8S_REQUESTS.get_or_create(&labels).inc();
            answer
        }
    });
    kube::Client::new(svc, namespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_methods_become_argo_verbs_and_resources() {
        let cases = [
            (
                Method::GET,
                "/api/v1/namespaces/web/pods/api-1",
                "",
                "get",
                "pods",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/web/pods",
                "",
                "list",
                "pods",
            ),
            (
                Method::GET,
                "/apis/apps/v1/deployments",
                "watch=true&resourceVersion=1",
                "watch",
                "deployments",
            ),
            (
                Method::PATCH,
                "/apis/apps/v1/namespaces/web/deployments/api",
                "fieldManager=plumb",
                "patch",
                "deployments",
            ),
            (
                Method::PATCH,
                "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/web/status",
                "",
                "patch",
                "applications",
            ),
            (
                Method::POST,
                "/api/v1/namespaces/web/configmaps",
                "",
                "create",
                "configmaps",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/web/configmaps/x",
                "",
                "delete",
                "configmaps",
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/web/configmaps",
                "",
                "deletecollection",
                "configmaps",
            ),
            (
                Method::GET,
                "/api/v1/namespaces/web",
                "",
                "get",
                "namespaces",
            ),
            (Method::GET, "/api/v1/namespaces", "", "list", "namespaces"),
            (Method::GET, "/version", "", "list", ""),
        ];
        for (method, path, query, verb, resource) in cases {
            let (r, named) = resource_of(path);
            assert_eq!(
                (verb_of(&method, named, query), r.as_str()),
                (verb, resource),
                "{method} {path}"
            );
        }
    }

    #[tokio::test]
    async fn the_application_of_the_task_labels_its_requests() {
        let uri = "/apis/apps/v1/namespaces/web/deployments/api?dryRun=All";
        let req = || {
            Request::builder()
                .method(Method::PATCH)
                .uri(uri)
                .body(Body::empty())
                .unwrap()
        };
        let outside = labels_of("https://kubernetes.default.svc", &req());
        assert_eq!((outside.name.as_str(), outside.project.as_str()), ("", ""));
        let inside = for_app("argocd", "payments-api", "", async {
            set_project("payments");
            labels_of("https://kubernetes.default.svc", &req())
        })
        .await;
        assert_eq!(
            (
                inside.name.as_str(),
                inside.namespace.as_str(),
                inside.project.as_str()
            ),
            ("payments-api", "argocd", "payments")
        );
        assert_eq!(
            (
                inside.verb.as_str(),
                inside.resource_kind.as_str(),
                inside.dry_run.as_str()
            ),
            ("patch", "deployments", "true")
        );
        assert_eq!(outside.dry_run, "true");
    }
}
