//! A Helm chart repository for tests: a static file server on 127.0.0.1 (plain HTTP, or HTTPS
//! with a certificate from its own test CA, optionally demanding a client certificate), with
//! optional Basic authentication, redirects, and a log of every request, holding archives made
//! by the real `helm package` and an index made by the real `helm repo index`.
//!
//! ```no_run
//! use plumb_testenv::chart_repo::{ChartRepoServer, Options, chart};
//! let server = ChartRepoServer::start(Options { tls: true, auth: Some(("bot", "s3cret")), ..Default::default() });
//! server.publish(&chart("api", "1.2.3", &[("templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\n")]));
//! let url = server.url(); // https://127.0.0.1:PORT/charts
//! # let _ = url;
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::http_server::{HttpServer, basic_auth};

/// How the server runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Serve HTTPS with a certificate for 127.0.0.1 signed by the server's own CA.
    pub tls: bool,
    /// Demand a client certificate signed by that CA ([`ChartRepoServer::client_identity`]).
    pub client_certs: bool,
    /// Answer 401 unless the request carries exactly this Basic user and password.
    pub auth: Option<(&'static str, &'static str)>,
    /// Listen on this port (0: a free one).
    pub port: u16,
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The path asked for.
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
}

/// The running server; stops when dropped.
pub struct ChartRepoServer {
    tls: bool,
    dir: tempfile::TempDir,
    ca_pem: String,
    client_identity: (String, String),
    shared: Arc<Shared>,
    server: HttpServer,
}

impl std::fmt::Debug for ChartRepoServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChartRepoServer")
            .field("addr", &self.server.addr())
            .field("tls", &self.tls)
            .finish()
    }
}

/// What every request needs: the files, the credentials asked for, the log, the redirects.
struct Shared {
    root: PathBuf,
    expected_auth: Option<String>,
    log: Mutex<Vec<Request>>,
    redirects: Mutex<HashMap<String, String>>,
}

impl ChartRepoServer {
    /// Starts a server whose repository lives at `/charts` (empty until [`Self::publish`]).
    pub fn start(opts: Options) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        std::fs::create_dir_all(dir.path().join("charts")).expect("charts directory");
        let (ca_pem, server_config, client_identity) = tls_material(opts.client_certs);
        let shared = Arc::new(Shared {
            root: dir.path().to_path_buf(),
            expected_auth: opts.auth.map(|(u, p)| basic_auth(u, p)),
            log: Mutex::new(Vec::new()),
            redirects: Mutex::new(HashMap::new()),
        });
        let router = Router::new()
            .fallback(chart_request)
            .with_state(Arc::clone(&shared));
        let tls = opts.tls.then_some(server_config);
        Self {
            tls: opts.tls,
            dir,
            ca_pem,
            client_identity,
            shared,
            server: HttpServer::start(opts.port, tls, router),
        }
    }

    /// The repository URL: `http(s)://127.0.0.1:PORT/charts`.
    pub fn url(&self) -> String {
        format!("{}/charts", self.origin())
    }

    /// `http(s)://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.server.addr())
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.server.addr().port()
    }

    /// The CA certificate (PEM) that signed the server's certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A client certificate and key (PEM) the server accepts when it demands one.
    pub fn client_identity(&self) -> (&str, &str) {
        (&self.client_identity.0, &self.client_identity.1)
    }

    /// The directory served at `/charts`.
    pub fn charts_dir(&self) -> PathBuf {
        self.dir.path().join("charts")
    }

    /// Packages the chart directory `chart` with `helm package` into the repository and
    /// rewrites `index.yaml` with `helm repo index` (relative URLs, as `helm repo index` writes
    /// them without `--url`).
    pub fn publish(&self, chart: &Path) {
        helm(&[
            "package",
            &chart.display().to_string(),
            "-d",
            &self.charts_dir().display().to_string(),
        ]);
        self.reindex();
    }

    /// Runs `helm repo index` over the repository directory again.
    pub fn reindex(&self) {
        helm(&["repo", "index", &self.charts_dir().display().to_string()]);
    }

    /// Writes a file into the repository as is (a hand-made index, a tampered archive).
    pub fn put(&self, name: &str, data: &[u8]) {
        std::fs::write(self.charts_dir().join(name), data).expect("writing a repository file");
    }

    /// Answers `path` with a 302 to `location`.
    pub fn redirect(&self, path: &str, location: &str) {
        self.shared
            .redirects
            .lock()
            .expect("redirects")
            .insert(path.to_owned(), location.to_owned());
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.log.lock().expect("log").clone()
    }
}

