//! `plumb app ...`: Argo CD's `argocd app` commands over the user's kubeconfig (like
//! `argocd --core`). Applications are read from the control namespace; operations are requested
//! by writing `.operation` and followed by watching `.status.operationState`, which the
//! controller (`plumb controller`) records. One file per subcommand; layouts live in
//! [`crate::output`].

mod actions;
mod client;
mod compare;
mod confirm;
mod create;
mod delete;
mod delete_resource;
mod destination;
mod diff;
mod edit;
mod examples;
mod get;
mod go_duration;
mod history;
mod list;
mod logs;
mod managed;
mod manifests;
mod patch;
mod patch_resource;
mod prune_brake;
mod remote;
mod remote_live;
mod remote_local;
mod resource_filter;
mod resources;
mod rollback;
mod server_watch;
mod set;
#[cfg(test)]
mod snapshot_tests;
mod source_flags;
mod spinner;
mod sync;
mod terminate_op;
mod tree_live;
mod unset;
mod wait;
mod waiter;
mod windows;

use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use futures::StreamExt;
use plumb_model::annotations::REFRESH;
use plumb_model::application::Application;

pub use client::{AppClient, ConnArgs};
pub(crate) use client::{is_not_found, resource};

use crate::exit::Outcome;
use crate::output::wide::HeaderContext;

/// `-o` of `app get`, `app sync` and `app wait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Argo's text layout (header and resource table).
    Wide,
    /// The Application object as JSON.
    Json,
    /// The Application object as YAML.
    Yaml,
    /// The header, then resources with the objects they own.
    Tree,
}

/// `plumb app ...`.
#[derive(Debug, Args)]
pub struct AppArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: AppCommand,
}

#[derive(Debug, Subcommand)]
enum AppCommand {
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

/// Runs one `plumb app` subcommand on a Tokio runtime.
pub fn run(args: AppArgs) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        // Through plumb server when a context is set (or --server given), unless --core.
        if let Some(server) = crate::cmd::remote::ServerClient::from_flags(&args.server)? {
            let through = |server| AppClient::through_server(server, &args.conn);
            return match args.command {
                AppCommand::Get(a) => remote::get(&through(server).await?, a).await,
                AppCommand::List(a) => remote::list(&server, a).await,
                AppCommand::Sync(a) => remote::sync(&through(server).await?, a).await,
                AppCommand::Diff(a) => remote::diff(&through(server).await?, a).await,
                AppCommand::Manifests(a) => remote::manifests(&through(server).await?, a).await,
                AppCommand::Logs(a) => remote_live::logs(&server, a).await,
                AppCommand::Actions(a) => remote_live::actions(&server, a).await,
                AppCommand::PatchResource(a) => remote_live::patch_resource(&server, a).await,
                AppCommand::DeleteResource(a) => remote_live::delete_resource(&server, a).await,
                // The other verbs run as in core mode over the server's Application API.
                command => {
                    let client = AppClient::through_server(server, &args.conn).await?;
                    run_with(&client, command).await
                }
            };
        }
        let client = AppClient::connect(&args.conn).await?;
        run_with(&client, args.command).await
    })
}

/// One subcommand over `client` (the kubeconfig's cluster, or a server's Application API).
async fn run_with(client: &AppClient, command: AppCommand) -> Result<Outcome> {
    {
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
}

/// The header inputs read from the cluster: the UI URL from the settings and, when
/// `with_windows`, the project's sync windows (Argo's `app wait`/`app sync` pass none).
pub(crate) async fn header_context(
    client: &AppClient,
    app: &Application,
    with_windows: bool,
) -> Result<HeaderContext> {
    let settings = client.settings().await?;
    let url = settings
        .get(client::URL_KEY)
        .map(|base| format!("{}/applications/{}", base.trim_end_matches('/'), app.name()));
    let windows = if with_windows {
        let project = client.project(&app.spec.project).await?;
        windows::window_summary(app, project.as_ref())
    } else {
        Default::default()
    };
    Ok(HeaderContext { url, windows })
}

/// The tree view of an Application's resources with their live children.
pub(crate) async fn render_tree(client: &AppClient, app: &Application) -> Result<String> {
    tree_live::render(client, app).await
}

/// Which refresh to ask the controller for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refresh {
    /// Compare again with the latest commit of the target revision.
    Normal,
    /// Also drop cached manifests and render again.
    Hard,
}

/// Sets `argocd.argoproj.io/refresh` and waits until the controller removed it (it does when
/// the refresh is done); `timeout` 0 waits forever. Returns the refreshed Application.
pub(crate) async fn refresh(
    client: &AppClient,
    name: &str,
    kind: Refresh,
    timeout: u64,
) -> Result<Application> {
    let value = match kind {
        Refresh::Normal => "normal",
        Refresh::Hard => "hard",
    };
    client
        .merge_patch(
            name,
            &serde_json::json!({"metadata": {"annotations": {REFRESH: value}}}),
        )
        .await?;
    let mut stream = client.watch(name);
    let wait = async {
        while let Some(event) = stream.next().await {
            match event {
                Ok(Some(app)) if app.metadata.annotation(REFRESH).is_none() => return Ok(app),
                Ok(Some(_)) => {}
                Ok(None) => bail!("application '{name}' was deleted while refreshing"),
                Err(e) => {
                    tracing::warn!("{e:#}; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
        bail!("the watch of Application {name} ended")
    };
    if timeout == 0 {
        wait.await
    } else {
        match tokio::time::timeout(Duration::from_secs(timeout), wait).await {
            Ok(result) => result,
            Err(_) => bail!(
                "timed out ({timeout}s) waiting for the controller to refresh application '{name}' (is `plumb controller` running?)"
            ),
        }
    }
}
