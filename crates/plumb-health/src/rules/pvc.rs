//! PersistentVolumeClaim (v1): gitops-engine `health_pvc.go`.

use serde_json::Value;

use super::fields::str_at;
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "PersistentVolumeClaim", &["v1"]) {
        return unsupported;
    }
    let code = match str_at(obj, &["status", "phase"]) {
        "Bound" => HealthCode::Healthy,
        "Pending" => HealthCode::Progressing,
        "Lost" => HealthCode::Degraded,
        _ => HealthCode::Unknown,
    };
    HealthStatus::bare(code)
}
