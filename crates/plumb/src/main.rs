//! The `plumb` command line: offline tools (render, diff, health), the Argo-CD-compatible `app`
//! commands, and `plumb controller`.

mod cmd;
mod exit;
mod logging;
mod output;
#[cfg(test)]
mod snapshot;
// The build script's module (`build.rs` includes it too), compiled here for its tests.
#[cfg(test)]
#[allow(dead_code)]
mod stamp;
#[cfg(test)]
mod stamp_tests;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::exit::Outcome;

/// Plumb keeps Kubernetes clusters matching what Git declares, and tells the truth about them.
///
/// Exit codes: 0 success (no difference, condition met); 1 a negative answer (diff found, sync
/// failed, wait timed out or hit Degraded); 2 an error (bad input, cluster unreachable).
#[derive(Debug, Parser)]
#[command(name = "plumb", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Argo CD's `argocd account` commands through plumb server: change a password.
    Account(cmd::account::AccountArgs),
    /// Offline operator tools: health evaluation and health script tests.
    Admin(cmd::AdminArgs),
    /// Argo CD's `argocd app` commands against the cluster of your kubeconfig.
    App(cmd::app::AppArgs),
    /// Argo CD's `argocd appset` commands, plus previews (`generate`, `diff`) and the brake's
    /// `confirm-deletion`.
    Appset(cmd::appset::AppsetArgs),
    /// Run the application controller: reconcile Applications, write status, run syncs.
    Controller(cmd::controller::ControllerArgs),
    /// Print shell completion code for bash, zsh or fish.
    Completion(cmd::completion::CompletionArgs),
    /// Argo CD's `argocd cluster` commands: add, list, get and remove clusters.
    Cluster(cmd::cluster::ClusterArgs),
    /// Switch between or list contexts (servers logged in to).
    Context(cmd::login::ContextArgs),
    /// The bundled Dex (Argo's `argocd-dex`): `rundex` runs Dex with the configuration
    /// generated from argocd-cm, `gendexcfg` prints it.
    Dex(cmd::dex::DexArgs),
    /// Compare desired objects with live objects offline, in `argocd app diff` format.
    Diff(cmd::diff::DiffArgs),
    /// Log in to a plumb server; `plumb app` then goes through it.
    Login(cmd::login::LoginArgs),
    /// Log in again to the current context (its password, or SSO).
    Relogin(cmd::login::ReloginArgs),
    /// Log out of a context (its token is forgotten and revoked).
    Logout(cmd::login::LogoutArgs),
    /// Argo CD's `argocd gpg` commands: the GnuPG public keys signatures are verified with.
    Gpg(cmd::gpg::GpgArgs),
    /// Argo CD's `argocd proj` commands: list, show and create AppProjects, list sync windows.
    Proj(cmd::proj::ProjArgs),
    /// Argo CD's `argocd repo` commands: add, list, get and remove repositories.
    Repo(cmd::repo::RepoArgs),
    /// Argo CD's `argocd repocreds` commands: repository credential templates.
    Repocreds(cmd::repocreds::RepoCredsArgs),
    /// Argo CD's `argocd cert` commands: SSH known hosts and TLS certificates.
    Cert(cmd::cert::CertArgs),
    /// Render the manifests of a Git source or an Application offline.
    Render(cmd::render::RenderArgs),
    /// Run the API server: Argo CD's REST API over the Application API.
    Server(cmd::server::ServerArgs),
    /// Print version information (client, and the controller and API server where reachable).
    Version(cmd::version::VersionArgs),
}

fn main() -> ExitCode {
    // `plumb render-worker ...`: Plumb's own render worker process (plumb_source::worker), started
    // by the renderer for every Jsonnet, helm and kustomize render. Internal, so not a clap
    // subcommand: it must print nothing of its own and start before anything else is set up.
    let mut args = std::env::args_os();
    if args.nth(1).as_deref() == Some(std::ffi::OsStr::new(plumb_source::worker::SUBCOMMAND)) {
        return plumb_source::worker::main(args);
    }
    logging::init();
    let cli = Cli::parse();
    let outcome: anyhow::Result<Outcome> = match cli.command {
        Command::Account(args) => cmd::account::run(args),
        Command::Admin(args) => cmd::run_admin(args),
        Command::App(args) => cmd::app::run(args),
        Command::Appset(args) => cmd::appset::run(args),
        Command::Controller(args) => cmd::controller::run(args),
        Command::Completion(args) => cmd::completion::run(args, Cli::command()),
        Command::Cluster(args) => cmd::cluster::run(args),
        Command::Context(args) => cmd::login::run_context(args),
        Command::Dex(args) => cmd::dex::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Login(args) => cmd::login::run_login(args),
        Command::Relogin(args) => cmd::login::run_relogin(args),
        Command::Logout(args) => cmd::login::run_logout(args),
        Command::Gpg(args) => cmd::gpg::run(args),
        Command::Proj(args) => cmd::proj::run(args),
        Command::Repo(args) => cmd::repo::run(args),
        Command::Repocreds(args) => cmd::repocreds::run(args),
        Command::Cert(args) => cmd::cert::run(args),
        Command::Render(args) => cmd::render::run(args),
        Command::Server(args) => cmd::server::run(args),
        Command::Version(args) => cmd::version::run(args),
    };
    match outcome {
        Ok(o) => o.into(),
        Err(err) => {
            eprintln!("plumb: {err:#}");
            Outcome::Error.into()
        }
    }
}
