//! Plumb's sync engine: turn an Application's compared resources into tasks and run them.
//!
//! A sync applies what Git declares with server-side apply (field manager `plumb-controller`,
//! forced conflicts), prunes tracked objects Git no longer declares only when asked, and records a
//! result per resource in Argo CD's vocabulary (`Synced`, `SyncFailed`, `Pruned`, `PruneSkipped`,
//! with kubectl-style messages such as `deployment.apps/api configured`).
//!
//! The order of work follows Argo CD: every task is dry-run on the server first and a single
//! failure fails the sync before anything changes; then objects are applied in Argo's kind order
//! (namespaces and CRDs first), then pruned. Waves, hooks and health gates between waves build on
//! this plan (see `docs/sync.md`).

mod options;
mod order;
mod run;
mod task;

pub use options::SyncOptions;
pub use order::kind_rank;
pub use run::{NamespaceToCreate, SyncOutcome, SyncRequest, run};
pub use task::{SyncTask, TaskSelection};
