//! The notifications controller beside the Application controller (Argo CD's
//! argocd-notifications-controller): same kube client, same `/metrics`. Off with
//! `--notifications=false` or `plumb.notifications.enabled: "false"` in argocd-cmd-params-cm;
//! with several replicas only the leader (the lowest live shard) sends.

use std::sync::Arc;

use plumb_notifications::controller as notifications;

use crate::shared::Shared;

/// The argocd-cmd-params-cm key that turns the notifications controller off.
pub const ENABLED_KEY: &str = "plumb.notifications.enabled";

/// Starts the notifications controller unless it is switched off.
pub(super) async fn spawn(shared: &Arc<Shared>) {
    let enabled = match shared.config.notifications {
        Some(on) => on,
        None => match crate::config::cmd_params(&shared.client, &shared.config.control_namespace)
            .await
        {
            Ok(params) => params
                .get(ENABLED_KEY)
                .is_none_or(|v| !matches!(v.trim(), "false" | "0" | "f" | "F" | "FALSE" | "False")),
            Err(e) => {
                tracing::warn!("{e}; the notifications controller runs");
                true
            }
        },
    };
    if !enabled {
        tracing::info!("the notifications controller is off");
        return;
    }
    let mut config = notifications::Config::new(&shared.config.control_namespace);
    if !shared.app_namespaces.is_empty() {
        let (control, patterns) = (
            shared.config.control_namespace.clone(),
            shared.app_namespaces.clone(),
        );
        config.all_namespaces = true;
        config.namespaces = Arc::new(move |ns| {
            ns == control || plumb_policy::project::namespace_in_list(&patterns, ns)
        });
    }
    let sharding = shared.sharding.clone();
    let gate: notifications::Gate = Arc::new(move || sharding.as_ref().is_none_or(|s| s.leads()));
    let (client, metrics) = (shared.client.clone(), shared.metrics.notifications());
    tokio::spawn(async move {
        if let Err(e) = notifications::run(client, config, metrics, gate).await {
            tracing::error!("the notifications controller stopped: {e}");
        }
    });
}
