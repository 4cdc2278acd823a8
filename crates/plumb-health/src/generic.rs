//! Plumb's generic rule for kinds that have no built-in rule and no Lua script.
//!
//! Argo gives such objects no health at all, so a custom resource that never comes up passes sync
//! waves at once. This rule reads the signals most controllers publish (the kstatus conventions):
//! `metadata.deletionTimestamp`, `status.observedGeneration`, and the conditions `Ready`,
//! `Available`, `Established`, `Succeeded`, `Reconciling`, `Stalled` and `Failed`. An object that
//! shows none of them still has no health. Every message starts with `generic:` and names the
//! signal that decided, so a reader can tell this rule from Argo's.

use serde_json::Value;

use crate::rules::{Condition, conditions};
use crate::status::{HealthCode, HealthStatus};

/// Conditions whose `True` means the object is up.
const HEALTHY_WHEN_TRUE: [&str; 4] = ["Ready", "Available", "Established", "Succeeded"];

/// The generic rule's verdict, or `None` when the object carries no standard signal.
pub(crate) fn health(obj: &Value) -> Option<HealthStatus> {
    let generation = obj.pointer("/metadata/generation").and_then(Value::as_i64);
    if obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        return Some(progressing(
            "metadata.deletionTimestamp is set: the object is being deleted",
        ));
    }
    if let (Some(generation), Some(observed)) = (
        generation,
        obj.pointer("/status/observedGeneration")
            .and_then(Value::as_i64),
    ) && observed < generation
    {
        return Some(progressing(&format!(
            "status.observedGeneration {observed} is behind metadata.generation {generation}"
        )));
    }
    let conds: Vec<Condition<'_>> = conditions(obj).collect();
    let find = |t: &str| conds.iter().find(|c| c.type_ == t);

    if let Some(c) = find("Stalled").filter(|c| c.status == "True") {
        return Some(decided(HealthCode::Degraded, c));
    }
    if let Some(ready) = find("Ready") {
        // A Ready condition written for an older generation says nothing about this one.
        if let (Some(generation), Some(seen)) = (generation, ready.observed_generation)
            && seen < generation
        {
            return Some(progressing(&format!(
                "condition Ready is stale: its observedGeneration {seen} is behind metadata.generation {generation}"
            )));
        }
        if ready.status == "False" {
            if let Some(failed) = find("Failed").filter(|c| c.status == "True") {
                return Some(decided(HealthCode::Degraded, failed));
            }
            let code = if reason_says_failed(ready.reason) {
                HealthCode::Degraded
            } else {
                HealthCode::Progressing
            };
            return Some(decided(code, ready));
        }
    }
    if let Some(c) = find("Reconciling").filter(|c| c.status == "True") {
        return Some(decided(HealthCode::Progressing, c));
    }
    if let Some(c) = find("Succeeded").filter(|c| c.status == "False") {
        return Some(decided(HealthCode::Degraded, c));
    }
    if let Some(c) = HEALTHY_WHEN_TRUE
        .iter()
        .filter_map(|t| find(t))
        .find(|c| c.status == "True")
    {
        return Some(decided(HealthCode::Healthy, c));
    }
    // Present but neither True nor failed (False without a failure, or Unknown): still coming up.
    if let Some(c) = HEALTHY_WHEN_TRUE.iter().filter_map(|t| find(t)).next() {
        return Some(decided(HealthCode::Progressing, c));
    }
    None
}

/// Whether a Ready=False reason names a failure rather than work in progress
/// (`InstallFailed`, `ReconciliationFailed`, `ImagePullError`, `CrashLoopBackOff`...).
fn reason_says_failed(reason: &str) -> bool {
    let lower = reason.to_ascii_lowercase();
    ["fail", "error", "backoff", "invalid"]
        .iter()
        .any(|w| lower.contains(w))
}

fn progressing(what: &str) -> HealthStatus {
    HealthStatus::new(HealthCode::Progressing, format!("generic: {what}"))
}

/// `generic: condition Ready=False (InstallFailed): <message>`.
fn decided(code: HealthCode, c: &Condition<'_>) -> HealthStatus {
    let mut message = format!("generic: condition {}={}", c.type_, c.status);
    if !c.reason.is_empty() && code != HealthCode::Healthy {
        message.push_str(&format!(" ({})", c.reason));
    }
    if !c.message.is_empty() {
        message.push_str(": ");
        message.push_str(c.message);
    }
    HealthStatus::new(code, message)
}
