//! StatefulSet (apps/v1): gitops-engine `health_statefulset.go`.

use serde_json::Value;

use super::fields::{at, int_at, opt_int_at, str_at};
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "StatefulSet", &["apps/v1"]) {
        return unsupported;
    }
    let observed = int_at(obj, &["status", "observedGeneration"]);
    if observed == 0 || int_at(obj, &["metadata", "generation"]) > observed {
        return HealthStatus::new(
            HealthCode::Progressing,
            "Waiting for statefulset spec update to be observed...",
        );
    }
    let desired = opt_int_at(obj, &["spec", "replicas"]);
    let ready = int_at(obj, &["status", "readyReplicas"]);
    if let Some(desired) = desired
        && ready < desired
    {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!("Waiting for {} pods to be ready...", desired - ready),
        );
    }
    let strategy = str_at(obj, &["spec", "updateStrategy", "type"]);
    let updated = int_at(obj, &["status", "updatedReplicas"]);
    let rolling = at(obj, &["spec", "updateStrategy", "rollingUpdate"]).filter(|v| !v.is_null());
    if strategy == "RollingUpdate"
        && let Some(rolling) = rolling
    {
        if let (Some(desired), Some(partition)) = (desired, opt_int_at(rolling, &["partition"]))
            && updated < desired - partition
        {
            return HealthStatus::new(
                HealthCode::Progressing,
                format!(
                    "Waiting for partitioned roll out to finish: {updated} out of {} new pods have been updated...",
                    desired - partition
                ),
            );
        }
        return HealthStatus::new(
            HealthCode::Healthy,
            format!("partitioned roll out complete: {updated} new pods have been updated..."),
        );
    }
    if strategy == "OnDelete" {
        return HealthStatus::new(
            HealthCode::Healthy,
            format!("statefulset has {ready} ready pods"),
        );
    }
    let update_revision = str_at(obj, &["status", "updateRevision"]);
    let current_revision = str_at(obj, &["status", "currentRevision"]);
    if update_revision != current_revision {
        return HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "waiting for statefulset rolling update to complete {updated} pods at revision {update_revision}..."
            ),
        );
    }
    HealthStatus::new(
        HealthCode::Healthy,
        format!(
            "statefulset rolling update complete {} pods at revision {current_revision}...",
            int_at(obj, &["status", "currentReplicas"])
        ),
    )
}
