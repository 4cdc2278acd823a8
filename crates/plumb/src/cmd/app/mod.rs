//! `plumb app ...`: Argo CD's `argocd app` commands. Applications are read from the control
//! namespace; operations are requested by writing `.operation` and followed by watching
//! `.status.operationState`, which the controller (`plumb controller`) records. Layouts live in
//! [`crate::output`].
//!
//! - One file per subcommand (`get.rs`, `sync.rs`, ...), listed in [`command`].
//! - [`client`]: the interface every verb calls; [`backend`]: its two implementations, core
//!   mode (the kubeconfig) and `plumb server`.
//! - [`flags`]: the command line several verbs share (connection, source-type and sync-policy
//!   flags, `--resource` selectors, help examples).
//! - What several verbs share: following an operation ([`follow`]), what they print
//!   ([`output`]: header, sync windows, `-o`, the tree), the destination cluster and the live
//!   objects there ([`cluster`]), questions before acting ([`confirm`]), refreshing (`refresh`).

mod actions;
mod backend;
mod client;
mod cluster;
mod command;
mod confirm;
mod create;
mod delete;
mod delete_resource;
mod diff;
mod diff_view;
pub(crate) mod edit;
mod flags;
mod follow;
mod get;
mod go_duration;
mod history;
mod list;
mod logs;
mod manifests;
mod output;
mod patch;
mod patch_resource;
mod refresh;
mod resources;
mod rollback;
mod set;
#[cfg(test)]
mod snapshot_tests;
mod sync;
mod terminate_op;
mod unset;
mod wait;

use anyhow::Result;
use clap::Args;

pub(crate) use backend::objects::{is_not_found, resource};
pub use confirm::prompt::ask_to_proceed;
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
