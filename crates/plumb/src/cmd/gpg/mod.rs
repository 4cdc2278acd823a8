//! `plumb gpg ...`: Argo CD's `argocd gpg` commands (the GnuPG public keys of
//! `argocd-gpg-keys-cm` that AppProject `sourceIntegrity` and `signatureKeys` are verified with), over the user's
//! kubeconfig (like `argocd --core`) or through `plumb server` after `plumb login`. One file per
//! subcommand.

mod add;
mod client;
mod format;
mod get;
mod list;
mod rm;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;
pub(crate) use client::GpgClient;

/// `plumb gpg ...`.
#[derive(Debug, Args)]
pub struct GpgArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: GpgCommand,
}

#[derive(Debug, Subcommand)]
enum GpgCommand {
    /// List configured GPG public keys.
    List(list::ListArgs),
    /// Get the GPG public key with ID KEYID.
    Get(get::GetArgs),
    /// Adds a GPG public key to the server's keyring.
    Add(add::AddArgs),
    /// Removes a GPG public key from the server's keyring.
    Rm(rm::RmArgs),
}

/// Runs one `plumb gpg` subcommand on a Tokio runtime.
pub fn run(args: GpgArgs) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let client = match crate::cmd::remote::ServerClient::from_flags(&args.server)? {
            Some(server) => GpgClient::Server(server),
            None => GpgClient::connect(&args.conn).await?,
        };
        match args.command {
            GpgCommand::List(a) => list::run(&client, a).await,
            GpgCommand::Get(a) => get::run(&client, a).await,
            GpgCommand::Add(a) => add::run(&client, a).await,
            GpgCommand::Rm(a) => rm::run(&client, a).await,
        }
    })
}
