//! Plumb's application controller.
//!
//! [`run`] watches `argoproj.io/v1alpha1` Applications, AppProjects and the settings ConfigMap,
//! keeps a live cache of the destination cluster, and for each Application: renders its sources,
//! compares them with the live objects ([`compare`]), assesses health, writes `status` in Argo
//! CD's shape, runs the sync operation requested on `.operation`, and publishes events and
//! metrics. [`compare`] is also what `plumb app diff` and `plumb app manifests` use, so the CLI
//! and the controller cannot disagree.

pub mod actions;
mod automation;
mod clusters;
mod compare;
mod config;
mod context;
mod diff_cache;
mod error;
mod events;
mod guard;
mod k8s_requests;
mod metrics;
mod operation;
mod orphans;
mod reconcile;
mod repositories;
pub mod request;
mod runtime;
mod server;
pub mod sharding;
mod shared;
mod status;
mod watched;
mod windows;

pub use clusters::{CLUSTER_SECRET_LABEL, ClusterSecret};
pub use compare::{
    CompareOptions, ComparedResource, Comparison, Refresh, compare, compare_with, images,
};
pub use config::{
    APPLICATION_NAMESPACES_KEY, CMD_PARAMS_CONFIGMAP, ControllerConfig, application_namespaces,
    application_resource, appproject_resource, parse_duration, parse_namespace_list,
};
pub use context::{
    Cluster, DEFAULT_CONTROL_NAMESPACE, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER,
};
pub use diff_cache::{DiffCache, DiffKey, DiffScope, Hit, Probe};
pub use error::{Error, Result, chain};
pub use guard::object_refusal;
pub use metrics::{AppInfo, Metrics, Timing};
pub use repositories::{load as load_repositories, watch as watch_repositories};
pub use runtime::run;
