//! ReplicaSet (apps/v1): gitops-engine `health_replicaset.go`.

use serde_json::Value;

use super::fields::{condition, int_at, opt_int_at};
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "ReplicaSet", &["apps/v1"]) {
        return unsupported;
    }
    if int_at(obj, &["metadata", "generation"]) > int_at(obj, &["status", "observedGeneration"]) {
        return HealthStatus::new(
            HealthCode::Progressing,
            "Waiting for rollout to finish: observed replica set generation less than desired generation",
        );
    }
    if let Some(failure) = condition(obj, "ReplicaFailure")
        && failure.status == "True"
    {
        return HealthStatus::new(HealthCode::Degraded, failure.message);
    }
    let available = int_at(obj, &["status", "availableReplicas"]);
    if let Some(desired) = opt_int_at(obj, &["spec", "replicas"])
        && available < desired
    {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "Waiting for rollout to finish: {available} out of {desired} new replicas are available..."
            ),
        );
    }
    HealthStatus::bare(HealthCode::Healthy)
}
