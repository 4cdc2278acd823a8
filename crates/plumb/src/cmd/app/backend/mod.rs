//! The two backends of [`AppClient`](super::client::AppClient): `core` (the kubeconfig and the
//! comparison, plumb-app) and `server` (`plumb server`'s REST API, which also answers some
//! verbs whole), and what both read ([`objects`]).

pub(crate) mod core;
pub(crate) mod objects;
pub(crate) mod server;
