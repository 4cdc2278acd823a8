//! The controller process: watches Applications, AppProjects and the settings ConfigMap, keeps a
//! live cache of the in-cluster destination, and reconciles Applications from a deduplicating
//! work queue on a few workers. Triggers: any change of an Application (spec, operation, refresh
//! annotation), of its project, of the settings, of a tracked live object, and a periodic poll
//! (`timeout.reconciliation` plus jitter) that also picks up new commits.
//!
//! Here: the order of start-up; the start-up itself is in `setup`, the watchers in `watchers`,
//! the workers in `workers`, the configuration in `crate::config`, the state the tasks share in
//! `crate::shared`.

use crate::config::ControllerConfig;
use plumb_app::IN_CLUSTER_SERVER;
use plumb_app::Result;

mod appset;
mod in_cluster;
mod notifications;
mod setup;
mod watchers;
mod workers;

/// Runs the controller until an unrecoverable error.
pub async fn run(client: kube::Client, config: ControllerConfig) -> Result<()> {
    // Every request to the in-cluster API server counted (argocd_app_k8s_request_total).
    let client = plumb_app::k8s_requests::counted(client, IN_CLUSTER_SERVER);
    let started = setup::start(client, config).await?;
    let shared = started.shared;
    setup::serve_metrics(&shared).await?;
    // Once, beside the start: an outdated CRD is reported, not fatal.
    tokio::spawn(plumb_app::crd_check::check_and_report(
        shared.client.clone(),
        shared.metrics.crd_gauge(),
        "controller",
    ));
    // Nothing is listed before the scope is known (the cluster Secrets, read at start).
    let ready = in_cluster::apply(&shared, started.in_cluster).await?;
    in_cluster::wait_until_listed(&shared, ready).await;

    watchers::spawn_cluster_watcher(shared.clone());
    watchers::spawn_app_watcher(shared.clone(), started.apps_cache);
    watchers::spawn_project_watcher(shared.clone(), started.projects_cache);
    watchers::spawn_settings_watcher(shared.clone());
    watchers::spawn_repository_watcher(shared.clone());
    watchers::spawn_gpg_keys_watcher(shared.clone());
    watchers::spawn_poller(shared.clone());
    watchers::spawn_rediscovery(shared.clone());
    watchers::spawn_shard_membership(&shared);
    appset::spawn(&shared).await;
    notifications::spawn(&shared).await;

    workers::run(shared, started.queue).await
}
