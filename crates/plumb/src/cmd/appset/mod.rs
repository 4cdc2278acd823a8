//! `plumb appset ...`: Argo CD's `argocd appset` commands (list, get, create, delete, generate)
//! plus Plumb's `diff` (a preview compared with the cluster) and `confirm-deletion` (the brake).
//! Over the kubeconfig (core mode, `-N` the ApplicationSets' namespace) or through `plumb
//! server` after `plumb login`; both run `plumb_appset::api`'s operations.

mod client;
mod file;
mod preview;
mod read;
#[cfg(test)]
mod snapshot_tests;
mod wait;
mod write;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;
use client::{AppsetClient, Ctx};

/// `plumb appset ...`.
#[derive(Debug, Args)]
pub struct AppsetArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: AppsetCommand,
}

#[derive(Debug, Subcommand)]
#[command(
    after_help = "Examples:\n  # List all the ApplicationSets\n  plumb appset list\n\n  # Preview what a change to an ApplicationSet file does to the fleet\n  plumb appset diff appset.yaml\n\n  # Let the deletions the brake holds go\n  plumb appset confirm-deletion NAME --all"
)]
enum AppsetCommand {
    /// List ApplicationSets.
    List(read::ListArgs),
    /// Get ApplicationSet details.
    Get(read::GetArgs),
    /// Create one or more ApplicationSets from a file.
    Create(write::CreateArgs),
    /// Delete one or more ApplicationSets.
    Delete(write::DeleteArgs),
    /// Print the Applications a local ApplicationSet file would generate.
    Generate(preview::GenerateArgs),
    /// Compare what a local ApplicationSet file generates with the Applications in the cluster
    /// (exit code 1 when they differ).
    Diff(preview::DiffArgs),
    /// Let deletions held by the brake go (the plumb.dev/confirm-deletion annotation).
    ConfirmDeletion(write::ConfirmArgs),
}

/// Runs one `plumb appset` subcommand: through plumb server when a context is set (or
/// --server given), unless --core; else over the kubeconfig.
pub fn run(args: AppsetArgs) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let (client, default_ns) = match crate::cmd::remote::ServerClient::from_flags(&args.server)?
        {
            // The server's control namespace is its default; `-N` only when given otherwise.
            Some(server) => (AppsetClient::Server(server), None),
            None => (
                AppsetClient::connect(&args.conn).await?,
                Some(args.conn.app_namespace.clone()),
            ),
        };
        let ctx = Ctx {
            client,
            default_ns,
            explicit_ns: (args.conn.app_namespace != "argocd")
                .then(|| args.conn.app_namespace.clone()),
        };
        match args.command {
            AppsetCommand::List(a) => read::list(&ctx, a).await,
            AppsetCommand::Get(a) => read::get(&ctx, a).await,
            AppsetCommand::Create(a) => write::create(&ctx, a).await,
            AppsetCommand::Delete(a) => write::delete(&ctx, a).await,
            AppsetCommand::Generate(a) => preview::generate(&ctx, a).await,
            AppsetCommand::Diff(a) => preview::diff(&ctx, a).await,
            AppsetCommand::ConfirmDeletion(a) => write::confirm(&ctx, a).await,
        }
    })
}
