//! The controller's Prometheus metrics, on the `prometheus-client` library, with Argo CD's names
//! and labels where Argo has the metric (`argocd_app_info`, `argocd_app_sync_total`,
//! `argocd_app_reconcile`, `argocd_git_request_total`, `argocd_cluster_info`,
//! `argocd_app_k8s_request_total`) and Plumb's own
//! under `plumb_`. Served by [`crate::server`] on `/metrics`.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Plumb's duration buckets (seconds).
const BUCKETS: &[f64] = &[0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
/// Argo's `argocd_app_reconcile` buckets (seconds).
const ARGO_RECONCILE_BUCKETS: &[f64] = &[0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];

/// One Application's `argocd_app_info` series.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct AppInfo {
    /// Application name.
    pub name: String,
    /// Application namespace.
    pub namespace: String,
    /// Project.
    pub project: String,
    /// The (first) source's repository URL, credentials removed.
    pub repo: String,
    /// Destination server URL.
    pub dest_server: String,
    /// Destination namespace.
    pub dest_namespace: String,
    /// Sync status.
    pub sync_status: String,
    /// Health status.
    pub health_status: String,
    /// The operation in progress: `sync`, `delete` or empty.
    pub operation: String,
    /// Whether automated sync is on (`true`/`false`).
    pub autosync_enabled: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct SyncLabels {
    name: String,
    namespace: String,
    project: String,
    phase: String,
    dest_server: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReconcileLabels {
    namespace: String,
    dest_server: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct GitLabels {
    request_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    request: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ServerLabels {
    server: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ClusterLabels {
    server: String,
    name: String,
    k8s_version: String,
}

/// Which of Plumb's own histograms a duration goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// `plumb_app_reconcile_duration_seconds`.
    Reconcile,
    /// `plumb_app_render_duration_seconds`.
    Render,
    /// `plumb_app_sync_duration_seconds`.
    Sync,
}

/// The controller's metrics and readiness.
pub struct Metrics {
    registry: Registry,
    argo: ArgoFamilies,
    current: Mutex<BTreeMap<(String, String), AppInfo>>,
    timings: Timings,
    source: SourceEngine,
    caches: CacheSizes,
    crds: plumb_app::crd_check::CrdGauge,
    appset: plumb_appset::controller::AppSetMetrics,
    notifications: plumb_notifications::Metrics,
    apps_synced: AtomicBool,
    live_cache_synced: AtomicBool,
}

/// The metrics Argo CD has, with its names and labels.
struct ArgoFamilies {
    app_info: Family<AppInfo, Gauge>,
    sync_total: Family<SyncLabels, Counter>,
    reconcile: Family<ReconcileLabels, Histogram>,
    git_requests: Family<GitLabels, Counter>,
    clusters: Family<ClusterLabels, Gauge>,
}

/// Plumb's duration histograms ([`Timing`]).
struct Timings {
    reconcile: Histogram,
    render: Histogram,
    sync: Histogram,
}

/// Plumb's source engine counters.
struct SourceEngine {
    renders: Counter,
    git_requests: Family<RequestLabels, Counter>,
    renders_by_result: Family<ResultLabels, Counter>,
    manifest_memory: Gauge,
}

/// The sizes of each cluster's caches.
struct CacheSizes {
    live_objects: Family<ServerLabels, Gauge>,
    diff_results: Family<ServerLabels, Gauge>,
    diff_bytes: Family<ServerLabels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric registered, none observed yet.
    pub fn new() -> Self {
        // Registered in this order, which is the order of the exposition.
        let mut registry = Registry::default();
        let argo = ArgoFamilies::register(&mut registry);
        let timings = Timings::register(&mut registry);
        let source = SourceEngine::register(&mut registry);
        let caches = CacheSizes::register(&mut registry);
        let crds = plumb_app::crd_check::register_gauge(&mut registry);
        let appset = plumb_appset::controller::AppSetMetrics::register(&mut registry);
        let notifications = plumb_notifications::Metrics::register(&mut registry);
        Self {
            registry,
            argo,
            current: Mutex::new(BTreeMap::new()),
            timings,
            source,
            caches,
            crds,
            appset,
            notifications,
            apps_synced: AtomicBool::new(false),
            live_cache_synced: AtomicBool::new(false),
        }
    }

    /// `plumb_crd_outdated`, set by the start-up CRD check.
    pub fn crd_gauge(&self) -> plumb_app::crd_check::CrdGauge {
        self.crds.clone()
    }

    fn current(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), AppInfo>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records an Application's current statuses (its previous series is dropped, so each
    /// Application has exactly one `argocd_app_info` series).
    pub fn set_app(&self, info: AppInfo) {
        let key = (info.namespace.clone(), info.name.clone());
        let mut current = self.current();
        if let Some(old) = current.get(&key)
            && *old != info
        {
            self.argo.app_info.remove(old);
        }
        self.argo.app_info.get_or_create(&info).set(1);
        current.insert(key, info);
    }

    /// Forgets a deleted Application.
    pub fn remove_app(&self, namespace: &str, name: &str) {
        if let Some(old) = self
            .current()
            .remove(&(namespace.to_string(), name.to_string()))
        {
            self.argo.app_info.remove(&old);
        }
    }

    /// Counts a finished sync operation (`argocd_app_sync_total`).
    pub fn sync_finished(
        &self,
        namespace: &str,
        name: &str,
        project: &str,
        phase: &str,
        dest_server: &str,
    ) {
        self.argo
            .sync_total
            .get_or_create(&SyncLabels {
                name: name.to_string(),
                namespace: namespace.to_string(),
                project: project.to_string(),
                phase: phase.to_string(),
                dest_server: dest_server.to_string(),
            })
            .inc();
    }

    /// Records a full reconcile (`argocd_app_reconcile` and Plumb's histogram).
    pub fn reconciled(&self, namespace: &str, dest_server: &str, d: Duration) {
        let secs = d.as_secs_f64();
        self.argo
            .reconcile
            .get_or_create(&ReconcileLabels {
                namespace: namespace.to_string(),
                dest_server: dest_server.to_string(),
            })
            .observe(secs);
        self.timings.reconcile.observe(secs);
    }

    /// Records a duration in one of Plumb's histograms.
    pub fn observe(&self, timing: Timing, d: Duration) {
        let h = match timing {
            Timing::Reconcile => &self.timings.reconcile,
            Timing::Render => &self.timings.render,
            Timing::Sync => &self.timings.sync,
        };
        h.observe(d.as_secs_f64());
    }

    /// Brings the Git request counters up to the source engine's totals (it counts; the
    /// metrics follow).
    pub fn git_totals(&self, fetches: u64, listings: u64, renders: u64) {
        for (kind, total) in [("fetch", fetches), ("ls-remote", listings)] {
            let c = self.argo.git_requests.get_or_create(&GitLabels {
                request_type: kind.to_string(),
            });
            raise_to(&c, total);
        }
        raise_to(&self.source.renders, renders);
    }

    /// Brings every source engine counter up to the renderer's totals: Argo's
    /// `argocd_git_request_total`, Plumb's `plumb_git_requests_total`, `plumb_renders_total` by
    /// result, and the manifest memory gauge.
    pub fn source_totals(&self, renderer: &plumb_source::Renderer) {
        let git = renderer.git();
        let (fetches, listings) = (git.fetch_count(), git.listing_count());
        self.git_totals(fetches, listings, renderer.render_count());
        for (kind, total) in [("fetch", fetches), ("ls-remote", listings)] {
            let c = self.source.git_requests.get_or_create(&RequestLabels {
                request: kind.to_string(),
            });
            raise_to(&c, total);
        }
        for (result, total) in [
            ("rendered", renderer.render_count()),
            ("cached", renderer.cached_count()),
            ("skipped", renderer.skipped_count()),
        ] {
            let c = self.source.renders_by_result.get_or_create(&ResultLabels {
                result: result.to_string(),
            });
            raise_to(&c, total);
        }
        self.source
            .manifest_memory
            .set(i64::try_from(renderer.memory_cache_bytes()).unwrap_or(i64::MAX));
    }

    /// The sizes of a cluster's caches.
    pub fn cluster_caches(&self, cluster: &plumb_app::Cluster) {
        let labels = ServerLabels {
            server: cluster.server.clone(),
        };
        let set = |family: &Family<ServerLabels, Gauge>, n: usize| {
            family
                .get_or_create(&labels)
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        };
        if let Some(live) = &cluster.live {
            set(&self.caches.live_objects, live.len());
        }
        set(&self.caches.diff_results, cluster.diff_cache.len());
        set(&self.caches.diff_bytes, cluster.diff_cache.bytes());
    }

    /// Records a connected cluster (`argocd_cluster_info`).
    pub fn cluster(&self, server: &str, name: &str, k8s_version: &str) {
        self.argo
            .clusters
            .get_or_create(&ClusterLabels {
                server: server.to_string(),
                name: name.to_string(),
                k8s_version: k8s_version.to_string(),
            })
            .set(1);
    }

    /// The Application watcher has listed every Application.
    pub fn set_apps_synced(&self, synced: bool) {
        self.apps_synced.store(synced, Ordering::Relaxed);
    }

    /// The live cache of the in-cluster destination has its initial lists.
    pub fn set_live_cache_synced(&self) {
        self.live_cache_synced.store(true, Ordering::Relaxed);
    }

    /// What keeps the controller from being ready; empty when it is.
    pub fn not_ready(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if !self.live_cache_synced.load(Ordering::Relaxed) {
            missing.push("live cache not synced");
        }
        if !self.apps_synced.load(Ordering::Relaxed) {
            missing.push("Application watch not synced");
        }
        missing
    }

    /// The notifications controller's metrics (`argocd_notifications_*`), served here too.
    pub fn notifications(&self) -> plumb_notifications::Metrics {
        self.notifications.clone()
    }

    /// The ApplicationSet controller's metrics (`argocd_appset_*`), served here too.
    pub fn appset(&self) -> plumb_appset::controller::AppSetMetrics {
        self.appset.clone()
    }

    /// The OpenMetrics text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!("encoding metrics: {e}");
        }
        out
    }
}

impl ArgoFamilies {
    fn register(registry: &mut Registry) -> Self {
        let app_info = Family::<AppInfo, Gauge>::default();
        registry.register(
            "argocd_app_info",
            "Information about application.",
            app_info.clone(),
        );
        let sync_total = Family::<SyncLabels, Counter>::default();
        registry.register(
            "argocd_app_sync",
            "Number of application syncs.",
            sync_total.clone(),
        );
        let reconcile = Family::<ReconcileLabels, Histogram>::new_with_constructor(
            argo_reconcile_histogram as fn() -> Histogram,
        );
        registry.register(
            "argocd_app_reconcile",
            "Application reconciliation performance in seconds.",
            reconcile.clone(),
        );
        let git_requests = Family::<GitLabels, Counter>::default();
        registry.register(
            "argocd_git_request",
            "Number of git requests performed by repo server",
            git_requests.clone(),
        );
        registry.register(
            "argocd_app_k8s_request",
            "Number of kubernetes requests executed during application reconciliation.",
            plumb_app::k8s_requests::K8S_REQUESTS.clone(),
        );
        let clusters = Family::<ClusterLabels, Gauge>::default();
        registry.register(
            "argocd_cluster_info",
            "Information about cluster.",
            clusters.clone(),
        );
        ArgoFamilies {
            app_info,
            sync_total,
            reconcile,
            git_requests,
            clusters,
        }
    }
}

impl Timings {
    fn register(registry: &mut Registry) -> Self {
        let reconcile = Histogram::new(BUCKETS.iter().copied());
        registry.register(
            "plumb_app_reconcile_duration_seconds",
            "Time to reconcile an Application (render, compare, status write).",
            reconcile.clone(),
        );
        let render = Histogram::new(BUCKETS.iter().copied());
        registry.register(
            "plumb_app_render_duration_seconds",
            "Time to fetch and render an Application's sources.",
            render.clone(),
        );
        let sync = Histogram::new(BUCKETS.iter().copied());
        registry.register(
            "plumb_app_sync_duration_seconds",
            "Time to run a sync operation.",
            sync.clone(),
        );
        Timings {
            reconcile,
            render,
            sync,
        }
    }
}

impl SourceEngine {
    fn register(registry: &mut Registry) -> Self {
        let renders = Counter::default();
        registry.register(
            "plumb_render",
            "Renders run by the source engine (cache misses).",
            renders.clone(),
        );
        let git_requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "plumb_git_requests",
            "Requests to Git servers by the source engine: ref listings (ls-remote) and fetches, shared by every Application on a repository.",
            git_requests.clone(),
        );
        let renders_by_result = Family::<ResultLabels, Counter>::default();
        registry.register(
            "plumb_renders",
            "Sources asked for by comparisons: rendered, served from the manifest cache at the same commit (cached), or at a new commit that changed nothing they read (skipped).",
            renders_by_result.clone(),
        );
        let manifest_memory = Gauge::default();
        registry.register(
            "plumb_manifest_cache_memory_bytes",
            "Bytes of rendered manifests held in memory (compact JSON).",
            manifest_memory.clone(),
        );
        SourceEngine {
            renders,
            git_requests,
            renders_by_result,
            manifest_memory,
        }
    }
}

impl CacheSizes {
    fn register(registry: &mut Registry) -> Self {
        let live_objects = Family::<ServerLabels, Gauge>::default();
        registry.register(
            "plumb_live_cache_objects",
            "Objects in a cluster's live cache (full bodies for tracked objects, metadata for the rest).",
            live_objects.clone(),
        );
        let diff_results = Family::<ServerLabels, Gauge>::default();
        registry.register(
            "plumb_diff_cache_results",
            "Server-side diff results kept for a cluster (one per live object at most).",
            diff_results.clone(),
        );
        let diff_bytes = Family::<ServerLabels, Gauge>::default();
        registry.register(
            "plumb_diff_cache_memory_bytes",
            "Bytes of server-side diff results kept for a cluster (the objects' JSON text and an estimate of the rest).",
            diff_bytes.clone(),
        );
        CacheSizes {
            live_objects,
            diff_results,
            diff_bytes,
        }
    }
}

fn argo_reconcile_histogram() -> Histogram {
    Histogram::new(ARGO_RECONCILE_BUCKETS.iter().copied())
}

fn raise_to(c: &Counter, total: u64) {
    let now = c.get();
    if total > now {
        c.inc_by(total - now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(sync: &str) -> AppInfo {
        AppInfo {
            name: "payments-api".into(),
            namespace: "argocd".into(),
            project: "default".into(),
            repo: "https://git.acme.internal/apps/payments".into(),
            dest_server: "https://kubernetes.default.svc".into(),
            dest_namespace: "payments".into(),
            sync_status: sync.into(),
            health_status: "Healthy".into(),
            operation: String::new(),
            autosync_enabled: "false".into(),
        }
    }

    #[test]
    fn one_info_series_per_application_with_argo_labels() {
        let m = Metrics::new();
        m.set_app(info("OutOfSync"));
        m.set_app(info("Synced"));
        let text = m.render();
        let series: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("argocd_app_info{"))
            .collect();
        assert_eq!(series.len(), 1, "{text}");
        for label in [
            "name=\"payments-api\"",
            "namespace=\"argocd\"",
            "project=\"default\"",
            "repo=\"https://git.acme.internal/apps/payments\"",
            "dest_server=\"https://kubernetes.default.svc\"",
            "dest_namespace=\"payments\"",
            "sync_status=\"Synced\"",
            "health_status=\"Healthy\"",
            "operation=\"\"",
        ] {
            assert!(series[0].contains(label), "{label} in {}", series[0]);
        }
        m.remove_app("argocd", "payments-api");
        assert!(!m.render().contains("argocd_app_info{"));
    }

    #[test]
    fn histograms_counters_and_readiness() {
        let m = Metrics::new();
        m.reconciled(
            "argocd",
            "https://kubernetes.default.svc",
            Duration::from_millis(300),
        );
        m.sync_finished(
            "argocd",
            "payments-api",
            "default",
            "Succeeded",
            "https://kubernetes.default.svc",
        );
        m.git_totals(2, 5, 1);
        m.git_totals(3, 5, 1);
        let text = m.render();
        assert!(text.contains("argocd_app_reconcile_bucket{le=\"0.25\",namespace=\"argocd\",dest_server=\"https://kubernetes.default.svc\"} 0")
            || text.contains("argocd_app_reconcile_bucket{namespace=\"argocd\",dest_server=\"https://kubernetes.default.svc\",le=\"0.25\"} 0"), "{text}");
        assert!(text.contains("argocd_app_reconcile_count{namespace=\"argocd\",dest_server=\"https://kubernetes.default.svc\"} 1"), "{text}");
        assert!(text.contains("argocd_app_sync_total{name=\"payments-api\",namespace=\"argocd\",project=\"default\",phase=\"Succeeded\",dest_server=\"https://kubernetes.default.svc\"} 1"), "{text}");
        assert!(
            text.contains("argocd_git_request_total{request_type=\"fetch\"} 3"),
            "{text}"
        );
        assert!(
            text.contains("argocd_git_request_total{request_type=\"ls-remote\"} 5"),
            "{text}"
        );
        assert!(
            text.contains("plumb_app_reconcile_duration_seconds_count 1"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
        assert_eq!(m.not_ready().len(), 2);
        m.set_live_cache_synced();
        m.set_apps_synced(true);
        assert!(m.not_ready().is_empty());
    }
}
