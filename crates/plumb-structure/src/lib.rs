//! The structure check of issue #25: no import circles between the modules of a crate, and no
//! function of non-test code over the length limit unless a `// length: <reason>` comment line
//! sits directly above its doc comment and attributes.
//!
//! ```no_run
//! let analysis = plumb_structure::analyze_workspace(std::path::Path::new(".")).expect("readable");
//! print!("{}", plumb_structure::render(&analysis, 80));
//! ```

mod analyze;
mod attrs;
mod error;
mod functions;
mod graph;
mod model;
mod paths;
mod report;
mod resolve;
mod tree;

pub use analyze::{analyze_sources, analyze_workspace};
pub use error::Error;
pub use model::{Analysis, Circle, CrateReport, EdgeCause, FunctionLen};
pub use report::render;
