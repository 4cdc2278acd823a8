//! Plumb's API server: the front door to the Application API.
//!
//! [`serve`] answers Argo CD's REST gateway paths with Argo CD's JSON shapes, so scripts written
//! against Argo CD's REST API work: Applications (list with `projects`/`selector`/`name`
//! filters, get, create, update, delete), their resource tree, managed resources (live, target,
//! normalized, diff; Secrets masked), manifests and events, sync, rollback and terminate
//! requests, AppProjects, settings, the version, and the watch stream of Applications as
//! newline-delimited JSON or server-sent events.
//!
//! It reads and writes the same objects the controller and the core-mode CLI do (Applications in
//! the control namespace, the settings ConfigMap), writes operations through
//! `plumb_app::request` (as `plumb app sync/rollback` do) and compares through
//! `plumb_app::compare` (as the controller and `plumb app diff` do), so none of them can
//! disagree.
//!
//! The stack is axum on hyper 1 with rustls (ring): TLS with a generated self-signed certificate
//! unless a certificate and key are given, graceful shutdown, and limits on body size, time per
//! request and concurrent requests.

mod app_cache;
mod auth;
mod config;
mod default_project;
mod error;
mod fields;
mod gateway;
mod grpc;
mod local_manifests;
mod metrics;
mod project_rules;
mod rbac;
mod repo_validation;
mod routes;
mod serve;
mod state;
mod tls;
pub mod tree;
mod ui;
mod webhook;

#[doc(hidden)]
pub use auth::sso::cli::{CliDeviceLogin, CliLoginRequest, CliOidc, CliProvider, CliTokens};
pub use auth::sso::provider::BenchVerifier;
pub use auth::{DEFAULT_DEX_SERVER, ThrottleConfig, generate_dex_config};
pub use config::{BuildInfo, Limits, ServerConfig, TlsMode, tool_version_text};
pub use error::{Error, Result};
#[doc(hidden)]
pub use grpc::{
    SERVED as GRPC_SERVED, Served as GrpcServed, contract_bytes as grpc_contract_bytes,
};
pub use serve::{Running, serve};
pub use tls::self_signed;
pub use webhook::sign_sha256_hex;
