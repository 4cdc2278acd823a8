//! `plumb proj ...`: Argo CD's `argocd proj` commands over the user's kubeconfig (like
//! `argocd --core`), or through `plumb server` after `plumb login`. AppProjects live in the control namespace (`-N`, default `argocd`). One file
//! per subcommand; layouts live in [`crate::output::project`].

mod client;
mod create;
mod delete;
mod destinations;
mod detail_format;
mod get;
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
use clap::{Args, Subcommand};

pub use client::ProjClient;

use crate::cmd::app::ConnArgs;
use crate::exit::Outcome;

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

#[derive(Debug, Subcommand)]
#[command(
    after_help = "Examples:\n  # List all available projects\n  plumb proj list\n\n  # Create a new project with name PROJECT\n  plumb proj create PROJECT\n\n  # Delete the project with name PROJECT\n  plumb proj delete PROJECT"
)]
enum ProjCommand {
    /// List projects.
    List(list::ListArgs),
    /// Show a project: destinations, sources, kinds, scoped repositories.
    Get(get::GetArgs),
    /// Create a project from flags or a file.
    Create(Box<create::CreateArgs>),
    /// Delete projects.
    Delete(delete::DeleteArgs),
    /// Set project parameters.
    Set(Box<set::SetArgs>),
    /// Manage a project's roles.
    Role(role::RoleArgs),
    /// Manage a project's sync windows.
    Windows(windows::WindowsArgs),
    /// Add GnuPG signature key to project (DEPRECATED).
    AddSignatureKey(sources::ValueArgs),
    /// Remove GnuPG signature key from project (DEPRECATED).
    RemoveSignatureKey(sources::ValueArgs),
    /// Add project destination.
    AddDestination(destinations::AddDestinationArgs),
    /// Remove project destination.
    RemoveDestination(destinations::RemoveDestinationArgs),
    /// Add project source repository.
    AddSource(sources::ValueArgs),
    /// Remove project source repository.
    RemoveSource(sources::ValueArgs),
    /// Adds a cluster-scoped API resource to the allow list and removes it from deny list.
    AllowClusterResource(resources::ClusterArgs),
    /// Removes a cluster-scoped API resource from the allow list and adds it to deny list.
    DenyClusterResource(resources::ClusterArgs),
    /// Removes a namespaced API resource from the deny list or adds it to the allow list.
    AllowNamespaceResource(resources::NamespacedArgs),
    /// Adds a namespaced API resource to the deny list or removes it from the allow list.
    DenyNamespaceResource(resources::NamespacedArgs),
    /// Add a resource to orphaned ignore list.
    AddOrphanedIgnore(resources::OrphanedArgs),
    /// Remove a resource from orphaned ignore list.
    RemoveOrphanedIgnore(resources::OrphanedArgs),
    /// Add source namespace to the AppProject.
    AddSourceNamespace(sources::ValueArgs),
    /// Removes the source namespace from the AppProject.
    RemoveSourceNamespace(sources::ValueArgs),
    /// Add project destination's default service account.
    AddDestinationServiceAccount(destinations::AddServiceAccountArgs),
    /// Remove default destination service account from the project.
    RemoveDestinationServiceAccount(destinations::RemoveServiceAccountArgs),
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
            ProjCommand::Role(a) => role::run(&client, a).await,
            ProjCommand::Windows(a) => windows::run(&client, a).await,
            other => verbs::run(&client, other).await,
        }
    })
}
