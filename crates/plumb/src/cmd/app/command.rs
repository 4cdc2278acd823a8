//! The `plumb app` subcommands, and the table that runs each over an [`AppClient`].

use anyhow::Result;
use clap::Subcommand;

use super::client::AppClient;
use super::flags::examples;
use super::{
    actions, create, delete, delete_resource, diff, edit, get, history, list, logs, manifests,
    patch, patch_resource, resources, rollback, set, sync, terminate_op, unset, wait,
};
use crate::exit::Outcome;

#[derive(Debug, Subcommand)]
pub(crate) enum AppCommand {
    /// Show an Application: header, conditions, operation and resources.
    #[command(after_help = examples::GET)]
    Get(get::GetArgs),
    /// List Applications.
    #[command(after_help = examples::LIST)]
    List(list::ListArgs),
    /// Request a sync and follow it to the end.
    #[command(after_help = examples::SYNC)]
    Sync(sync::SyncArgs),
    /// Wait until an Application is synced, healthy and idle (or the named conditions hold).
    #[command(after_help = examples::WAIT)]
    Wait(wait::WaitArgs),
    /// Create an Application from flags or a file.
    #[command(after_help = examples::CREATE)]
    Create(Box<create::CreateArgs>),
    /// Delete an Application (and, with cascade, its resources).
    #[command(after_help = examples::DELETE)]
    Delete(delete::DeleteArgs),
    /// List the resources of an Application.
    #[command(after_help = examples::RESOURCES)]
    Resources(resources::ResourcesArgs),
    /// Stop the running operation of an Application.
    TerminateOp(terminate_op::TerminateOpArgs),
    /// Show what differs between Git and the cluster (exit 1 when something does).
    #[command(after_help = examples::DIFF)]
    Diff(diff::DiffArgs),
    /// Print the manifests of an Application, from Git or from the cluster.
    #[command(after_help = examples::MANIFESTS)]
    Manifests(manifests::ManifestsArgs),
    /// Change an Application's source, destination, project or sync policy.
    #[command(after_help = examples::SET)]
    Set(Box<set::SetArgs>),
    /// Show the deployments recorded in an Application's history.
    #[command(after_help = examples::HISTORY)]
    History(history::HistoryArgs),
    /// Sync back to a deployment from the history (default: the previous one).
    #[command(after_help = examples::ROLLBACK)]
    Rollback(rollback::RollbackArgs),
    /// Unset Helm parameters, values, Kustomize overrides or plugin env of an Application.
    Unset(unset::UnsetArgs),
    /// Print the logs of an Application's Pods.
    Logs(logs::LogsArgs),
    /// Edit an Application's spec in $EDITOR.
    Edit(edit::EditArgs),
    /// Patch an Application (JSON patch or merge patch).
    Patch(patch::PatchArgs),
    /// Manage resource actions (Lua): list them, run one.
    Actions(actions::ActionsArgs),
    /// Patch resource in an application.
    PatchResource(patch_resource::PatchResourceArgs),
    /// Delete resource in an application.
    DeleteResource(delete_resource::DeleteResourceArgs),
}

/// One subcommand over `client` (the kubeconfig's cluster, or a server's Application API).
pub(crate) async fn run(client: &AppClient, command: AppCommand) -> Result<Outcome> {
    match command {
        AppCommand::Get(a) => get::run(client, a).await,
        AppCommand::List(a) => list::run(client, a).await,
        AppCommand::Sync(a) => sync::run(client, a).await,
        AppCommand::Wait(a) => wait::run(client, a).await,
        AppCommand::Create(a) => create::run(client, *a).await,
        AppCommand::Delete(a) => delete::run(client, a).await,
        AppCommand::Resources(a) => resources::run(client, a).await,
        AppCommand::TerminateOp(a) => terminate_op::run(client, a).await,
        AppCommand::Diff(a) => diff::run(client, a).await,
        AppCommand::Manifests(a) => manifests::run(client, a).await,
        AppCommand::Set(a) => set::run(client, *a).await,
        AppCommand::History(a) => history::run(client, a).await,
        AppCommand::Rollback(a) => rollback::run(client, a).await,
        AppCommand::Unset(a) => unset::run(client, a).await,
        AppCommand::Logs(a) => logs::run(client, a).await,
        AppCommand::Edit(a) => edit::run(client, a).await,
        AppCommand::Patch(a) => patch::run(client, a).await,
        AppCommand::Actions(a) => actions::run(client, a).await,
        AppCommand::PatchResource(a) => patch_resource::run(client, a).await,
        AppCommand::DeleteResource(a) => delete_resource::run(client, a).await,
    }
}
