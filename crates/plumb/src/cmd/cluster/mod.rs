//! `plumb cluster ...`: Argo CD's `argocd cluster` commands. Clusters are the Argo CD cluster
//! Secrets of the control namespace (`-N`, default `argocd`), written with the user's
//! kubeconfig (core mode) or through `plumb server` after `plumb login` (its ClusterService).
//! `add` installs Argo's `argocd-manager` ServiceAccount in the target cluster first. One file
//! per concern: [`client`] (the two back ends), [`add`] (with [`kubeconfig`] and [`spec`]),
//! [`show`] (list, get, rm), [`edit`] (set, rotate-auth).

mod add;
mod client;
mod edit;
mod kubeconfig;
mod show;
mod spec;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;

pub use client::ClusterClient;

/// `plumb cluster ...`.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: ClusterCommand,
}

#[derive(Debug, Subcommand)]
enum ClusterCommand {
    /// argocd cluster add CONTEXT
    Add(Box<add::AddArgs>),
    /// List configured clusters
    List(show::ListArgs),
    /// Get cluster information
    Get(show::GetArgs),
    /// Remove cluster credentials
    Rm(show::RmArgs),
    /// Set cluster information
    Set(edit::SetArgs),
    /// argocd cluster rotate-auth SERVER/NAME
    RotateAuth(edit::RotateArgs),
}

/// Runs one `plumb cluster` subcommand on a Tokio runtime.
pub fn run(args: ClusterArgs) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let namespace = args
            .conn
            .control_namespace
            .clone()
            .unwrap_or_else(|| args.conn.app_namespace.clone());
        let client = match crate::cmd::remote::ServerClient::from_flags(&args.server)? {
            Some(server) => ClusterClient::through_server(server),
            None => ClusterClient::connect(&args.conn, &namespace).await?,
        };
        match args.command {
            ClusterCommand::Add(a) => add::run(&client, &args.conn, *a).await,
            ClusterCommand::List(a) => show::list(&client, a).await,
            ClusterCommand::Get(a) => show::get(&client, a).await,
            ClusterCommand::Rm(a) => show::rm(&client, &args.conn, a).await,
            ClusterCommand::Set(a) => edit::set(&client, a).await,
            ClusterCommand::RotateAuth(a) => edit::rotate_auth(&client, a).await,
        }
    })
}
