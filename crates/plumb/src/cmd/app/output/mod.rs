//! What several verbs print: the header's inputs and its sync-window lines, the `-o` formats
//! and the live resource tree.

pub(crate) mod header;
pub(crate) mod output_format;
pub(crate) mod tree_live;
pub(crate) mod windows;
