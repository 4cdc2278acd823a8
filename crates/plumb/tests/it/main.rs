//! Integration tests of the `plumb` binary, by topic.

// Test helpers outside #[test] functions panic on bad fixtures, which is what a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod admin_health;
mod app;
mod app_edit_patch;
mod app_history;
mod app_list;
mod app_logs;
mod app_namespaces;
mod app_resource_ops;
mod app_source_flags;
mod appset;
mod appset_server;
mod argo_parity;
mod bench_scale;
mod chart;
mod cli_meta;
mod cluster_cli;
mod cluster_verbs;
mod dex_cli;
mod diff;
mod local_sync;
mod payments_api;
mod previews;
mod proj;
mod proj_edit;
mod proj_integrity;
mod proj_verbs;
mod render;
mod replicas;
mod repo_cli;
mod server_cli;
mod server_parity;
mod sso_cli;
