//! notifications-engine's metrics, with its names and labels:
//! `argocd_notifications_deliveries_total{trigger,service,succeeded}` and
//! `argocd_notifications_trigger_eval_total{name,triggered}`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeliveryLabels {
    trigger: String,
    service: String,
    succeeded: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EvalLabels {
    name: String,
    triggered: String,
}

/// The counters (cheap to clone: the families are shared).
#[derive(Clone, Default)]
pub struct Metrics {
    deliveries: Family<DeliveryLabels, Counter>,
    evaluations: Family<EvalLabels, Counter>,
}

impl Metrics {
    /// Registers the counters in `registry` (the controller's, served on its `/metrics`).
    pub fn register(registry: &mut Registry) -> Metrics {
        let m = Metrics::default();
        registry.register(
            "argocd_notifications_deliveries",
            "Number of delivered notifications.",
            m.deliveries.clone(),
        );
        registry.register(
            "argocd_notifications_trigger_eval",
            "Number of trigger evaluations.",
            m.evaluations.clone(),
        );
        m
    }

    pub(crate) fn delivered(&self, trigger: &str, service: &str, succeeded: bool) {
        self.deliveries
            .get_or_create(&DeliveryLabels {
                trigger: trigger.to_string(),
                service: service.to_string(),
                succeeded: succeeded.to_string(),
            })
            .inc();
    }

    pub(crate) fn trigger_evaluated(&self, name: &str, triggered: bool) {
        self.evaluations
            .get_or_create(&EvalLabels {
                name: name.to_string(),
                triggered: triggered.to_string(),
            })
            .inc();
    }

    /// `argocd_notifications_deliveries_total` for these labels.
    pub fn deliveries(&self, trigger: &str, service: &str, succeeded: bool) -> u64 {
        self.deliveries
            .get_or_create(&DeliveryLabels {
                trigger: trigger.to_string(),
                service: service.to_string(),
                succeeded: succeeded.to_string(),
            })
            .get()
    }

    /// `argocd_notifications_trigger_eval_total` for these labels.
    pub fn evaluations(&self, name: &str, triggered: bool) -> u64 {
        self.evaluations
            .get_or_create(&EvalLabels {
                name: name.to_string(),
                triggered: triggered.to_string(),
            })
            .get()
    }
}
