//! Crossplane claims and composite resources (XRs), recognised by their shape.
//!
//! Their kinds and groups are defined by each platform team (a CompositeResourceDefinition), so no
//! fixed group/kind rule can name them. Crossplane documents the shape they all share: the spec
//! carries Crossplane's machinery (a claim's `spec.resourceRef` to its XR; an XR's
//! `spec.resourceRefs` to what it composed; either's `spec.compositionRef`/`compositionSelector`/
//! `compositionRevisionRef`; Crossplane v2 moves these under `spec.crossplane`), and the status has
//! the conditions `Synced` (the last reconcile worked: `ReconcileSuccess`, or `ReconcileError`
//! with the error) and `Ready` (`Available`; or `Creating`, `Waiting`, `Deleting`, `Unavailable`).
//! Applied in the generic path, before the generic rule, to kinds with no rule of their own.

use serde_json::Value;

use crate::rules::{Condition, conditions};
use crate::status::{HealthCode, HealthStatus};

/// Spec fields only Crossplane's claim and composite machinery writes.
const MACHINERY: [&str; 5] = [
    "resourceRef",
    "resourceRefs",
    "compositionRef",
    "compositionSelector",
    "compositionRevisionRef",
];

/// The verdict for a Crossplane claim or XR, or `None` when the object does not have their shape
/// (or has no `Synced`/`Ready` condition yet: then the generic rules apply, including the one for
/// objects their controller never gave a status).
pub(crate) fn health(obj: &Value) -> Option<HealthStatus> {
    if !has_machinery(obj) {
        return None;
    }
    let conds: Vec<Condition<'_>> = conditions(obj).collect();
    let synced = conds.iter().find(|c| c.type_ == "Synced");
    let ready = conds.iter().find(|c| c.type_ == "Ready");
    if synced.is_none() && ready.is_none() {
        return None;
    }
    // The last reconcile failed: whatever Ready says is about an older attempt.
    if let Some(s) = synced.filter(|c| c.status == "False") {
        return Some(verdict(HealthCode::Degraded, s));
    }
    let generation = obj.pointer("/metadata/generation").and_then(Value::as_i64);
    let Some(ready) = ready else {
        return Some(HealthStatus::new(
            HealthCode::Progressing,
            "crossplane: waiting for condition Ready",
        ));
    };
    if let (Some(generation), Some(seen)) = (generation, ready.observed_generation)
        && seen < generation
    {
        return Some(HealthStatus::new(
            HealthCode::Progressing,
            format!(
                "crossplane: condition Ready is stale: its observedGeneration {seen} is behind metadata.generation {generation}"
            ),
        ));
    }
    let code = match ready.status {
        "True" => HealthCode::Healthy,
        // An external resource that was available and is not any more, or a failure reason.
        "False" if ready.reason == "Unavailable" || says_failed(ready.reason) => {
            HealthCode::Degraded
        }
        // Creating, Waiting, Deleting, Unknown: still working.
        _ => HealthCode::Progressing,
    };
    Some(verdict(code, ready))
}

/// Whether the spec has Crossplane's claim or composite fields (v1: in `spec`; v2: in
/// `spec.crossplane`).
fn has_machinery(obj: &Value) -> bool {
    let in_map = |spec: Option<&Value>| {
        spec.and_then(Value::as_object).is_some_and(|m| {
            MACHINERY
                .iter()
                .any(|k| m.get(*k).is_some_and(|v| v.is_object() || v.is_array()))
        })
    };
    in_map(obj.get("spec")) || in_map(obj.pointer("/spec/crossplane"))
}

fn says_failed(reason: &str) -> bool {
    let lower = reason.to_ascii_lowercase();
    ["fail", "error"].iter().any(|w| lower.contains(w))
}

/// `crossplane: condition Synced=False (ReconcileError): <message>`.
fn verdict(code: HealthCode, c: &Condition<'_>) -> HealthStatus {
    let mut message = format!("crossplane: condition {}={}", c.type_, c.status);
    if !c.reason.is_empty() && code != HealthCode::Healthy {
        message.push_str(&format!(" ({})", c.reason));
    }
    if !c.message.is_empty() {
        message.push_str(": ");
        message.push_str(c.message);
    }
    HealthStatus::new(code, message)
}
