//! The hostile-input suite: one test per attack on Plumb's trust boundary (docs/security.md).
//!
//! Whoever can push to a repository, edit an Application or write an ignore rule or health script
//! is untrusted. Each module holds the attacks of one class and checks that Plumb refuses them with
//! a clear error, stays bounded, and leaks nothing.

// Test helpers outside #[test] functions panic on bad fixtures, which is what a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod actions;
mod advisories;
mod appset_bodies;
mod appset_generators;
mod chart_repos;
mod cluster_secrets;
mod credential_sweep;
mod duplicate_keys;
mod edits;
mod evaluation;
mod git_credentials;
mod gpg_keys;
mod guards;
mod kustomize_build_options;
mod lfs_endpoints;
mod limits;
mod mass_deletion;
mod oci_registries;
mod plugins;
mod project;
mod project_bodies;
mod renders;
mod repo_cli_files;
mod repo_reads;
mod repository_secrets;
mod running;
mod secrets;
mod server;
mod sharding;
mod spec_values;
mod sso;
mod webhooks;
