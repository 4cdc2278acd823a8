//! The apiVersions a built-in rule reads, as Argo checks them before applying it.

use serde_json::Value;

use super::fields::str_at;
use crate::status::{HealthCode, HealthStatus};

/// Returns `Some(Unknown)` unless the object's apiVersion is one the rule supports, with Argo's
/// message (`unsupported Deployment GVK: apps/v1beta2, Kind=Deployment`).
pub(super) fn check_version(obj: &Value, kind: &str, supported: &[&str]) -> Option<HealthStatus> {
    let api_version = str_at(obj, &["apiVersion"]);
    if supported.contains(&api_version) {
        return None;
    }
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Some(HealthStatus::new(
        HealthCode::Unknown,
        format!("unsupported {kind} GVK: {group}/{version}, Kind={kind}"),
    ))
}
