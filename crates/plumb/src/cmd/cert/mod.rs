//! `plumb cert ...`: Argo CD's `argocd cert` commands (add-ssh, add-tls, list, rm) over
//! `argocd-ssh-known-hosts-cm` and `argocd-tls-certs-cm`. Core mode or through `plumb server`.

mod add_ssh;
mod add_tls;
mod input;
mod list;
mod rm;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cmd::app::ConnArgs;
use crate::cmd::repo::client;
use crate::exit::Outcome;

/// `plumb cert ...`.
#[derive(Debug, Args)]
pub struct CertArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: CertCommand,
}

#[derive(Debug, Subcommand)]
enum CertCommand {
    /// Add SSH known host entries for repository servers.
    AddSsh(add_ssh::AddSshArgs),
    /// Add TLS certificate data for connecting to repository server SERVERNAME.
    AddTls(add_tls::AddTlsArgs),
    /// List configured certificates.
    List(list::ListArgs),
    /// Remove certificate of TYPE for REPOSERVER.
    Rm(rm::RmArgs),
}

/// Runs one `plumb cert` subcommand.
pub fn run(args: CertArgs) -> Result<Outcome> {
    client::runtime()?.block_on(async move {
        let client = client::AdminClient::connect(&args.conn, &args.server).await?;
        match args.command {
            CertCommand::AddSsh(a) => add_ssh::run(&client, a).await,
            CertCommand::AddTls(a) => add_tls::run(&client, a).await,
            CertCommand::List(a) => list::run(&client, a).await,
            CertCommand::Rm(a) => rm::run(&client, a).await,
        }
    })
}
