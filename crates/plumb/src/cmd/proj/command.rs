//! The `plumb proj` subcommands, one variant per Argo verb.

use clap::Subcommand;

use super::{
    create, delete, destinations, edit, get, integrity, list, resources, role, set, sources,
    windows,
};

#[derive(Debug, Subcommand)]
#[command(
    after_help = "Examples:\n  # List all available projects\n  plumb proj list\n\n  # Create a new project with name PROJECT\n  plumb proj create PROJECT\n\n  # Delete the project with name PROJECT\n  plumb proj delete PROJECT"
)]
pub(super) enum ProjCommand {
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
    /// Edit project.
    Edit(edit::EditArgs),
    /// Manage a project's roles.
    Role(role::RoleArgs),
    /// Manage a project's sync windows.
    Windows(windows::WindowsArgs),
    /// Manage criteria for source integrity.
    SourceIntegrity(integrity::SourceIntegrityArgs),
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
