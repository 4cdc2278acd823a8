//! Argo Workflow (argoproj.io, any version): gitops-engine `health_argo.go`.

use serde_json::Value;

use super::fields::str_at;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    let code = match str_at(obj, &["status", "phase"]) {
        "" | "Pending" | "Running" => HealthCode::Progressing,
        "Succeeded" => HealthCode::Healthy,
        "Failed" | "Error" => HealthCode::Degraded,
        _ => HealthCode::Unknown,
    };
    HealthStatus::new(code, str_at(obj, &["status", "message"]))
}
