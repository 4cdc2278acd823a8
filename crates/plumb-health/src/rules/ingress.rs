//! Ingress (extensions and networking.k8s.io, any version): gitops-engine `health_ingress.go`.

use serde_json::Value;

use super::fields::array_at;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if array_at(obj, &["status", "loadBalancer", "ingress"]).is_empty() {
        HealthStatus::bare(HealthCode::Progressing)
    } else {
        HealthStatus::bare(HealthCode::Healthy)
    }
}
