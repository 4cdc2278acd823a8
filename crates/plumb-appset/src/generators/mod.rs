//! Generators (owned by the agen helper; this file only carries [`ParamSet`] until theirs lands:
//! when merging, keep agen's file).

use plumb_model::applicationset::ApplicationSetTemplate;

use crate::Params;

/// One parameter set and the template of the generator that produced it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParamSet {
    /// The parameters.
    pub params: Params,
    /// The generator's template override (merged over `spec.template`).
    pub template: Option<ApplicationSetTemplate>,
}
