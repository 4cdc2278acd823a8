//! What `plumb server`'s ApplicationSet routes and the `plumb appset` commands share, so each
//! operation has one implementation: reading and writing ApplicationSets (Argo's
//! `ApplicationSetService` semantics: validation, create/upsert, delete), the Applications a set
//! owns, the resource tree, the brake's confirmation annotation and pending deletions, and the
//! comparison of a preview with the cluster (`plumb appset diff`).
//!
//! Authorization is the caller's business (the server checks RBAC between these steps; the CLI
//! in core mode has the kubeconfig's rights).

mod confirm;
mod context;
mod diff;
mod error;
mod objects;
mod tree;
mod validate;
mod write;

pub use confirm::{CONFIRM_DELETION, Confirm, confirm_deletion, deletion_held, pending_deletions};
pub use context::{load_repositories, preview_context};
pub use diff::{Changed, FleetDiff, fleet_diff};
pub use error::ApiError;
pub use objects::{
    application_resource, applicationset_resource, owned_applications, project, rbac_object, to_set,
};
pub use tree::{dry_run_resources, resource_tree};
pub use validate::{UNRECOGNIZED, validate, validate_generators};
pub use write::{create, delete, get, same_spec, update};
