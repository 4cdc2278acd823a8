//! APIService (apiregistration.k8s.io v1 and v1beta1): gitops-engine `health_apiservice.go`.

use serde_json::Value;

use super::fields::condition;
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    let supported = [
        "apiregistration.k8s.io/v1",
        "apiregistration.k8s.io/v1beta1",
    ];
    if let Some(unsupported) = check_version(obj, "APIService", &supported) {
        return unsupported;
    }
    match condition(obj, "Available") {
        Some(c) => {
            let code = if c.status == "True" {
                HealthCode::Healthy
            } else {
                HealthCode::Progressing
            };
            HealthStatus::new(code, format!("{}: {}", c.reason, c.message))
        }
        None => HealthStatus::new(HealthCode::Progressing, "Waiting to be processed"),
    }
}
