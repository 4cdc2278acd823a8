//! The API server against a real control plane, a real controller and real Git repositories,
//! through a real HTTPS client.

mod admin_advisories;
mod api;
mod applicationsets;
mod auth;
mod authn;
mod cache;
mod clusters;
mod csrf;
mod customizations;
mod default_project;
mod gpgkeys;
mod grpc;
mod impersonated;
mod listener;
mod live;
mod logs;
mod password;
mod project_admin;
mod project_rbac;
mod project_reads;
mod project_rules;
mod rbac;
mod remote_cluster;
mod repo_checks;
mod repositories;
mod revisions;
mod scoped;
mod sso;
mod sso_gaps;
mod sso_refresh;
mod support;
mod webhook;
