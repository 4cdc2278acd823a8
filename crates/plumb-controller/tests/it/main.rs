//! The controller against a real control plane and real Git repositories.

mod reconcile;
mod support;
