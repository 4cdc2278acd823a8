//! What `plumb server` is configured with.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How the server speaks TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsMode {
    /// A certificate generated at start for `localhost` and the given names (Argo CD's default).
    SelfSigned {
        /// Extra DNS names or IP addresses the certificate names.
        names: Vec<String>,
    },
    /// A PEM certificate chain and its private key.
    Files {
        /// Certificate chain (PEM).
        cert: PathBuf,
        /// Private key (PEM: PKCS#8, PKCS#1 or SEC1).
        key: PathBuf,
    },
    /// Plain HTTP (`--insecure`: TLS terminated in front of the server, as Argo's `--insecure`).
    Plaintext,
}

/// Request limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body accepted (413 above it).
    pub max_body_bytes: usize,
    /// Time one request may take (408 after it); watch streams are exempt.
    pub request_timeout: Duration,
    /// Requests served at once; more wait for a free slot.
    pub max_concurrent: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 2 * 1024 * 1024,
            request_timeout: Duration::from_secs(60),
            max_concurrent: 128,
        }
    }
}

/// The server's configuration.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to listen on (Argo's default port is 8080).
    pub listen: SocketAddr,
    /// TLS.
    pub tls: TlsMode,
    /// The namespace holding Applications, AppProjects and the settings ConfigMap.
    pub control_namespace: String,
    /// Limits per request.
    pub limits: Limits,
    /// Source rendering (cache directory, helm and kustomize paths) for managed resources and
    /// manifests: give it the controller's tool paths so the two render alike.
    pub source: plumb_source::Config,
    /// No authentication and no authorization (`--disable-auth`): every caller may do anything.
    pub disable_auth: bool,
    /// Failed-login limits (Argo's `ARGOCD_SESSION_*` variables).
    pub login_throttle: crate::auth::ThrottleConfig,
    /// Where `/metrics` is served (plain HTTP; Argo's port is 8083); `None`: nowhere.
    pub metrics_listen: Option<SocketAddr>,
    /// Namespaces besides the control namespace whose Applications are served (Argo's
    /// `--application-namespaces`: names, globs, `/regexp/`). `None` reads `application.namespaces`
    /// of `argocd-cmd-params-cm` at start, as the controller does.
    pub application_namespaces: Option<Vec<String>>,
    /// Directories of Lua scripts in Argo's `resource_customizations` layout (the controller's
    /// `--customizations`): health for the resource tree and the comparison, actions for the
    /// resource-action routes, after argocd-cm's and before Plumb's built-ins.
    pub customizations: Vec<PathBuf>,
    /// Media types accepted for API request bodies, `;`-separated (Argo's `--api-content-types`;
    /// empty: any). `None` reads `server.api.content.types` of `argocd-cmd-params-cm` at start,
    /// `application/json` when unset. Webhooks are not subject to it.
    pub api_content_types: Option<String>,
}

impl ServerConfig {
    /// Defaults: 0.0.0.0:8080 (no metrics listener), a self-signed certificate, the `argocd` namespace, the source
    /// cache under `cache_dir`.
    pub fn new(cache_dir: PathBuf) -> Self {
        Self {
            listen: SocketAddr::from(([0, 0, 0, 0], 8080)),
            tls: TlsMode::SelfSigned { names: Vec::new() },
            control_namespace: plumb_app::DEFAULT_CONTROL_NAMESPACE.to_string(),
            limits: Limits::default(),
            source: plumb_source::Config::new(cache_dir),
            disable_auth: false,
            login_throttle: crate::auth::ThrottleConfig::default(),
            metrics_listen: None,
            application_namespaces: None,
            customizations: Vec::new(),
            api_content_types: None,
        }
    }
}
