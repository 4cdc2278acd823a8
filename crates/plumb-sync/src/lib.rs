//! Plumb's sync engine: turn an Application's compared resources into an ordered plan and run
//! it, as Argo CD's sync engine does.
//!
//! - [`plan`]: phases (PreSync, Sync, PostSync, SyncFail), waves, Argo's kind order, names;
//!   Namespaces and CRDs ahead of what needs them; prunes in reverse wave order, `PruneLast`.
//! - [`run`]: namespace creation, validity and dry run of every task before any change, then each
//!   step in order: prune, recreate hooks (`BeforeHookCreation`), apply (server-side apply, or
//!   `Replace`/`Force`), wait for CRDs to be served, and wait for the step to work (hooks
//!   completed, objects healthy, see [`gate`]) before the next. A failure runs SyncFail hooks.
//! - [`retry`]: Argo's backoff and messages for retried operations (driven by the controller).
//!
//! Results use Argo CD's vocabulary (`Synced`, `SyncFailed`, `Pruned`, `PruneSkipped`, hook
//! phases) and kubectl-style messages (`deployment.apps/api configured`). See `docs/sync.md`.

pub mod gate;
pub mod hook;
mod options;
mod order;
pub mod plan;
pub mod retry;
mod run;
mod task;
mod write;

pub use gate::HealthGate;
pub use options::SyncOptions;
pub use order::kind_rank;
pub use run::{
    Control, NamespaceToCreate, PermissionCheck, Progress, PruneBrake, SyncContext, SyncOutcome,
    SyncRequest, run,
};
pub use task::{SyncTask, TaskSelection};
pub use write::kubectl_name;
