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
    /// Namespace holding Applications, AppProjects and the settings ConfigMap (default: in a Pod,
    /// the Pod's namespace, as Argo CD's components take it; else argocd).
    #[arg(short = 'n', long = "namespace", env = "PLUMB_NAMESPACE")]
    namespace: Option<String>,
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
    /// Applications reconciled concurrently (Argo CD's status processors).
    #[arg(
        long,
        visible_alias = "status-processors",
        env = "ARGOCD_APPLICATION_CONTROLLER_STATUS_PROCESSORS",
        default_value_t = 4
    )]
    workers: usize,
    /// Operations (syncs) run at once; more wait for a slot, their state already `Running`
    /// (Argo CD's operation processors).
    #[arg(
        long,
        env = "ARGOCD_APPLICATION_CONTROLLER_OPERATION_PROCESSORS",
        default_value_t = 10,
        value_name = "N"
    )]
    operation_processors: usize,
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
    /// Controller replicas sharing the work (Argo CD's ARGOCD_CONTROLLER_REPLICAS). Above 1,
    /// each replica holds the Lease `plumb-controller-shard-<n>` of its shard and reconciles the
    /// Applications of its clusters; a dead replica's clusters move to the survivors within
    /// --lease-duration. See docs/sharding.md.
    #[arg(
        long,
        env = "ARGOCD_CONTROLLER_REPLICAS",
        default_value_t = 1,
        value_name = "N"
    )]
    replicas: usize,
    /// This replica's shard, 0 to replicas-1 (ARGOCD_CONTROLLER_SHARD; a negative value means
    /// unset). Default: the number ending the host name (a StatefulSet pod `...-2` is shard 2).
    #[arg(
        long,
        env = "ARGOCD_CONTROLLER_SHARD",
        value_name = "N",
        allow_negative_numbers = true
    )]
    shard: Option<i64>,
    /// How clusters are spread over the replicas: legacy, round-robin or consistent-hashing
    /// (Argo CD's algorithms). Default: `controller.sharding.algorithm` of argocd-cmd-params-cm,
    /// else legacy.
    #[arg(
        long,
        env = "ARGOCD_CONTROLLER_SHARDING_ALGORITHM",
        value_name = "ALGORITHM"
    )]
    sharding_method: Option<String>,
    /// Spread the Applications of one cluster over the replicas by consistent hashing of their
    /// namespace/name, instead of one cluster per replica (Plumb's own; clusters pinned by the
    /// `shard` of their Secret stay on that shard). Default: `plumb.sharding.applications` of
    /// argocd-cmd-params-cm, else false.
    #[arg(long, env = "PLUMB_SHARD_APPLICATIONS", value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    shard_applications: Option<bool>,
    /// How long a shard Lease stays valid without renewal, in whole seconds (2 or more): the
    /// time within which a dead replica's work moves to the others.
    #[arg(long, default_value_t = 15, value_name = "SECONDS")]
    lease_duration: u64,
    /// Run the ApplicationSet controller beside the Application controller
    /// (`--applicationset=false` turns it off, as leaving out Argo CD's
    /// argocd-applicationset-controller does). Default: `plumb.applicationset.enabled` of
    /// argocd-cmd-params-cm, else on. With --replicas above 1, only the leader (the lowest live
    /// shard) reconciles ApplicationSets.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    applicationset: Option<bool>,
    /// Run the notifications controller (argocd-notifications-cm, the `notifications.argoproj.io`
    /// subscriptions; see docs/notifications.md) beside the Application controller
    /// (`--notifications=false` turns it off). Default: `plumb.notifications.enabled` of
    /// argocd-cmd-params-cm, else on.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    notifications: Option<bool>,
}

/// Runs the controller until it fails, is interrupted or gets SIGTERM.
pub fn run(args: ControllerArgs) -> anyhow::Result<Outcome> {
    let cache_dir = match args.cache_dir {
        Some(d) => d,
        None => super::cache_root()?,
    };
    let mut config = ControllerConfig::new(cache_dir.join("controller"));
    config.control_namespace = args
        .namespace
        .unwrap_or_else(|| super::default_control_namespace(args.kubeconfig.as_deref()));
    config.settings_name = args.settings_configmap;
    config.customizations = args.customizations;
    config.workers = args.workers;
    anyhow::ensure!(
        args.operation_processors >= 1,
        "--operation-processors must be 1 or more"
    );
    config.operation_processors = args.operation_processors;
    config.application_namespaces = args
        .application_namespaces
        .as_deref()
        .map(plumb_app::parse_namespace_list);
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
    anyhow::ensure!(args.replicas >= 1, "--replicas must be 1 or more");
    anyhow::ensure!(
        args.lease_duration >= 2,
        "--lease-duration {} is too short (2 seconds or more)",
        args.lease_duration
    );
    config.sharding = plumb_controller::sharding::ShardingConfig {
        replicas: args.replicas,
        shard: args
            .shard
            .filter(|s| *s >= 0)
            .map(|s| usize::try_from(s).unwrap_or(usize::MAX)),
        algorithm: args.sharding_method,
        applications: args.shard_applications,
        lease_duration: std::time::Duration::from_secs(args.lease_duration),
        identity: None,
    };
    config.applicationset = args.applicationset;
    config.notifications = args.notifications;
    config.source.tools.helm = args.helm;
    config.source.tools.kustomize = args.kustomize;
    config.source.plugins_dir = args.plugin_dir;
    let source = match args.kubeconfig {
        Some(p) => plumb_kube::KubeconfigSource::Path(p),
        None => plumb_kube::KubeconfigSource::Infer,
    };
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    rt.block_on(serve(source, config))?;
    Ok(Outcome::Success)
}

/// Connects and runs the controller until it fails, SIGINT or SIGTERM.
async fn serve(
    source: plumb_kube::KubeconfigSource,
    config: ControllerConfig,
) -> anyhow::Result<()> {
    let client = plumb_kube::connect(&source)
        .await
        .context("connecting to the cluster")?;
    // SIGTERM is how a kubelet stops a Pod; as PID 1 of a container the process would
    // otherwise ignore it and be killed only after the grace period.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("listening for SIGTERM")?;
    tokio::select! {
        r = plumb_controller::run(client, config) => r.context("controller stopped"),
        _ = tokio::signal::ctrl_c() => Ok(()),
        _ = term.recv() => Ok(()),
    }
}
