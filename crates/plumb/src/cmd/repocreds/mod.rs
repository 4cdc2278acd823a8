//! `plumb repocreds ...`: Argo CD's `argocd repocreds` commands (add, list, rm): credential
//! templates used by every repository under a URL prefix, as `repo-creds` Secrets. Core mode or
//! through `plumb server`, as `plumb repo`.

mod add;
mod list;
mod rm;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cmd::app::ConnArgs;
use crate::cmd::repo::client;
use crate::exit::Outcome;

/// `plumb repocreds ...`.
#[derive(Debug, Args)]
pub struct RepoCredsArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: RepoCredsCommand,
}

#[derive(Debug, Subcommand)]
enum RepoCredsCommand {
    /// Add a repository connection credential template.
    Add(Box<add::AddArgs>),
    /// List configured repository credentials.
    List(list::ListArgs),
    /// Remove repository credentials.
    Rm(rm::RmArgs),
}

/// Runs one `plumb repocreds` subcommand.
pub fn run(args: RepoCredsArgs) -> Result<Outcome> {
    client::runtime()?.block_on(async move {
        let client = client::AdminClient::connect(&args.conn, &args.server).await?;
        match args.command {
            RepoCredsCommand::Add(a) => add::run(&client, *a).await,
            RepoCredsCommand::List(a) => list::run(&client, a).await,
            RepoCredsCommand::Rm(a) => rm::run(&client, a).await,
        }
    })
}
