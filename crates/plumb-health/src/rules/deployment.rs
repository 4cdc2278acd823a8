//! Deployment (apps/v1): gitops-engine `health_deployment.go`, itself borrowed from kubectl's
//! `rollout_status.go`.

use serde_json::Value;

use super::fields::{bool_at, condition, int_at, opt_int_at, str_at};
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "Deployment", &["apps/v1"]) {
        return unsupported;
    }
    if bool_at(obj, &["spec", "paused"]) {
        return HealthStatus::new(HealthCode::Suspended, "Deployment is paused");
    }
    // Read `status` once: this rule runs for every Deployment on every refresh.
    let status = obj.get("status").unwrap_or(&Value::Null);
    let generation = int_at(obj, &["metadata", "generation"]);
    let observed = int_at(status, &["observedGeneration"]);
    if generation > observed {
        return HealthStatus::new(
            HealthCode::Progressing,
            "Waiting for rollout to finish: observed deployment generation less than desired generation",
        );
    }
    let updated = int_at(status, &["updatedReplicas"]);
    let replicas = int_at(status, &["replicas"]);
    let available = int_at(status, &["availableReplicas"]);
    if condition(obj, "Progressing").is_some_and(|c| c.reason == "ProgressDeadlineExceeded") {
        let name = str_at(obj, &["metadata", "name"]);
        return HealthStatus::new(
            HealthCode::Degraded,
            format!(
                "Deployment {} exceeded its progress deadline",
                super::fields::go_quote(name)
            ),
        );
    }
    if let Some(desired) = opt_int_at(obj, &["spec", "replicas"])
        && updated < desired
    {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "Waiting for rollout to finish: {updated} out of {desired} new replicas have been updated..."
            ),
        );
    }
    if replicas > updated {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "Waiting for rollout to finish: {} old replicas are pending termination...",
                replicas - updated
            ),
        );
    }
    if available < updated {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "Waiting for rollout to finish: {available} of {updated} updated replicas are available..."
            ),
        );
    }
    HealthStatus::bare(HealthCode::Healthy)
}
