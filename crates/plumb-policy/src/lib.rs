//! Plumb's guard rails, as pure functions of the objects they judge (no cluster access):
//!
//! - [`project`]: what an AppProject permits (source repositories, destinations, cluster- and
//!   namespace-scoped kinds, source namespaces), with messages that name the rule;
//! - [`windows`]: sync windows (cron schedule, duration, time zone, selectors) and whether an
//!   automated or manual sync may run now;
//! - [`brake`]: the brake on mass deletion (how many objects an automated prune may delete);
//! - [`impersonation`]: the ServiceAccount a sync runs as (`destinationServiceAccounts`);
//! - [`source_integrity`]: which signature check a Git repository's revisions must pass.
//!
//! The controller enforces both before any apply and on every reconcile; the CLI uses the same
//! functions to show what the controller will decide.

pub mod brake;
pub mod impersonation;
mod pattern;
pub mod project;
pub mod source_integrity;
pub mod windows;
