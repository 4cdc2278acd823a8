//! `plumb server`: run the API server (Argo CD's argocd-server REST API over the same objects
//! the controller and the core-mode CLI use).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use plumb_server::{Limits, ServerConfig, TlsMode};

use crate::exit::Outcome;

/// Flags of `plumb server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Namespace holding Applications, AppProjects and the settings ConfigMap (default: in a Pod,
    /// the Pod's namespace, as Argo CD's components take it; else argocd).
    #[arg(short = 'n', long = "namespace", env = "PLUMB_NAMESPACE")]
    namespace: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster account).
    #[arg(long, env = "PLUMB_KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:8080", value_name = "HOST:PORT")]
    listen: SocketAddr,
    /// Address of the /metrics endpoint (plain HTTP, Argo's port 8083); "off" disables it.
    #[arg(long, default_value = "0.0.0.0:8083", value_name = "HOST:PORT|off")]
    metrics_addr: String,
    /// Serve plain HTTP (TLS terminated in front of the server), as argocd-server's --insecure.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    insecure: bool,
    /// TLS certificate chain (PEM); without it a self-signed certificate is generated.
    #[arg(long, requires = "tls_key", value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// Extra DNS name or IP address of the generated certificate (repeatable).
    #[arg(long = "tls-name", value_name = "NAME")]
    tls_names: Vec<String>,
    /// Serve without authentication and authorization: every caller may do everything
    /// (argocd-server's --disable-auth). For local use on loopback only.
    #[arg(long)]
    disable_auth: bool,
    /// Namespaces besides --namespace whose Applications are served, comma-separated names,
    /// globs or /regexp/ (Argo CD's --application-namespaces; give the controller the same).
    /// Default: `application.namespaces` of argocd-cmd-params-cm in --namespace.
    #[arg(long, env = "ARGOCD_APPLICATION_NAMESPACES", value_name = "NAMESPACES")]
    application_namespaces: Option<String>,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = 2 * 1024 * 1024, value_name = "BYTES")]
    max_body_bytes: usize,
    /// Time one request may take, in seconds (watch streams are exempt).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    request_timeout: u64,
    /// Requests served at once.
    #[arg(long, default_value_t = 128)]
    max_concurrent: usize,
    /// Directory for the Git and manifest caches (default: $XDG_CACHE_HOME/plumb or ~/.cache/plumb).
    #[arg(long, env = "PLUMB_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// The helm binary (use the controller's, so both render alike).
    #[arg(long, env = "PLUMB_HELM", default_value = "helm")]
    helm: PathBuf,
    /// The kustomize binary (use the controller's, so both render alike).
    #[arg(long, env = "PLUMB_KUSTOMIZE", default_value = "kustomize")]
    kustomize: PathBuf,
    /// Directory of config management plugin files (Argo CD `ConfigManagementPlugin` YAML), the
    /// controller's --plugin-dir, so plugin Applications render alike; argocd-cm's
    /// `plumb.plugins.dir` overrides it.
    #[arg(long, env = "PLUMB_PLUGIN_DIR", value_name = "DIR")]
    plugin_dir: Option<PathBuf>,
    /// Directory of Lua health and action scripts in Argo's resource_customizations layout, the
    /// controller's --customizations (repeatable): the API's resource tree, comparison and
    /// resource actions use them as the controller and `plumb app actions` do.
    #[arg(long = "customizations", value_name = "DIR")]
    customizations: Vec<PathBuf>,
    /// Where the bundled Dex listens, for `dex.config` single sign-on: `/api/dex` is proxied
    /// there (argocd-server's --dex-server and its variable).
    #[arg(long, env = "ARGOCD_SERVER_DEX_SERVER", default_value = plumb_server::DEFAULT_DEX_SERVER, value_name = "URL")]
    dex_server: String,
}

/// Runs the server until SIGINT or SIGTERM, then shuts down gracefully.
pub fn run(args: ServerArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.request_timeout > 0,
        "--request-timeout must be at least 1 second"
    );
    anyhow::ensure!(
        args.max_concurrent > 0,
        "--max-concurrent must be at least 1"
    );
    let cache_dir = match args.cache_dir {
        Some(d) => d,
        None => super::cache_root()?,
    };
    let mut config = ServerConfig::new(cache_dir.join("server"));
    config.listen = args.listen;
    config.metrics_listen =
        if args.metrics_addr == "off" {
            None
        } else {
            Some(args.metrics_addr.parse::<SocketAddr>().with_context(|| {
                format!("--metrics-addr {:?} is not host:port", args.metrics_addr)
            })?)
        };
    config.control_namespace = args
        .namespace
        .unwrap_or_else(|| super::default_control_namespace(args.kubeconfig.as_deref()));
    config.tls = match (args.insecure, args.tls_cert, args.tls_key) {
        (true, _, _) => TlsMode::Plaintext,
        (false, Some(cert), Some(key)) => TlsMode::Files { cert, key },
        _ => TlsMode::SelfSigned {
            names: args.tls_names,
        },
    };
    config.limits = Limits {
        max_body_bytes: args.max_body_bytes,
        request_timeout: Duration::from_secs(args.request_timeout),
        max_concurrent: args.max_concurrent,
    };
    config.disable_auth = args.disable_auth;
    config.dex_server = args.dex_server;
    config.application_namespaces = args
        .application_namespaces
        .as_deref()
        .map(plumb_app::parse_namespace_list);
    config.login_throttle = plumb_server::ThrottleConfig::from_env();
    // Argo's variable for `server.api.content.types` (set, even empty, it wins over the
    // ConfigMap, which the server reads at start otherwise).
    config.api_content_types = std::env::var("ARGOCD_API_CONTENT_TYPES").ok();
    config.source.tools.helm = args.helm;
    config.source.tools.kustomize = args.kustomize;
    config.source.plugins_dir = args.plugin_dir;
    config.customizations = args.customizations;
    config.build = super::version::build_info();
    let source = match args.kubeconfig {
        Some(p) => plumb_kube::KubeconfigSource::Path(p),
        None => plumb_kube::KubeconfigSource::Infer,
    };
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    rt.block_on(async move {
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        let server = plumb_server::serve(client, config)
            .await
            .context("starting the server")?;
        eprintln!("plumb server listening on {}", server.addr);
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("listening for SIGTERM")?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        server.shutdown().await;
        anyhow::Ok(())
    })?;
    Ok(Outcome::Success)
}
