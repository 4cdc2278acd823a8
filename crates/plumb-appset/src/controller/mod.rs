//! The ApplicationSet controller started by `plumb controller` (Argo CD's
//! `argocd-applicationset-controller`): it watches ApplicationSets, the Applications they own
//! and the cluster Secrets, and reconciles each set from a work queue: generate the desired
//! Applications, create/update/delete the owned ones under the applications sync policy, and
//! write the set's conditions and `status.resources` as Argo does.
//!
//! One reconcile is in [`reconcile`]; the pure parts are [`update`] (what one Application
//! needs), [`conditions`] and [`owner`]; the writes are in `apps` and `status`; the call
//! points for progressive syncs and the deletion brake are in [`hooks`].

mod apps;
pub mod conditions;
pub mod config;
pub mod desired;
mod events;
pub mod hooks;
mod known;
pub mod metrics;
pub mod owner;
mod queue;
mod reconcile;
mod rollout;
mod runtime;
mod status;
pub mod update;
mod watch;

use std::sync::Arc;

pub use config::Config;
pub use metrics::AppSetMetrics;
pub use queue::Queue;
pub use runtime::{Gate, application_resource, applicationset_resource};

use runtime::Runtime;

use crate::Context;

/// Errors that stop the controller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error("{what}: {source}")]
    Api {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: Box<kube::Error>,
    },
    /// An object could not be read.
    #[error("{0}")]
    Decode(String),
}

/// The generators' context for the controller: Git through `git` (the Application controller's
/// renderer: its cache and repository credentials), an HTTP client with the default limits'
/// timeout.
pub fn context(
    client: kube::Client,
    control_namespace: &str,
    git: Arc<dyn crate::GitSource>,
    scm: crate::ScmSettings,
) -> Result<Context, Error> {
    let limits = crate::Limits::default();
    let http = reqwest::Client::builder()
        .timeout(limits.http_timeout)
        .build()
        .map_err(|e| Error::Decode(format!("the HTTP client: {e}")))?;
    Ok(Context {
        client,
        control_namespace: control_namespace.to_string(),
        git,
        http,
        limits,
        scm,
    })
}

/// Runs the controller until a watch cannot be started: watchers and `config.workers`
/// reconciles at a time.
pub async fn run(
    ctx: Context,
    config: Config,
    metrics: AppSetMetrics,
    gate: Gate,
) -> Result<(), Error> {
    let (queue, rx) = Queue::new();
    let rt = Arc::new(Runtime {
        events: events::Events::new(ctx.client.clone()),
        ctx,
        config,
        metrics,
        queue,
        gate,
        sets: known::Known::default(),
    });
    tracing::info!(
        namespace = %rt.config.control_namespace,
        other_namespaces = ?rt.config.namespaces,
        policy = ?rt.config.policy,
        policy_override = rt.config.policy_override,
        "ApplicationSet controller started"
    );
    watch::spawn(&rt);
    reconcile::work(rt, rx).await;
    Ok(())
}
