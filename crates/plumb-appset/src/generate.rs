//! PLACEHOLDER written by asurf so the API and CLI compile before agen's generators land: the
//! signature of the plan's `generate`. agen's `generate.rs` replaces this file at merge (take
//! theirs); nothing here is meant to stay.

use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;

use crate::Context;

/// What one ApplicationSet generates.
#[derive(Debug, Default)]
pub struct Generated {
    /// The desired Applications, in a deterministic order.
    pub applications: Vec<Application>,
    /// Generator or template errors: when non-empty nothing is deleted.
    pub errors: Vec<GenerateError>,
}

/// One generator or template error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GenerateError(pub String);

/// The Applications `set` generates.
pub async fn generate(set: &ApplicationSet, _ctx: &Context) -> Generated {
    Generated {
        applications: Vec::new(),
        errors: vec![GenerateError(format!(
            "ApplicationSet {}: generators are not available in this build",
            set.name()
        ))],
    }
}
