//! How matrix and merge run their child generators: through this trait, implemented by the
//! dispatcher, so the combinators do not import it back.

use futures::future::BoxFuture;
use plumb_model::applicationset::ApplicationSetGenerator;

use crate::error::GeneratorError;
use crate::params::Params;

/// Runs one child generator entry (its selector applied, its template override dropped).
pub trait Children: Sync {
    /// The child's parameter sets, the child rendered with `parent` first when given.
    fn params<'a>(
        &'a self,
        generator: &'a ApplicationSetGenerator,
        parent: Option<&'a Params>,
    ) -> BoxFuture<'a, Result<Vec<Params>, GeneratorError>>;
}
