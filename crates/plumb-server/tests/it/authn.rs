//! What the authentication and RBAC tests share: a server with authentication on (no
//! controller: these tests are about who may call what), and helpers to change argocd-cm,
//! argocd-secret and argocd-rbac-cm as an operator would.

use std::collections::BTreeMap;

use base64::Engine;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, Patch, PatchParams, PostParams};
use plumb_server::{Running, ThrottleConfig};
use plumb_testenv::TestNamespace;
use serde_json::{Value, json};

use crate::support::{client_trusting, create_default_project, env, read, server_config};

pub struct AuthStack {
    pub ns: TestNamespace,
    pub client: kube::Client,
    server: Option<Running>,
    config: plumb_server::ServerConfig,
    pub http: reqwest::Client,
    pub base: String,
    /// The server's self-signed certificate (PEM; empty in plaintext).
    pub pem: String,
}

impl AuthStack {
    pub async fn start(prefix: &str, throttle: ThrottleConfig) -> Self {
        Self::start_with(prefix, throttle, Vec::new()).await
    }

    /// [`AuthStack::start`] serving Applications of `app_namespaces` too
    /// (`--application-namespaces`).
    pub async fn start_with(
        prefix: &str,
        throttle: ThrottleConfig,
        app_namespaces: Vec<String>,
    ) -> Self {
        Self::start_tuned(prefix, throttle, |c| {
            c.application_namespaces = Some(app_namespaces)
        })
        .await
    }

    /// [`AuthStack::start`] with the server's configuration changed by `tune`.
    pub async fn start_tuned(
        prefix: &str,
        throttle: ThrottleConfig,
        tune: impl FnOnce(&mut plumb_server::ServerConfig),
    ) -> Self {
        let env = env();
        let ns = env.namespace(prefix);
        let client = env.client().await;
        create_default_project(&client, ns.name()).await;
        let mut config = server_config(ns.name());
        config.disable_auth = false;
        config.login_throttle = throttle;
        config.application_namespaces = Some(Vec::new());
        tune(&mut config);
        let server = plumb_server::serve(client.clone(), config.clone())
            .await
            .expect("server starts");
        // Plaintext servers (`TlsMode::Plaintext`) are reached over plain HTTP.
        let pem = server.certificate_pem.clone().unwrap_or_default();
        let (http, scheme) = if pem.is_empty() {
            (reqwest::Client::new(), "http")
        } else {
            (client_trusting(&pem), "https")
        };
        let base = format!("{scheme}://localhost:{}", server.addr.port());
        Self {
            ns,
            client,
            server: Some(server),
            config,
            http,
            base,
            pem,
        }
    }

    /// Stops the server and starts a new one over the same namespace (a new process would
    /// know nothing but what the cluster keeps).
    pub async fn restart(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().await;
        }
        let server = plumb_server::serve(self.client.clone(), self.config.clone())
            .await
            .expect("server restarts");
        self.pem = server.certificate_pem.clone().expect("TLS");
        self.http = client_trusting(&self.pem);
        self.base = format!("https://localhost:{}", server.addr.port());
        self.server = Some(server);
    }

    /// Another server over the same namespace beside this one (a second replica): it, its
    /// base URL, and a client trusting it.
    pub async fn another_server(&self) -> (plumb_server::Running, String, reqwest::Client) {
        let server = plumb_server::serve(self.client.clone(), self.config.clone())
            .await
            .expect("a second server starts");
        let base = format!("https://localhost:{}", server.addr.port());
        let http = client_trusting(server.certificate_pem.as_deref().expect("TLS"));
        (server, base, http)
    }

    /// A request with an optional bearer token: (status, JSON body).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        read(req.send().await.expect("request")).await
    }

    /// The server's `/metrics` text (its own plain-HTTP port).
    pub async fn server_metrics(&self) -> String {
        let addr = self
            .server
            .as_ref()
            .and_then(|s| s.metrics_addr)
            .expect("metrics listener");
        reqwest::get(format!("http://{addr}/metrics"))
            .await
            .expect("GET /metrics")
            .text()
            .await
            .expect("metrics text")
    }

    /// The value of one series of `/metrics` (`name{labels}`); 0 when absent.
    pub async fn metric(&self, series: &str) -> u64 {
        let text = self.server_metrics().await;
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or(0)
    }

    /// The server's own origin (`https://localhost:<port>`).
    pub fn origin(&self) -> &str {
        &self.base
    }

    pub async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, Some(token), None)
            .await
    }

    /// `POST /api/v1/session`: (status, body).
    pub async fn try_login(&self, user: &str, password: &str) -> (u16, Value) {
        self.call(
            reqwest::Method::POST,
            "/api/v1/session",
            None,
            Some(&json!({"username": user, "password": password})),
        )
        .await
    }

    pub async fn login(&self, user: &str, password: &str) -> String {
        let (code, body) = self.try_login(user, password).await;
        assert_eq!(code, 200, "login {user}: {body}");
        body["token"].as_str().expect("token").to_string()
    }

    /// The generated admin password.
    pub async fn admin_password(&self) -> String {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), self.ns.name());
        let s = api
            .get("argocd-initial-admin-secret")
            .await
            .expect("argocd-initial-admin-secret exists");
        let data = s.data.expect("data");
        String::from_utf8(data["password"].0.clone()).expect("utf-8")
    }

    pub async fn admin_token(&self) -> String {
        let pw = self.admin_password().await;
        self.login("admin", &pw).await
    }

    /// Merges `data` into a ConfigMap of the namespace (creating it).
    pub async fn set_config_map(&self, name: &str, data: &[(&str, &str)]) {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), self.ns.name());
        let data: BTreeMap<&str, &str> = data.iter().copied().collect();
        if api.get_opt(name).await.expect("read ConfigMap").is_none() {
            let cm: ConfigMap =
                serde_json::from_value(json!({"metadata": {"name": name}})).expect("ConfigMap");
            api.create(&PostParams::default(), &cm)
                .await
                .expect("create ConfigMap");
        }
        // A merge patch: keys set earlier stay.
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"data": data})),
        )
        .await
        .expect("patch ConfigMap");
    }

    /// Sets keys of argocd-secret (as `stringData`).
    pub async fn set_secret(&self, data: &[(&str, &str)]) {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), self.ns.name());
        let data: BTreeMap<&str, &str> = data.iter().copied().collect();
        api.patch(
            "argocd-secret",
            &PatchParams::default(),
            &Patch::Merge(&json!({"stringData": data})),
        )
        .await
        .expect("patch argocd-secret");
    }

    /// An account with a password (bcrypt, as Argo stores it).
    pub async fn add_account(&self, name: &str, capabilities: &str, password: &str) {
        self.set_config_map("argocd-cm", &[(&format!("accounts.{name}"), capabilities)])
            .await;
        let hash = bcrypt::hash(password, 4).expect("bcrypt");
        self.set_secret(&[(&format!("accounts.{name}.password"), &hash)])
            .await;
    }

    /// Replaces `policy.csv` (and `policy.default`).
    pub async fn set_policy(&self, csv: &str, default: &str) {
        self.set_config_map(
            "argocd-rbac-cm",
            &[("policy.csv", csv), ("policy.default", default)],
        )
        .await;
    }
}

/// The claims of a JWT, unverified.
pub fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}
