//! `plumb proj ...`: Argo CD's `argocd proj` commands over the user's kubeconfig (like
//! `argocd --core`), or through `plumb server` after `plumb login`. AppProjects live in the control namespace (`-N`, default `argocd`). One file
//! per subcommand; layouts live in [`crate::output::project`].

mod client;
mod command;
mod create;
mod delete;
mod destinations;
mod detail_format;
mod edit;
mod get;
mod integrity;
mod integrity_edit;
mod list;
mod resources;
mod role;
mod set;
#[cfg(test)]
mod snapshot_tests;
mod sources;
mod update;
mod verbs;
mod windows;
mod windows_edit;

use anyhow::Result;
use clap::Args;

pub use client::ProjClient;

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;
use command::ProjCommand;

/// `plumb proj ...`.
#[derive(Debug, Args)]
pub struct ProjArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: ProjCommand,
}

/// Runs one `plumb proj` subcommand on a Tokio runtime.
pub fn run(args: ProjArgs) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        // Through plumb server when a context is set (or --server given), unless --core.
        let client = match crate::cmd::remote::ServerClient::from_flags(&args.server)? {
            Some(server) => ProjClient::through_server(server, &args.conn.app_namespace).await?,
            None => ProjClient::connect(&args.conn).await?,
        };
        match args.command {
            ProjCommand::List(a) => list::run(&client, a).await,
            ProjCommand::Get(a) => get::run(&client, a).await,
            ProjCommand::Create(a) => create::run(&client, *a).await,
            ProjCommand::Delete(a) => delete::run(&client, a).await,
            ProjCommand::Set(a) => set::run(&client, *a).await,
            ProjCommand::Edit(a) => edit::run(&client, a).await,
            ProjCommand::Role(a) => role::run(&client, a).await,
            ProjCommand::Windows(a) => windows::run(&client, a).await,
            ProjCommand::SourceIntegrity(a) => integrity::run(&client, a).await,
            other => verbs::run(&client, other).await,
        }
    })
}
