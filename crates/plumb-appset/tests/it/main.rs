//! Integration tests of the ApplicationSet controller against the real control plane.

mod agen_support;
mod argo_controller_fixtures;
mod argo_fixtures;
mod clusters;
mod controller;
mod duck_type;
mod generate;
mod git;
mod plugin;
mod scm_gitea;
mod scm_github;
mod scm_support;
