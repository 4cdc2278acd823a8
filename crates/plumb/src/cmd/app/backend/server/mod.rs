//! Through `plumb server` (when a context is set or `--server` is given, unless `--core`): its
//! REST API (Argo CD's paths) with the context's token; no kubeconfig is read. The server also
//! answers some verbs whole ([`verbs`]): it reads, renders and compares, so no local helm or
//! kustomize are needed, and the answer is the controller's.

mod apps;
mod diff;
mod live;
mod routes;
mod settings;
pub(crate) mod verbs;
mod watch;
