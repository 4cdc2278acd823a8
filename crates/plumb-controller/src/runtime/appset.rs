//! The ApplicationSet controller beside the Application controller: same kube client (and its
//! request counting), same `/metrics`, its own work queue. Off with `--applicationset=false` or
//! `plumb.applicationset.enabled: "false"` in argocd-cmd-params-cm; with several replicas only
//! the leader (the lowest live shard) reconciles sets.

use std::sync::Arc;

use plumb_appset::controller::{self as appset, Gate};

use crate::shared::Shared;

/// Starts the ApplicationSet controller unless it is switched off.
pub(super) async fn spawn(shared: &Arc<Shared>) {
    let params =
        match crate::config::cmd_params(&shared.client, &shared.config.control_namespace).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!("{e}; the ApplicationSet controller runs with Argo CD's defaults");
                Default::default()
            }
        };
    let enabled = shared
        .config
        .applicationset
        .unwrap_or_else(|| appset::config::enabled_in(&params));
    if !enabled {
        tracing::info!("the ApplicationSet controller is off");
        return;
    }
    let config = match appset::Config::from_cmd_params(&shared.config.control_namespace, &params) {
        Ok(c) => c,
        Err(e) => {
            // Argo's controller refuses to start on an unknown policy; the Application
            // controller keeps running.
            tracing::error!("the ApplicationSet controller does not start: {e}");
            return;
        }
    };
    let ctx = match appset::context(
        shared.client.clone(),
        &shared.config.control_namespace,
        shared.renderer.clone(),
        config.scm.clone(),
    ) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("the ApplicationSet controller does not start: {e}");
            return;
        }
    };
    let sharding = shared.sharding.clone();
    let gate: Gate = Arc::new(move || sharding.as_ref().is_none_or(|s| s.leads()));
    let metrics = shared.metrics.appset();
    tokio::spawn(async move {
        if let Err(e) = appset::run(ctx, config, metrics, gate).await {
            tracing::error!("the ApplicationSet controller stopped: {e}");
        }
    });
}
