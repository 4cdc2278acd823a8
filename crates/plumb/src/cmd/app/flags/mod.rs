//! Flags shared by several `plumb app` verbs.

pub(crate) mod conn;
pub(crate) mod source;
pub(crate) mod sync_policy;
