//! Job (batch/v1): gitops-engine `health_job.go`. CronJob has no built-in rule (Argo uses Lua).

use serde_json::Value;

use super::fields::conditions;
use super::version::check_version;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    if let Some(unsupported) = check_version(obj, "Job", &["batch/v1"]) {
        return unsupported;
    }
    let (mut failed, mut complete, mut suspended) = (false, false, false);
    let (mut fail_message, mut message) = ("", "");
    // Argo checks a condition's status only for Suspended; Failed and Complete count when present.
    for c in conditions(obj) {
        match c.type_ {
            "Failed" => {
                failed = true;
                complete = true;
                fail_message = c.message;
            }
            "Complete" => {
                complete = true;
                message = c.message;
            }
            "Suspended" => {
                complete = true;
                message = c.message;
                suspended |= c.status == "True";
            }
            _ => {}
        }
    }
    if !complete {
        HealthStatus::new(HealthCode::Progressing, message)
    } else if failed {
        HealthStatus::new(HealthCode::Degraded, fail_message)
    } else if suspended {
        HealthStatus::new(HealthCode::Suspended, message)
    } else {
        HealthStatus::new(HealthCode::Healthy, message)
    }
}
