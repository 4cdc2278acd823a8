//! What the controller's tasks share, and the resources they read and write.

use std::sync::Arc;

use kube::api::ApiResource;

use super::config::Config;
use super::events;
use super::known::Known;
use super::metrics::AppSetMetrics;
use super::queue::Queue;
use crate::Context;

/// Decides whether this process reconciles sets now (with several controller replicas: only
/// the leader); checked before each reconcile.
pub type Gate = Arc<dyn Fn() -> bool + Send + Sync>;

/// What the tasks of the controller share.
pub(crate) struct Runtime {
    pub(crate) ctx: Context,
    pub(crate) config: Config,
    pub(crate) metrics: AppSetMetrics,
    pub(crate) events: events::Events,
    pub(crate) queue: Queue,
    pub(crate) gate: Gate,
    pub(crate) sets: Known,
}

/// The `argoproj.io/v1alpha1` applicationsets resource.
pub fn applicationset_resource() -> ApiResource {
    resource("ApplicationSet", "applicationsets")
}

/// The `argoproj.io/v1alpha1` applications resource.
pub fn application_resource() -> ApiResource {
    resource("Application", "applications")
}

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "argoproj.io".into(),
        version: "v1alpha1".into(),
        api_version: "argoproj.io/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}
