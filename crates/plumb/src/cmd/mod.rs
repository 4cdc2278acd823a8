//! One module per subcommand. Each exposes a clap `Args` struct and a `run` returning an [`Outcome`].
//!
//! [`Outcome`]: crate::exit::Outcome

pub mod admin_health;
pub mod admin_lint_ignores;
pub mod app;
pub mod controller;
pub mod diff;
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
    /// Audit ignoreDifferences rules for ones that would hide sensitive fields.
    LintIgnores(admin_lint_ignores::LintIgnoresArgs),
}

/// Runs one `plumb admin` subcommand.
pub fn run_admin(args: AdminArgs) -> anyhow::Result<Outcome> {
    match args.command {
        AdminCommand::Health(args) => admin_health::run(args),
        AdminCommand::LintIgnores(args) => admin_lint_ignores::run(args),
    }
}
