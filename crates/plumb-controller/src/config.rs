//! How the controller is configured: [`ControllerConfig`], the Argo CD resources it watches, and
//! what it reads at start (the settings ConfigMap, `argocd-cmd-params-cm`) or derives from the
//! settings (render limits, the plugins directory).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use kube::api::Api;
use plumb_model::Settings;

use plumb_app::{CMD_PARAMS_CONFIGMAP, Error, Result};

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// Namespace holding Applications, AppProjects and the settings ConfigMap.
    pub control_namespace: String,
    /// Name of the settings ConfigMap.
    pub settings_name: String,
    /// Where the Git and manifest caches live.
    pub cache_dir: PathBuf,
    /// Argo-layout Lua health directories.
    pub customizations: Vec<PathBuf>,
    /// Reconcile workers (Argo CD's status processors).
    pub workers: usize,
    /// Operations (syncs) run at once; the others wait for a slot with their `Running` state
    /// written (Argo CD's operation processors, 10). Unbounded, a cold start of a thousand
    /// automated Applications sent every sync's requests at once: kube-apiserver then answered
    /// the Service applies 504 (their cluster IP allocation timed out) and every sync crawled.
    pub operation_processors: usize,
    /// `/metrics` and `/healthz` listen address; `None` disables the server.
    pub metrics_addr: Option<SocketAddr>,
    /// Source tools (helm, kustomize) and limits.
    pub source: plumb_source::Config,
    /// Pause between sync waves (Argo CD's `ARGOCD_SYNC_WAVE_DELAY`, 2 s).
    pub sync_wave_delay: Duration,
    /// How often API discovery runs again (30 s): an aggregated API whose backend stops
    /// answering after start is then reported unavailable instead of compared from stale cache,
    /// and a new APIService is seen. A failing watch runs it sooner.
    pub discovery_interval: Duration,
    /// Namespaces besides the control namespace whose Applications are reconciled (Argo CD's
    /// `--application-namespaces`: globs, or regular expressions written `/.../`). `None` reads
    /// the `application.namespaces` key of `argocd-cmd-params-cm` in the control namespace at
    /// start; an empty list (the default there) means the control namespace only.
    pub application_namespaces: Option<Vec<String>>,
    /// Replicas sharing the work through Leases (`--replicas`, `--shard`, ...; one replica by
    /// default: no Lease, everything reconciled here). See docs/sharding.md.
    pub sharding: crate::sharding::ShardingConfig,
    /// Whether the ApplicationSet controller runs beside the Application controller
    /// (`--applicationset`); `None` reads `plumb.applicationset.enabled` of
    /// `argocd-cmd-params-cm` (on unless `"false"`). With several replicas only the leader runs it.
    pub applicationset: Option<bool>,
    /// Whether the notifications controller runs (`--notifications`); `None` reads
    /// `plumb.notifications.enabled` of `argocd-cmd-params-cm` (on unless `"false"`).
    pub notifications: Option<bool>,
}

impl ControllerConfig {
    /// Defaults: namespace `argocd`, ConfigMap `argocd-cm`, 4 workers, 10 operation processors,
    /// metrics on 127.0.0.1:8082.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        let cache_dir = cache_dir.into();
        Self {
            control_namespace: plumb_app::DEFAULT_CONTROL_NAMESPACE.to_string(),
            settings_name: "argocd-cm".to_string(),
            // Every Application on one repository shares a ref listing for a few seconds: a
            // poll wave or a restart lists each repository a handful of times, not once per
            // Application. A refresh annotation or webhook invalidates it at once.
            source: plumb_source::Config::new(cache_dir.clone())
                .ref_cache_ttl(Duration::from_secs(5)),
            cache_dir,
            customizations: Vec::new(),
            workers: 4,
            operation_processors: 10,
            metrics_addr: Some(SocketAddr::from(([127, 0, 0, 1], 8082))),
            sync_wave_delay: Duration::from_secs(2),
            discovery_interval: Duration::from_secs(30),
            application_namespaces: None,
            sharding: crate::sharding::ShardingConfig::default(),
            applicationset: None,
            notifications: None,
        }
    }
}

/// Parses Argo's duration settings (`120s`, `3m`, `1m30s`, `1.5h`, or plain seconds): Go's
/// `time.ParseDuration`, as Argo reads `timeout.reconciliation`.
pub fn parse_duration(v: Option<&str>) -> Option<Duration> {
    plumb_sync::retry::parse_duration(v?)
}

pub(crate) async fn load_settings(
    client: &kube::Client,
    config: &ControllerConfig,
) -> Result<Settings> {
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), &config.control_namespace);
    let cm = api
        .get_opt(&config.settings_name)
        .await
        .map_err(|source| Error::Api {
            what: format!("reading ConfigMap {}", config.settings_name),
            source: Box::new(source),
        })?;
    Ok(cm
        .map(|cm| Settings::from_data(cm.data.unwrap_or_default().into_iter().collect()))
        .unwrap_or_default())
}

/// The data of `argocd-cmd-params-cm` in `control_namespace` (empty when absent).
pub(crate) async fn cmd_params(
    client: &kube::Client,
    control_namespace: &str,
) -> Result<std::collections::BTreeMap<String, String>> {
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client.clone(), control_namespace);
    let cm = api
        .get_opt(CMD_PARAMS_CONFIGMAP)
        .await
        .map_err(|source| Error::Api {
            what: format!("reading ConfigMap {CMD_PARAMS_CONFIGMAP}"),
            source: Box::new(source),
        })?;
    Ok(cm.and_then(|cm| cm.data).unwrap_or_default())
}

/// What the settings refine for the renderer: the configured limits and `--plugin-dir`.
pub(crate) fn render_defaults(
    config: &ControllerConfig,
) -> plumb_app::render_settings::RenderDefaults {
    plumb_app::render_settings::RenderDefaults {
        limits: config.source.limits.clone(),
        plugins_dir: config.source.plugins_dir.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_argo_forms() {
        assert_eq!(parse_duration(Some("120s")), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration(Some("3m")), Some(Duration::from_secs(180)));
        assert_eq!(parse_duration(Some("90")), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration(Some("0")), Some(Duration::ZERO));
        assert_eq!(parse_duration(Some("abc")), None);
        assert_eq!(parse_duration(Some("1m30s")), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration(Some("99999999999999999999999h")), None);
    }
}
