//! The ApplicationSet controller's metrics, with Argo CD's names and labels
//! (`applicationset/metrics/metrics.go`): `argocd_appset_info`, `argocd_appset_owned_applications`
//! and the `argocd_appset_reconcile` histogram. Registered in the registry of the process that
//! runs the controller (`plumb controller`'s `/metrics`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Prometheus' default buckets, which Argo's `argocd_appset_reconcile` uses.
const DEFAULT_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct InfoLabels {
    namespace: String,
    name: String,
    resource_update_status: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct SetLabels {
    namespace: String,
    name: String,
}

/// The ApplicationSet metrics.
#[derive(Clone)]
pub struct AppSetMetrics {
    info: Family<InfoLabels, Gauge>,
    owned: Family<SetLabels, Gauge>,
    reconcile: Family<SetLabels, Histogram>,
    /// Each set's current `resource_update_status`, to drop the old series when it changes.
    current: Arc<Mutex<BTreeMap<(String, String), String>>>,
}

impl AppSetMetrics {
    /// Registers the families in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let info = Family::<InfoLabels, Gauge>::default();
        registry.register(
            "argocd_appset_info",
            "Information about applicationset",
            info.clone(),
        );
        let owned = Family::<SetLabels, Gauge>::default();
        registry.register(
            "argocd_appset_owned_applications",
            "Number of applications owned by the applicationset",
            owned.clone(),
        );
        let reconcile = Family::<SetLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(DEFAULT_BUCKETS.iter().copied())) as fn() -> Histogram,
        );
        registry.register(
            "argocd_appset_reconcile",
            "Application reconciliation performance in seconds.",
            reconcile.clone(),
        );
        Self {
            info,
            owned,
            reconcile,
            current: Arc::default(),
        }
    }

    /// A set's state after a reconcile: `resource_update_status` is the reason of its
    /// `ResourcesUpToDate` condition (`Unknown` without one), as Argo's collector reports it.
    pub fn set_info(&self, namespace: &str, name: &str, update_status: &str, owned: usize) {
        let key = (namespace.to_string(), name.to_string());
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = current.insert(key, update_status.to_string())
            && old != update_status
        {
            self.info.remove(&info_labels(namespace, name, &old));
        }
        self.info
            .get_or_create(&info_labels(namespace, name, update_status))
            .set(1);
        self.owned
            .get_or_create(&set_labels(namespace, name))
            .set(i64::try_from(owned).unwrap_or(i64::MAX));
    }

    /// A set is gone: its series go too.
    pub fn forget(&self, namespace: &str, name: &str) {
        let key = (namespace.to_string(), name.to_string());
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = current.remove(&key) {
            self.info.remove(&info_labels(namespace, name, &old));
        }
        self.owned.remove(&set_labels(namespace, name));
        self.reconcile.remove(&set_labels(namespace, name));
    }

    /// One reconcile's duration.
    pub fn observe_reconcile(&self, namespace: &str, name: &str, took: Duration) {
        self.reconcile
            .get_or_create(&set_labels(namespace, name))
            .observe(took.as_secs_f64());
    }
}

fn info_labels(namespace: &str, name: &str, status: &str) -> InfoLabels {
    InfoLabels {
        namespace: namespace.to_string(),
        name: name.to_string(),
        resource_update_status: status.to_string(),
    }
}

fn set_labels(namespace: &str, name: &str) -> SetLabels {
    SetLabels {
        namespace: namespace.to_string(),
        name: name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_follows_the_latest_status_only() {
        let mut registry = Registry::default();
        let m = AppSetMetrics::register(&mut registry);
        m.set_info("argocd", "fleet", "ErrorOccurred", 2);
        m.set_info("argocd", "fleet", "ApplicationSetUpToDate", 3);
        m.observe_reconcile("argocd", "fleet", Duration::from_millis(20));
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        assert!(out.contains(
            r#"argocd_appset_info{namespace="argocd",name="fleet",resource_update_status="ApplicationSetUpToDate"} 1"#
        ), "{out}");
        assert!(!out.contains("ErrorOccurred"), "{out}");
        assert!(
            out.contains(r#"argocd_appset_owned_applications{namespace="argocd",name="fleet"} 3"#)
        );
        assert!(
            out.contains(r#"argocd_appset_reconcile_count{namespace="argocd",name="fleet"} 1"#)
        );
        m.forget("argocd", "fleet");
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).unwrap();
        assert!(!out.contains("fleet"), "{out}");
    }
}
