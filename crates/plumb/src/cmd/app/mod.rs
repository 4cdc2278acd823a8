//! `plumb app ...`: Argo CD's `argocd app` commands. Applications are read from the control
//! namespace; operations are requested by writing `.operation` and followed by watching
//! `.status.operationState`, which the controller (`plumb controller`) records. Layouts live in
//! [`crate::output`].
//!
//! - One file per subcommand (`get.rs`, `sync.rs`, ...), listed in [`command`].
//! - [`client`]: the interface every verb calls; [`backend`]: its two implementations, core
//!   mode (the kubeconfig) and `plumb server`.
//! - [`flags`]: flags shared by several verbs.
//! - What several verbs share: following an operation (`waiter`, `spinner`), the header
//!   (`header`, `windows`), the tree (`tree_live`), refreshing (`refresh`), resources picked by
//!   filters (`managed`, `resource_filter`), confirmations (`confirm`, `prune_brake`).

mod actions;
mod backend;
mod client;
mod command;
mod confirm;
mod create;
mod delete;
mod delete_resource;
mod destination;
mod diff;
mod diff_view;
mod edit;
mod examples;
mod flags;
mod get;
mod go_duration;
mod header;
mod history;
mod list;
mod logs;
mod managed;
mod manifests;
mod output_format;
mod patch;
mod patch_resource;
mod prune_brake;
mod refresh;
mod resource_filter;
mod resources;
mod rollback;
mod set;
#[cfg(test)]
mod snapshot_tests;
mod spinner;
mod sync;
mod terminate_op;
mod tree_live;
mod unset;
mod wait;
mod waiter;
mod windows;

use anyhow::Result;
use clap::Args;

pub(crate) use backend::objects::{is_not_found, resource};
pub use flags::conn::ConnArgs;

use crate::exit::Outcome;

/// `plumb app ...`.
#[derive(Debug, Args)]
pub struct AppArgs {
    #[command(flatten)]
    conn: ConnArgs,
    #[command(flatten)]
    server: crate::cmd::remote::ServerFlags,
    #[command(subcommand)]
    command: command::AppCommand,
}

/// Runs one `plumb app` subcommand on a Tokio runtime: through plumb server when a context is
/// set (or --server given), unless --core; else over the kubeconfig.
pub fn run(args: AppArgs) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        if let Some(server) = crate::cmd::remote::ServerClient::from_flags(&args.server)? {
            return backend::server::verbs::run(server, &args.conn, args.command).await;
        }
        let client = backend::core::connect(&args.conn).await?;
        command::run(&client, args.command).await
    })
}
