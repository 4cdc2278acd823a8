//! Unified diff output (`--diff-format unified`): three lines of context, `--- live` and
//! `+++ desired` headers.

use similar::TextDiff;

/// The unified diff of `old` (live) and `new` (desired), empty when equal.
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}
