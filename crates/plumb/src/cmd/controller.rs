//! `plumb controller`: run the application controller (Argo CD's application-controller).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use plumb_controller::ControllerConfig;

use crate::exit::Outcome;

/// Flags of `plumb controller`.
#[derive(Debug, Args)]
pub struct ControllerArgs {
    /// Namespace holding Applications, AppProjects and the settings ConfigMap.
    #[arg(
        short = 'n',
        long = "namespace",
        env = "PLUMB_NAMESPACE",
        default_value = "argocd"
    )]
    namespace: String,
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster account).
    #[arg(long, env = "PLUMB_KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// Name of the settings ConfigMap (argocd-cm keys).
    #[arg(long, default_value = "argocd-cm")]
    settings_configmap: String,
    /// Directory for the Git and manifest caches (default: $XDG_CACHE_HOME/plumb or ~/.cache/plumb).
    #[arg(long, env = "PLUMB_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Directory of Lua health scripts in Argo's resource_customizations layout (repeatable).
    #[arg(long = "customizations")]
    customizations: Vec<PathBuf>,
    /// Applications reconciled concurrently.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Address of the /metrics and /healthz endpoint; "off" disables it.
    #[arg(long, default_value = "127.0.0.1:8082")]
    metrics_addr: String,
    /// The helm binary.
    #[arg(long, env = "PLUMB_HELM", default_value = "helm")]
    helm: PathBuf,
    /// The kustomize binary.
    #[arg(long, env = "PLUMB_KUSTOMIZE", default_value = "kustomize")]
    kustomize: PathBuf,
    /// Directory of config management plugin files (Argo CD `ConfigManagementPlugin` YAML:
    /// `*.yaml` and `*/plugin.yaml`); the settings key `plumb.plugins.dir` overrides it.
    #[arg(long, env = "PLUMB_PLUGIN_DIR", value_name = "DIR")]
    plugin_dir: Option<PathBuf>,
    /// Pause between sync waves, in seconds (Argo CD's ARGOCD_SYNC_WAVE_DELAY).
    #[arg(
        long,
        env = "ARGOCD_SYNC_WAVE_DELAY",
        default_value_t = 2.0,
        value_name = "SECONDS"
    )]
    sync_wave_delay: f64,
    /// How often API discovery runs again, in seconds (sooner after a watch fails): an
    /// aggregated API that stops answering is reported, one that comes back is compared again.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    discovery_interval: f64,
    /// Namespaces besides --namespace whose Applications are reconciled, comma-separated: names,
    /// globs (`team-*`, `*`) or regular expressions written `/.../` (Argo CD's
    /// --application-namespaces). An Application there is reconciled only when its AppProject's
    /// `sourceNamespaces` lists the namespace too. Default: `application.namespaces` of the
    /// `argocd-cmd-params-cm` ConfigMap in --namespace (none when absent).
    #[arg(long, env = "ARGOCD_APPLICATION_NAMESPACES", value_name = "NAMESPACES")]
    application_namespaces: Option<String>,
}

/// Runs the controller until it fails or is interrupted.
pub fn run(args: ControllerArgs) -> anyhow::Result<Outcome> {
    let cache_dir = match args.cache_dir {
        Some(d) => d,
        None => super::cache_root()?,
    };
    let mut config = ControllerConfig::new(cache_dir.join("controller"));
    config.control_namespace = args.namespace;
    config.settings_name = args.settings_configmap;
    config.customizations = args.customizations;
    config.workers = args.workers;
    config.application_namespaces = args
        .application_namespaces
        .as_deref()
        .map(plumb_controller::parse_namespace_list);
    anyhow::ensure!(
        args.sync_wave_delay.is_finite() && args.sync_wave_delay >= 0.0,
        "--sync-wave-delay {} is not a number of seconds",
        args.sync_wave_delay
    );
    config.sync_wave_delay = std::time::Duration::from_secs_f64(args.sync_wave_delay);
    anyhow::ensure!(
        args.discovery_interval.is_finite() && args.discovery_interval >= 1.0,
        "--discovery-interval {} is not a number of seconds (1 or more)",
        args.discovery_interval
    );
    config.discovery_interval = std::time::Duration::from_secs_f64(args.discovery_interval);
    config.metrics_addr =
        if args.metrics_addr == "off" {
            None
        } else {
            Some(args.metrics_addr.parse::<SocketAddr>().with_context(|| {
                format!("--metrics-addr {:?} is not host:port", args.metrics_addr)
            })?)
        };
    config.source.tools.helm = args.helm;
    config.source.tools.kustomize = args.kustomize;
    config.source.plugins_dir = args.plugin_dir;
    let source = match args.kubeconfig {
        Some(p) => plumb_kube::KubeconfigSource::Path(p),
        None => plumb_kube::KubeconfigSource::Infer,
    };
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    rt.block_on(async move {
        let client = plumb_kube::connect(&source)
            .await
            .context("connecting to the cluster")?;
        tokio::select! {
            r = plumb_controller::run(client, config) => r.context("controller stopped"),
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })?;
    Ok(Outcome::Success)
}
