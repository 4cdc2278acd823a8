//! Core mode (like `argocd --core`): Applications read and written with the user's kubeconfig,
//! comparisons made here with the controller's own comparison (plumb-app).

mod apps;
mod clusters;
pub(crate) mod compare;
mod diff;
mod requests;
mod tree;

pub(crate) use apps::connect;
