//! `plumb repo ...`: Argo CD's `argocd repo` commands (add, list, get, rm) over the repository
//! Secrets of the control namespace with the user's kubeconfig (core mode), or through
//! `plumb server` after `plumb login`. One file per verb; [`client`] is what they call, also
//! used by `plumb repocreds` and `plumb cert`.

mod add;
pub mod client;
pub mod flags;
mod get;
mod list;
pub mod output;
mod rm;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;

/// `plumb repo ...`.
#[derive(Debug, Args)]
pub struct RepoArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: RepoCommand,
}

#[derive(Debug, Subcommand)]
enum RepoCommand {
    /// Add git, oci or helm repository connection parameters.
    Add(Box<add::AddArgs>),
    /// List configured repositories.
    List(list::ListArgs),
    /// Get a configured repository by URL.
    Get(get::GetArgs),
    /// Remove configured repositories.
    Rm(rm::RmArgs),
}

/// Runs one `plumb repo` subcommand.
pub fn run(args: RepoArgs) -> Result<Outcome> {
    client::runtime()?.block_on(async move {
        let client = client::AdminClient::connect(&args.conn, &args.server).await?;
        match args.command {
            RepoCommand::Add(a) => add::run(&client, *a).await,
            RepoCommand::List(a) => list::run(&client, a).await,
            RepoCommand::Get(a) => get::run(&client, a).await,
            RepoCommand::Rm(a) => rm::run(&client, a).await,
        }
    })
}
