//! Shared setup for the integration tests.

use plumb_model::application::ApplicationSource;
use plumb_source::{Config, Limits, RenderRequest, Renderer, Tools, Worker};

/// This crate's render worker binary (the `plumb` binary's `render-worker` is not built here).
pub fn worker() -> Worker {
    Worker::program(env!("CARGO_BIN_EXE_plumb-render-worker"))
}

/// Default tools, with this crate's render worker.
pub fn tools() -> Tools {
    Tools {
        worker: worker(),
        ..Tools::default()
    }
}

/// A renderer with its own cache directory (kept alive by the returned guard).
pub fn renderer() -> (Renderer, tempfile::TempDir) {
    renderer_with(Limits::default())
}

pub fn renderer_with(limits: Limits) -> (Renderer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r = Renderer::new(Config::new(dir.path()).tools(tools()).limits(limits)).unwrap();
    (r, dir)
}

/// A renderer that runs the real helm and kustomize (the test fails if they are not built).
pub fn renderer_with_tools() -> (Renderer, tempfile::TempDir) {
    renderer_with_tools_and(Limits::default())
}

pub fn renderer_with_tools_and(limits: Limits) -> (Renderer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools {
        helm: plumb_testenv::tools::helm(),
        kustomize: plumb_testenv::tools::kustomize(),
        worker: worker(),
    };
    let r = Renderer::new(Config::new(dir.path()).tools(tools).limits(limits)).unwrap();
    (r, dir)
}

pub fn source(url: &str, path: &str, revision: &str) -> ApplicationSource {
    ApplicationSource {
        repo_url: url.into(),
        path: Some(path.into()),
        target_revision: Some(revision.into()),
        ..Default::default()
    }
}

pub fn request(sources: Vec<ApplicationSource>) -> RenderRequest {
    RenderRequest {
        sources,
        app_name: "payments".into(),
        namespace: "payments".into(),
        ..Default::default()
    }
}

/// `group/Kind/namespace/name` of every rendered object, in order.
pub fn keys(r: &plumb_source::Rendered) -> Vec<String> {
    r.manifests.iter().map(|m| m.key().to_string()).collect()
}

/// The full error chain as one line.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut cur = err.source();
    while let Some(e) = cur {
        s.push_str(": ");
        s.push_str(&e.to_string());
        cur = e.source();
    }
    s
}

pub const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  labels:
    app: api
spec:
  replicas: 2
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: api
        image: registry.example.com/payments/api:1.4.2
        ports:
        - containerPort: 8080
"#;

pub const SERVICE: &str = r#"apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector:
    app: api
  ports:
  - port: 80
    targetPort: 8080
"#;

pub fn configmap(name: &str, data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  {data}\n")
}
