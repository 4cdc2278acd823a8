//! Service (v1): gitops-engine `health_service.go`. Only a LoadBalancer waits, for an address.

use serde_json::Value;

use super::fields::{array_at, str_at};
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "Service", &["v1"]) {
        return unsupported;
    }
    if str_at(obj, &["spec", "type"]) == "LoadBalancer"
        && array_at(obj, &["status", "loadBalancer", "ingress"]).is_empty()
    {
        return HealthStatus::bare(HealthCode::Progressing);
    }
    HealthStatus::bare(HealthCode::Healthy)
}
