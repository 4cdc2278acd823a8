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

/// Argo's default `--dex-server`.
pub const DEFAULT_DEX_SERVER: &str = "http://argocd-dex-server:5556";

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
    /// What the binary was built from, for `GET /api/version` (the `plumb` binary stamps it;
    /// [`BuildInfo::unstamped`] otherwise).
    pub build: BuildInfo,
    /// Where the bundled Dex listens (Argo's `--dex-server`, `server.dex.server` of
    /// argocd-cmd-params-cm): `/api/dex` is proxied there and, with `dex.config`, the server
    /// reaches its issuer there.
    pub dex_server: String,
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
            build: BuildInfo::unstamped(),
            dex_server: DEFAULT_DEX_SERVER.to_string(),
        }
    }
}

/// What a binary was built from: the fields of Argo's `VersionMessage` that are about the build.
/// `plumb version` prints the same values the server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildInfo {
    /// The crate version, without `v` (`0.1.0`).
    pub version: String,
    /// The full Git commit, or `unknown` (built outside a Git checkout).
    pub git_commit: String,
    /// `clean`, `dirty` (uncommitted changes at build time) or `unknown`.
    pub git_tree_state: String,
    /// RFC 3339 UTC: `SOURCE_DATE_EPOCH`, else the commit's date, else `unknown`.
    pub build_date: String,
    /// `rustc --version` of the compiler that built it.
    pub rustc_version: String,
}

impl BuildInfo {
    /// Known from the crate alone (a library user that stamps nothing): the version.
    pub fn unstamped() -> Self {
        Self {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            git_commit: "unknown".into(),
            git_tree_state: "unknown".into(),
            build_date: "unknown".into(),
            rustc_version: "unknown".into(),
        }
    }

    /// The first 7 hex digits of the commit, or `unknown`.
    pub fn short_commit(&self) -> &str {
        match self.git_commit.get(..7) {
            Some(short) if self.git_commit.bytes().all(|b| b.is_ascii_hexdigit()) => short,
            _ => "unknown",
        }
    }

    /// Argo's version string: `v0.1.0+1a2b3c4`, `+1a2b3c4.dirty` when the tree was not clean,
    /// `+unknown` without a commit.
    pub fn full_version(&self) -> String {
        let short = self.short_commit();
        let dirty = if short != "unknown" && self.git_tree_state != "clean" {
            ".dirty"
        } else {
            ""
        };
        format!("v{}+{short}{dirty}", self.version)
    }

    /// `linux/amd64`: Go's names of the operating system and architecture, as Argo's `Platform`
    /// prints them.
    pub fn platform() -> String {
        let arch = match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "x86" => "386",
            other => other,
        };
        format!("{}/{arch}", std::env::consts::OS)
    }
}

/// What a tool's version question ([`plumb_source::tool_version`]) gave, as `plumb version` and
/// `GET /api/version` print it: the version, `not found`, or `unknown (why)`; never an error.
pub fn tool_version_text(result: plumb_source::Result<String>) -> String {
    match result {
        Ok(v) if v.is_empty() => "unknown".into(),
        Ok(v) => v,
        Err(plumb_source::Error::ToolMissing { .. }) => "not found".into(),
        Err(e) => {
            let e = e.to_string();
            format!("unknown ({})", e.lines().next().unwrap_or_default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_strings() {
        let mut b = BuildInfo {
            git_commit: "0123456789abcdef0123456789abcdef01234567".into(),
            git_tree_state: "clean".into(),
            ..BuildInfo::unstamped()
        };
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(b.full_version(), format!("v{v}+0123456"));
        b.git_tree_state = "dirty".into();
        assert_eq!(b.full_version(), format!("v{v}+0123456.dirty"));
        assert_eq!(
            BuildInfo::unstamped().full_version(),
            format!("v{v}+unknown")
        );
    }
}
