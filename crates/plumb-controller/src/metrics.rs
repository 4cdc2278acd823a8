//! Prometheus metrics in the text exposition format, kept in memory and rendered on scrape.
//! Hand-written: a handful of gauges, counters and histograms do not justify a metrics library.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

const BUCKETS: &[f64] = &[0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, secs: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS.len()];
        }
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                self.counts[i] += 1;
            }
        }
        self.sum += secs;
        self.count += 1;
    }
}

/// One Application's info series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppInfo {
    /// Project.
    pub project: String,
    /// Sync status.
    pub sync_status: String,
    /// Health status.
    pub health_status: String,
}

#[derive(Default)]
struct Inner {
    apps: BTreeMap<(String, String), AppInfo>,
    histograms: BTreeMap<&'static str, Histogram>,
    counters: BTreeMap<(&'static str, String), u64>,
}

/// The controller's metrics.
#[derive(Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

/// Histogram names.
pub const RECONCILE: &str = "plumb_app_reconcile_duration_seconds";
/// Histogram names.
pub const RENDER: &str = "plumb_app_render_duration_seconds";
/// Histogram names.
pub const APPLY: &str = "plumb_app_sync_duration_seconds";
/// Counter of Git requests by kind (`ls-remote`, `fetch`) and outcome.
pub const GIT_REQUESTS: &str = "plumb_git_request_total";

impl Metrics {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records an Application's current statuses.
    pub fn set_app(&self, namespace: &str, name: &str, info: AppInfo) {
        self.lock()
            .apps
            .insert((namespace.to_string(), name.to_string()), info);
    }

    /// Forgets a deleted Application.
    pub fn remove_app(&self, namespace: &str, name: &str) {
        self.lock()
            .apps
            .remove(&(namespace.to_string(), name.to_string()));
    }

    /// Records a duration.
    pub fn observe(&self, histogram: &'static str, d: Duration) {
        self.lock()
            .histograms
            .entry(histogram)
            .or_default()
            .observe(d.as_secs_f64());
    }

    /// Sets a counter to an absolute value (counters kept elsewhere, e.g. by the renderer).
    pub fn set_counter(&self, name: &'static str, labels: &str, value: u64) {
        self.lock()
            .counters
            .insert((name, labels.to_string()), value);
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> String {
        let inner = self.lock();
        let mut out = String::new();
        out.push_str("# HELP plumb_app_info Information about an Application.\n# TYPE plumb_app_info gauge\n");
        for ((ns, name), i) in &inner.apps {
            let _ = writeln!(
                out,
                "plumb_app_info{{name=\"{}\",namespace=\"{}\",project=\"{}\",sync_status=\"{}\",health_status=\"{}\"}} 1",
                esc(name),
                esc(ns),
                esc(&i.project),
                esc(&i.sync_status),
                esc(&i.health_status)
            );
        }
        for (name, help) in [
            (
                RECONCILE,
                "Time to reconcile an Application (render, compare, status write).",
            ),
            (RENDER, "Time to fetch and render an Application's sources."),
            (APPLY, "Time to run a sync operation."),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
            let h = inner.histograms.get(name);
            for (i, b) in BUCKETS.iter().enumerate() {
                let c = h.and_then(|h| h.counts.get(i).copied()).unwrap_or(0);
                let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {c}");
            }
            let (sum, count) = h.map(|h| (h.sum, h.count)).unwrap_or((0.0, 0));
            let _ = writeln!(
                out,
                "{name}_bucket{{le=\"+Inf\"}} {count}\n{name}_sum {sum}\n{name}_count {count}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP {GIT_REQUESTS} Git requests and renders by the source engine.\n# TYPE {GIT_REQUESTS} counter"
        );
        for ((name, labels), v) in &inner.counters {
            let _ = writeln!(out, "{name}{{{labels}}} {v}");
        }
        out
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_info_and_histograms() {
        let m = Metrics::default();
        m.set_app(
            "argocd",
            "payments-api",
            AppInfo {
                project: "default".into(),
                sync_status: "OutOfSync".into(),
                health_status: "Healthy".into(),
            },
        );
        m.observe(RECONCILE, Duration::from_millis(30));
        let text = m.render();
        assert!(text.contains("plumb_app_info{name=\"payments-api\",namespace=\"argocd\",project=\"default\",sync_status=\"OutOfSync\",health_status=\"Healthy\"} 1"));
        assert!(text.contains("plumb_app_reconcile_duration_seconds_bucket{le=\"0.01\"} 0"));
        assert!(text.contains("plumb_app_reconcile_duration_seconds_bucket{le=\"0.05\"} 1"));
        assert!(text.contains("plumb_app_reconcile_duration_seconds_count 1"));
    }
}
