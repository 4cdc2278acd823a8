//! DaemonSet (apps/v1): gitops-engine `health_daemonset.go`.

use serde_json::Value;

use super::fields::{go_quote, int_at, str_at};
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "DaemonSet", &["apps/v1"]) {
        return unsupported;
    }
    if int_at(obj, &["metadata", "generation"]) > int_at(obj, &["status", "observedGeneration"]) {
        return HealthStatus::new(
            HealthCode::Progressing,
            "Waiting for rollout to finish: observed daemon set generation less than desired generation",
        );
    }
    let updated = int_at(obj, &["status", "updatedNumberScheduled"]);
    let desired = int_at(obj, &["status", "desiredNumberScheduled"]);
    if str_at(obj, &["spec", "updateStrategy", "type"]) == "OnDelete" {
        return HealthStatus::new(
            HealthCode::Healthy,
            format!("daemon set {updated} out of {desired} new pods have been updated"),
        );
    }
    let name = go_quote(str_at(obj, &["metadata", "name"]));
    if updated < desired {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "Waiting for daemon set {name} rollout to finish: {updated} out of {desired} new pods have been updated..."
            ),
        );
    }
    let available = int_at(obj, &["status", "numberAvailable"]);
    if available < desired {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "Waiting for daemon set {name} rollout to finish: {available} of {desired} updated pods are available..."
            ),
        );
    }
    HealthStatus::bare(HealthCode::Healthy)
}
