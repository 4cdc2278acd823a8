//! What `app diff` compares and how it prints it, shared by `app diff`, `app sync
//! --preview-changes` and both backends.

use crate::cmd::diff::DiffFormatArg;

/// What `app diff` compares and how it prints it; `app sync --preview-changes` passes the
/// defaults of `app diff` (with the sync's `--revision`).
#[derive(Debug, Clone)]
pub(crate) struct DiffView {
    /// Compare against this revision instead of the Application's target.
    pub revision: Option<String>,
    /// Render again, bypassing the manifest cache.
    pub hard_refresh: bool,
    /// Print the field-manager lines.
    pub attribution: bool,
    /// Text format of each object's diff.
    pub format: DiffFormatArg,
    /// Render this local directory instead of the repository (`--local`).
    pub local: Option<plumb_source::LocalSource>,
}

impl Default for DiffView {
    fn default() -> Self {
        Self {
            revision: None,
            hard_refresh: false,
            attribution: true,
            format: DiffFormatArg::Normal,
            local: None,
        }
    }
}
