//! What to render: the format and its options.

use super::external::ExternalDiff;

/// Output format (`--diff-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DiffFormat {
    /// POSIX normal format, as Argo prints with `diff`.
    #[default]
    Normal,
    /// Unified format with three lines of context.
    Unified,
    /// JSON (see [`super::JsonDiff`]).
    Json,
}

/// How to render.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Format.
    pub format: DiffFormat,
    /// Print attribution comment lines after each text block.
    pub attribution: bool,
    /// Run this program instead of the built-in text diff (`KUBECTL_EXTERNAL_DIFF`).
    pub external: Option<ExternalDiff>,
}
