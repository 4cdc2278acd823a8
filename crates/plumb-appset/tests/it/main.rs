//! Integration tests of the ApplicationSet controller against the real control plane.

mod agen_support;
mod argo_fixtures;
mod clusters;
mod duck_type;
mod generate;
mod git;
mod plugin;
