//! The `status` Plumb writes on an Application: a typed [`StatusPatch`] (a merge patch of the
//! status subresource, serialised once), built from a comparison or a failure, with transition
//! times kept from the previous status and a change test so an unchanged status is not
//! rewritten.

mod build;
mod patch;

pub use build::{
    comparison_error_message, conditions, from_comparison, from_comparison_error, from_failure,
};
pub use patch::{
    HealthPatch, HealthRow, ResourceRow, StatusPatch, Summary, SyncPatch, changes_anything, now,
    replacing,
};
