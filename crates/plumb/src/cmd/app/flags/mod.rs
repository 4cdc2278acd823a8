//! The command line shared by several `plumb app` verbs: flags, `--resource` selectors and
//! the `Examples:` sections of the help.

pub(crate) mod conn;
pub(crate) mod examples;
pub(crate) mod resource_filter;
pub(crate) mod source;
pub(crate) mod sync_policy;
