//! HorizontalPodAutoscaler (autoscaling v1 annotation form, v2 conditions): gitops-engine
//! `health_hpa.go`.

use serde_json::Value;

use super::fields::{annotation, str_at};
use super::version::check_version;
use super::{Condition, conditions};
use crate::status::{HealthCode, HealthStatus};

const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
const WAITING: &str = "Waiting to Autoscale";

/// (type, reason) pairs that mean the autoscaler cannot work.
const DEGRADED: [(&str, &str); 8] = [
    ("AbleToScale", "FailedGetScale"),
    ("AbleToScale", "FailedUpdateScale"),
    ("ScalingActive", "FailedGetResourceMetric"),
    ("ScalingActive", "FailedGetObjectMetric"),
    ("ScalingActive", "FailedGetPodsMetric"),
    ("ScalingActive", "FailedGetExternalMetric"),
    ("ScalingActive", "FailedComputeMetricsReplicas"),
    ("ScalingActive", "InvalidSelector"),
];

pub(super) fn health(obj: &Value) -> HealthStatus {
    let supported = ["autoscaling/v1", "autoscaling/v2"];
    if let Some(unsupported) = check_version(obj, "HorizontalPodAutoscaler", &supported) {
        return unsupported;
    }
    if str_at(obj, &["apiVersion"]) == "autoscaling/v2" {
        return check(conditions(obj));
    }
    let Some(raw) = annotation(obj, CONDITIONS_ANNOTATION) else {
        return HealthStatus::new(HealthCode::Progressing, WAITING);
    };
    let parsed: Vec<Value> = match serde_json::from_str(raw) {
        Ok(v) => v,
        Err(err) => {
            return HealthStatus::new(
                HealthCode::Unknown,
                format!("failed to convert conditions annotation to typed: {err}"),
            );
        }
    };
    check(parsed.iter().map(|c| Condition {
        type_: str_at(c, &["type"]),
        status: str_at(c, &["status"]),
        reason: str_at(c, &["reason"]),
        message: str_at(c, &["message"]),
        observed_generation: None,
    }))
}

/// A condition that says the autoscaler cannot work makes it Degraded wherever it is in the list
/// (v1 lists `AbleToScale: True` before a failing `ScalingActive`); otherwise the first
/// `AbleToScale`/`ScalingLimited` condition that is `True` makes it Healthy.
fn check<'a>(conditions: impl Iterator<Item = Condition<'a>>) -> HealthStatus {
    let conditions: Vec<Condition<'a>> = conditions.collect();
    if let Some(c) = conditions
        .iter()
        .find(|c| DEGRADED.contains(&(c.type_, c.reason)))
    {
        return HealthStatus::new(HealthCode::Degraded, c.message);
    }
    if let Some(c) = conditions
        .iter()
        .find(|c| matches!(c.type_, "AbleToScale" | "ScalingLimited") && c.status == "True")
    {
        return HealthStatus::new(HealthCode::Healthy, c.message);
    }
    HealthStatus::new(HealthCode::Progressing, WAITING)
}
