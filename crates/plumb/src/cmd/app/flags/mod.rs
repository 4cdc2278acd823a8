//! Flags shared by several `plumb app` verbs.

pub(crate) mod conn;
