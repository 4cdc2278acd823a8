//! The destination cluster: its server URL and name, and the live objects an Application
//! manages there.

pub(crate) mod destination;
pub(crate) mod managed;