/// A chart directory (in a temporary directory kept for the test's life) named `name` at
/// `version`, with `files` (paths relative to the chart).
pub fn chart(name: &str, version: &str, files: &[(&str, &str)]) -> PathBuf {
    chart_with(name, version, "", files)
}

/// [`chart`] with extra `Chart.yaml` text (`dependencies:` ...).
pub fn chart_with(
    name: &str,
    version: &str,
    chart_yaml_extra: &str,
    files: &[(&str, &str)],
) -> PathBuf {
    let root = tempfile::tempdir().expect("temporary directory").keep();
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("chart directory");
    std::fs::write(
        dir.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: {version}\n{chart_yaml_extra}"),
    )
    .expect("Chart.yaml");
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("directories");
        std::fs::write(p, text).expect("chart file");
    }
    dir
}

fn helm(args: &[&str]) {
    let home = tempfile::tempdir().expect("temporary directory");
    let out = Command::new(crate::tools::helm())
        .args(args)
        .env("HELM_CACHE_HOME", home.path().join("cache"))
        .env("HELM_CONFIG_HOME", home.path().join("config"))
        .env("HELM_DATA_HOME", home.path().join("data"))
        .output()
        .expect("running helm");
    assert!(
        out.status.success(),
        "helm {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server configuration for 127.0.0.1 signed by it (asking for a client certificate
/// when `client_certs`), and a client certificate and key (PEM) it signed.
pub(crate) fn tls_material(
    client_certs: bool,
) -> (String, Arc<rustls::ServerConfig>, (String, String)) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "plumb test chart repository CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("CA certificate");
    let leaf_key = rcgen::KeyPair::generate().expect("server key");
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .expect("server params")
        .signed_by(&leaf_key, &ca)
        .expect("server certificate");
    let client_key = rcgen::KeyPair::generate().expect("client key");
    let mut client_params =
        rcgen::CertificateParams::new(Vec::<String>::new()).expect("client params");
    client_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "plumb-test-client");
    let client = client_params
        .signed_by(&client_key, &ca)
        .expect("client certificate");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .expect("protocol versions");
    let builder = if client_certs {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).expect("CA as a root");
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .expect("client verifier");
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let config = builder
        .with_single_cert(
            vec![CertificateDer::from(leaf.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .expect("server TLS configuration");
    (
        ca.pem(),
        Arc::new(config),
        (client.pem(), client_key.serialize_pem()),
    )
}

/// Any request, logged: a redirect when one is set for the path, else 401 without the expected
/// credentials, else the file under the served directory (404 when there is none).
async fn chart_request(State(shared): State<Arc<Shared>>, request: HttpRequest) -> Response {
    let path = request.uri().path().to_owned();
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    shared.log.lock().expect("log").push(Request {
        path: path.clone(),
        authorization: authorization.clone(),
    });
    let redirect = shared
        .redirects
        .lock()
        .expect("redirects")
        .get(&path)
        .cloned();
    if let Some(location) = redirect {
        return (StatusCode::FOUND, [(header::LOCATION, location)]).into_response();
    }
    if shared
        .expected_auth
        .as_ref()
        .is_some_and(|e| authorization.as_deref() != Some(e.as_str()))
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"charts\"")],
        )
            .into_response();
    }
    match read_file(&shared.root, &path).await {
        Some(data) => Body::from(data).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The file at `path` under `root`; none for a path with `..` or an empty segment.
async fn read_file(root: &Path, path: &str) -> Option<Vec<u8>> {
    let rel = path.trim_start_matches('/');
    if rel.split('/').any(|p| p == ".." || p.is_empty()) {
        return None;
    }
    tokio::fs::read(root.join(rel)).await.ok()
}
