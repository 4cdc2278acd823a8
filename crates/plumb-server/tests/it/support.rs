//! Shared setup: a control namespace with the default AppProject, the controller running in
//! this process, and `plumb server` in front of it on a loopback port with its self-signed
//! certificate, reached with reqwest trusting exactly that certificate.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, PostParams};
use plumb_app::appproject_resource;
use plumb_controller::ControllerConfig;
use plumb_server::{Running, ServerConfig, TlsMode};
use plumb_testenv::{TestEnv, TestNamespace};
use serde_json::{Value, json};

pub const DEADLINE: Duration = Duration::from_secs(120);

pub fn env() -> &'static TestEnv {
    let env = TestEnv::shared();
    env.install_plumb_crds();
    env
}

/// A controller and a server over one control namespace.
pub struct Stack {
    pub ns: TestNamespace,
    _server: Running,
    pub http: reqwest::Client,
    pub base: String,
    controller: tokio::task::JoinHandle<()>,
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

/// An HTTPS client trusting only `pem`.
pub fn client_trusting(pem: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pem.as_bytes()).expect("certificate")])
        .timeout(Duration::from_secs(90))
        .build()
        .expect("http client")
}

pub fn server_config(ns: &str) -> ServerConfig {
    let cache = tempfile::tempdir().expect("tempdir").keep();
    let mut config = ServerConfig::new(cache);
    config.listen = "127.0.0.1:0".parse().expect("address");
    config.metrics_listen = Some("127.0.0.1:0".parse().expect("address"));
    config.control_namespace = ns.to_string();
    config.tls = TlsMode::SelfSigned { names: Vec::new() };
    config.source.tools.helm = plumb_testenv::tools::helm();
    config.source.tools.kustomize = plumb_testenv::tools::kustomize();
    // The API tests are about the API; authentication has its own tests (auth, rbac).
    config.disable_auth = true;
    config
}

pub async fn create_default_project(client: &kube::Client, ns: &str) {
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns, &appproject_resource());
    let project: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default"},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                 "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}
    }))
    .expect("project");
    projects
        .create(&PostParams::default(), &project)
        .await
        .expect("create default project");
}

impl Stack {
    pub async fn start(prefix: &str) -> Self {
        Self::start_with(prefix, |_, _| {}).await
    }

    /// [`Stack::start`] with the controller's and the server's configuration changed by `tune`.
    pub async fn start_with(
        prefix: &str,
        tune: impl FnOnce(&mut ControllerConfig, &mut ServerConfig),
    ) -> Self {
        let env = env();
        let ns = env.namespace(prefix);
        let client = env.client().await;
        create_default_project(&client, ns.name()).await;
        let cache = tempfile::tempdir().expect("tempdir").keep();
        let mut config = ControllerConfig::new(cache);
        config.control_namespace = ns.name().to_string();
        config.metrics_addr = None;
        config.source.tools.helm = plumb_testenv::tools::helm();
        config.source.tools.kustomize = plumb_testenv::tools::kustomize();
        let mut server_cfg = server_config(ns.name());
        tune(&mut config, &mut server_cfg);
        let c = client.clone();
        let controller = tokio::spawn(async move {
            if let Err(e) = plumb_controller::run(c, config).await {
                eprintln!("CONTROLLER STOPPED: {}", plumb_app::chain(&e));
            }
        });
        let server = plumb_server::serve(client.clone(), server_cfg)
            .await
            .expect("server starts");
        let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
        let base = format!("https://localhost:{}", server.addr.port());
        Self {
            ns,
            _server: server,
            http,
            base,
            controller,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The server's `/metrics` text (its own plain-HTTP port).
    pub async fn server_metrics(&self) -> String {
        let addr = self._server.metrics_addr.expect("metrics listener");
        reqwest::get(format!("http://{addr}/metrics"))
            .await
            .expect("GET /metrics")
            .text()
            .await
            .expect("metrics text")
    }

    /// GET returning (status, JSON body).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let resp = self.http.get(self.url(path)).send().await.expect("GET");
        read(resp).await
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut req = self.http.request(method, self.url(path));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        read(req.send().await.expect("request")).await
    }

    /// Polls `GET /api/v1/applications/{name}` until `cond` holds.
    pub async fn wait_app(&self, name: &str, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        let mut last = Value::Null;
        while start.elapsed() < DEADLINE {
            let (code, app) = self.get(&format!("/api/v1/applications/{name}")).await;
            if code == 200 {
                if cond(&app) {
                    return app;
                }
                last = app;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!(
            "Application {name}: {what} not reached within {DEADLINE:?}; last seen:\n{}",
            serde_json::to_string_pretty(&last["status"]).unwrap_or_default()
        );
    }
}

pub async fn read(resp: reqwest::Response) -> (u16, Value) {
    let code = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (code, value)
}

/// The ApplicationSet CRD (plumb-testenv's minimal one until deploy/crds has the real one).
pub fn ensure_appset_crd() {
    env().ensure_applicationset_crd();
}
