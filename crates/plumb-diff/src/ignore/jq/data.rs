//! Plumb's jaq data kind: the budget charged on every clone of the evaluation context.

use jaq_core::DataT;
use jaq_core::data::HasLut;
use jaq_json::Val;

use super::budget;

/// Plumb's jaq data kind: JSON values, and a context whose every clone is a budget step.
pub(crate) struct Bounded;

impl DataT for Bounded {
    type V<'a> = Val;
    type Data<'a> = Counted<'a>;
}

/// The evaluation context's global data: the lookup table, counted on each clone.
pub(crate) struct Counted<'a>(pub(super) &'a jaq_core::Lut<Bounded>);

impl Clone for Counted<'_> {
    fn clone(&self) -> Self {
        budget::tick();
        Counted(self.0)
    }
}

impl<'a> HasLut<'a, Bounded> for Counted<'a> {
    fn lut(&self) -> &'a jaq_core::Lut<Bounded> {
        self.0
    }
}
