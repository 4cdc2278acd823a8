//! Plumb's ApplicationSet controller: fleets of Applications from generators.
//!
//! The pieces, in the order one reconcile uses them (Argo CD's `applicationset/` package, one
//! concern per module):
//! - [`generators`]: each generator of `spec.generators` turns its configuration (and what it
//!   reads: cluster Secrets, a Git checkout, a forge's API, a plugin service) into parameter sets
//!   ([`Params`]), with matrix/merge combining them and `selector` filtering them;
//! - [`template`]: one parameter set and the Application template (with a generator's override and
//!   `templatePatch`) rendered into an Application, by `{{param}}` substitution or Go templates;
//! - `generate`: the whole ApplicationSet to the list of desired Applications (what `plumb appset
//!   generate` prints and the controller reconciles towards);
//! - `controller`: the runtime started by `plumb controller`: watches, create/update/delete
//!   under the applications sync policy, ownership, status conditions, events, metrics;
//! - `progressive`: `RollingSync` steps; `brake`: deletions held back when a generator's output
//!   shrinks too much (beyond Argo).
//!
//! Everything a generator reads is hostile: [`Context`] bounds sizes, times and counts.

pub mod api;
pub mod brake;
mod context;
pub mod controller;
mod error;
mod generate;
pub mod generators;
mod params;
pub mod progressive;
pub mod template;

pub use context::{Context, GitSource, Limits, ScmSettings};
pub use error::GeneratorError;
pub use generate::{GenerateError, Generated, generate, generate_with};
pub use generators::{ParamSet, generate_params, requeue_after};
pub use params::Params;
