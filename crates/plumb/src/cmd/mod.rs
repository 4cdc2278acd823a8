//! One module per subcommand. Each exposes a clap `Args` struct and a `run` returning an [`Outcome`].
//!
//! [`Outcome`]: crate::exit::Outcome

pub mod admin_health;
pub mod app;
pub mod render;

use clap::{Args, Subcommand};

use crate::exit::Outcome;

/// `plumb admin ...`: offline tools for operators (add new ones as variants here).
#[derive(Debug, Args)]
pub struct AdminArgs {
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Evaluate object health offline, or run health_test.yaml suites (`health test DIR`).
    Health(admin_health::HealthArgs),
}

/// Runs one `plumb admin` subcommand.
pub fn run_admin(args: AdminArgs) -> anyhow::Result<Outcome> {
    match args.command {
        AdminCommand::Health(args) => admin_health::run(args),
    }
}
