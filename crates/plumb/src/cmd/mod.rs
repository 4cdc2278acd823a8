//! One module per subcommand. Each exposes a clap `Args` struct and a `run` returning an [`Outcome`].
//!
//! [`Outcome`]: crate::exit::Outcome

pub mod account;
pub mod admin_health;
pub mod admin_lint_ignores;
pub mod app;
pub mod appset;
pub mod cert;
pub mod cluster;
pub mod completion;
pub mod controller;
pub mod dex;
pub mod diff;
pub mod gpg;
pub mod login;
pub mod proj;
pub mod remote;
pub mod render;
pub mod repo;
pub mod repocreds;
pub mod server;
pub mod version;

use clap::{Args, Subcommand};

use crate::exit::Outcome;

/// Where Plumb keeps its caches: `$PLUMB_CACHE_DIR`, else `$XDG_CACHE_HOME/plumb`, else
/// `~/.cache/plumb`. Each command uses its own subdirectory.
pub fn cache_root() -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context as _;
    if let Some(d) = std::env::var_os("PLUMB_CACHE_DIR") {
        return Ok(d.into());
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
        .map(|d| d.join("plumb"))
        .context(
            "no PLUMB_CACHE_DIR, XDG_CACHE_HOME or HOME to keep caches in; give a cache directory",
        )
}

/// Where a Pod's ServiceAccount namespace is mounted.
const POD_NAMESPACE_FILE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The control namespace of `plumb controller` and `plumb server` without `--namespace`: in a
/// Pod (no kubeconfig given, the ServiceAccount's namespace file mounted) the Pod's own
/// namespace, which is where `kustomize edit set namespace` or `helm install -n` put the install
/// and where Argo CD's components look; else `argocd`.
pub fn default_control_namespace(kubeconfig: Option<&std::path::Path>) -> String {
    let in_pod = kubeconfig.is_none() && std::env::var_os("KUBECONFIG").is_none();
    in_pod
        .then(|| std::fs::read_to_string(POD_NAMESPACE_FILE).ok())
        .flatten()
        .map(|ns| ns.trim().to_owned())
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| "argocd".to_owned())
}

/// `plumb admin ...`: offline tools for operators (add new ones as variants here).
#[derive(Debug, Args)]
pub struct AdminArgs {
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Evaluate object health offline, or run health_test.yaml suites (`health test DIR`).
    Health(admin_health::HealthArgs),
    /// Audit ignoreDifferences rules for ones that would hide sensitive fields.
    LintIgnores(admin_lint_ignores::LintIgnoresArgs),
}

/// Runs one `plumb admin` subcommand.
pub fn run_admin(args: AdminArgs) -> anyhow::Result<Outcome> {
    match args.command {
        AdminCommand::Health(args) => admin_health::run(args),
        AdminCommand::LintIgnores(args) => admin_lint_ignores::run(args),
    }
}
