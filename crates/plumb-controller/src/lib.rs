//! Plumb's application controller: the runtime around `plumb-app`.
//!
//! [`run`] watches `argoproj.io/v1alpha1` Applications, AppProjects and the settings ConfigMap,
//! keeps a live cache of the destination cluster, and for each Application: renders its sources,
//! compares them with the live objects (`plumb_app::observe`), assesses health, writes `status` in Argo
//! CD's shape, runs the sync operation requested on `.operation`, and publishes events and
//! metrics. The comparison and status live in `plumb-app`, which `plumb app diff` and the API server use too, so the CLI
//! and the controller cannot disagree.

mod automation;
mod config;
mod events;
mod metrics;
mod operation;
mod reconcile;
mod runtime;
mod server;
pub mod sharding;
mod shared;
mod watched;
mod windows;

pub use config::{ControllerConfig, parse_duration};
pub use metrics::{AppInfo, Metrics, Timing};
pub use runtime::run;
