//! `plumb dex`: the bundled Dex's companion, as Argo's `argocd-dex` (cmd/argocd-dex):
//! `rundex` writes Dex's configuration from argocd-cm and argocd-secret
//! (`plumb_server::generate_dex_config`), runs `dex serve` on it and restarts Dex when the
//! configuration changes; `gendexcfg` prints the configuration. The argocd-dex-server
//! Deployment of `deploy/components/dex` runs `plumb dex rundex` in Dex's own image.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;

use crate::exit::Outcome;

#[derive(Debug, Args)]
pub struct DexArgs {
    #[command(subcommand)]
    command: DexCommand,
}

#[derive(Debug, Subcommand)]
enum DexCommand {
    /// Run Dex with the configuration generated from argocd-cm, restarted when it changes.
    Rundex(RundexArgs),
    /// Print the Dex configuration generated from argocd-cm and argocd-secret.
    Gendexcfg(Common),
}

/// Flags both subcommands take.
#[derive(Debug, Args)]
struct Common {
    /// Namespace of argocd-cm and argocd-secret (default: in a Pod, the Pod's namespace; else
    /// argocd).
    #[arg(short = 'n', long = "namespace", env = "PLUMB_NAMESPACE")]
    namespace: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then the in-cluster account).
    #[arg(long, env = "PLUMB_KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// Where Dex listens (plain HTTP; `plumb server --dex-server` points here).
    #[arg(long, default_value = "0.0.0.0:5556", value_name = "HOST:PORT")]
    listen: String,
}

#[derive(Debug, Args)]
struct RundexArgs {
    #[command(flatten)]
    common: Common,
    /// The dex binary (`dex` on PATH in Dex's image).
    #[arg(
        long,
        env = "PLUMB_DEX_BINARY",
        default_value = "dex",
        value_name = "PATH"
    )]
    dex: PathBuf,
    /// Where the configuration is written (Argo's /tmp/dex.yaml).
    #[arg(long, default_value = "/tmp/dex.yaml", value_name = "FILE")]
    config_file: PathBuf,
    /// How often argocd-cm and argocd-secret are read again for changes.
    #[arg(long, default_value = "5", value_name = "SECONDS")]
    poll_interval: u64,
}

pub fn run(args: DexArgs) -> anyhow::Result<Outcome> {
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    match args.command {
        DexCommand::Rundex(a) => rt.block_on(rundex(a)),
        DexCommand::Gendexcfg(c) => rt.block_on(async {
            let (client, ns) = connect(&c).await?;
            match generate(&client, &ns, &c.listen).await? {
                Some(yaml) => print!("{yaml}"),
                None => eprintln!(
                    "dex is not configured (no dex.config or no url in argocd-cm in {ns})"
                ),
            }
            Ok(Outcome::Success)
        }),
    }
}

async fn connect(c: &Common) -> anyhow::Result<(kube::Client, String)> {
    let ns = c
        .namespace
        .clone()
        .unwrap_or_else(|| super::default_control_namespace(c.kubeconfig.as_deref()));
    let source = match &c.kubeconfig {
        Some(p) => plumb_kube::KubeconfigSource::Path(p.clone()),
        None => plumb_kube::KubeconfigSource::Infer,
    };
    let client = plumb_kube::connect(&source)
        .await
        .context("connecting to the cluster")?;
    Ok((client, ns))
}

/// Dex's configuration from the namespace's argocd-cm and argocd-secret (None: not configured).
async fn generate(client: &kube::Client, ns: &str, listen: &str) -> anyhow::Result<Option<String>> {
    let cm = Api::<ConfigMap>::namespaced(client.clone(), ns)
        .get_opt("argocd-cm")
        .await
        .with_context(|| format!("reading ConfigMap {ns}/argocd-cm"))?
        .and_then(|c| c.data)
        .unwrap_or_default();
    let secret: BTreeMap<String, Vec<u8>> = Api::<Secret>::namespaced(client.clone(), ns)
        .get_opt("argocd-secret")
        .await
        .with_context(|| format!("reading Secret {ns}/argocd-secret"))?
        .and_then(|s| s.data)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    plumb_server::generate_dex_config(&cm, &secret, listen)
        .map_err(|why| anyhow::anyhow!("namespace {ns}: {why}"))
}

/// A running `dex serve`, killed when replaced or dropped. Argo sends SIGTERM; Plumb kills
/// (std has no other signal, and a new crate is not worth it): with Dex's usual memory storage
/// a restart forgets the same state either way, and Dex writes nothing that a kill could cut.
struct Running(tokio::process::Child);

impl Running {
    fn start(dex: &std::path::Path, file: &std::path::Path) -> anyhow::Result<Self> {
        let child = tokio::process::Command::new(dex)
            .arg("serve")
            .arg(file)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {} serve {}", dex.display(), file.display()))?;
        Ok(Self(child))
    }

    async fn stop(mut self) {
        let _ = self.0.kill().await;
    }
}

/// Argo's `rundex` loop: (re)start Dex whenever the generated configuration changes; exit
/// non-zero on a configuration error or when Dex itself exits, so the Pod is restarted.
async fn rundex(a: RundexArgs) -> anyhow::Result<Outcome> {
    let (client, ns) = connect(&a.common).await?;
    let interval = Duration::from_secs(a.poll_interval.max(1));
    let mut current: Option<String> = None;
    let mut dex: Option<Running> = None;
    let mut first = true;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("listening for SIGTERM")?;
    loop {
        let next = match generate(&client, &ns, &a.common.listen).await {
            Ok(next) => next,
            Err(e) => {
                if let Some(d) = dex.take() {
                    d.stop().await;
                }
                return Err(e);
            }
        };
        if first || next != current {
            first = false;
            if let Some(d) = dex.take() {
                tracing::info!("dex config modified. restarting dex");
                d.stop().await;
            }
            match &next {
                Some(yaml) => {
                    write_config(&a.config_file, yaml)?;
                    dex = Some(Running::start(&a.dex, &a.config_file)?);
                }
                None => tracing::info!("dex is not configured"),
            }
            current = next;
        }
        let exited = async {
            match dex.as_mut() {
                Some(d) => d.0.wait().await.ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            status = exited => {
                bail!("dex exited ({}); stopping so the Pod is restarted", status.map_or("unknown".into(), |s| s.to_string()));
            }
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = tokio::time::sleep(interval) => {}
        }
    }
    if let Some(d) = dex.take() {
        d.stop().await;
    }
    Ok(Outcome::Success)
}

/// Writes the configuration (it holds client secrets: owner-only).
fn write_config(path: &std::path::Path, yaml: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing the Dex configuration {}", path.display()))?;
    f.write_all(yaml.as_bytes())
        .with_context(|| format!("writing the Dex configuration {}", path.display()))
}
