//! `plumb cert ...`: Argo CD's `argocd cert` commands (add-ssh, add-tls, list, rm) over
//! `argocd-ssh-known-hosts-cm` and `argocd-tls-certs-cm`. Core mode or through `plumb server`.

mod add_ssh;
mod add_tls;
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

/// Reads `from`, or stdin, at most 1 MiB.
fn read_input(from: Option<&std::path::Path>) -> Result<String> {
    use anyhow::{Context as _, bail};
    use std::io::Read as _;
    const MAX: u64 = 1024 * 1024;
    let mut text = String::new();
    match from {
        Some(p) => std::fs::File::open(p)
            .with_context(|| format!("--from: reading {}", p.display()))?
            .take(MAX + 1)
            .read_to_string(&mut text)
            .with_context(|| format!("--from: reading {} as text", p.display()))?,
        None => std::io::stdin()
            .take(MAX + 1)
            .read_to_string(&mut text)
            .context("reading stdin")?,
    };
    if text.len() as u64 > MAX {
        bail!("the input is larger than {MAX} bytes");
    }
    Ok(text)
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
