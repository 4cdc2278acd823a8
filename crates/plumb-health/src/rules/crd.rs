//! CustomResourceDefinition (apiextensions.k8s.io/v1): Argo CD judges it with the Lua script it
//! ships (`resource_customizations/apiextensions.k8s.io/CustomResourceDefinition/health.lua`);
//! this rule gives the same statuses and messages (found by the conformance harness).

use serde_json::Value;

use super::fields::conditions;
use crate::status::{HealthCode, HealthStatus};

pub(super) fn health(obj: &Value) -> HealthStatus {
    let progressing = |m: &str| HealthStatus::new(HealthCode::Progressing, m);
    if obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        return progressing("CRD is terminating");
    }
    let conds: Vec<_> = conditions(obj).collect();
    if conds.is_empty() {
        return progressing("Status conditions not found");
    }
    let mut established = false;
    for c in &conds {
        match (c.type_, c.status) {
            ("Terminating", "True") => {
                return progressing(&format!("CRD is terminating: {}", c.message));
            }
            ("NamesAccepted", "False") => {
                return HealthStatus::new(
                    HealthCode::Degraded,
                    format!("CRD names have not been accepted: {}", c.message),
                );
            }
            ("NonStructuralSchema", "True") => {
                return HealthStatus::new(
                    HealthCode::Degraded,
                    format!("Schema violations found: {}", c.message),
                );
            }
            ("Established", "True") => established = true,
            ("Established", _) if c.reason == "InvalidCABundle" => {
                return HealthStatus::new(
                    HealthCode::Degraded,
                    format!("CRD is not established: {}", c.message),
                );
            }
            ("Established", _) if c.reason == "Installing" => {
                return progressing("CRD is being installed");
            }
            _ => {}
        }
    }
    if !established {
        return progressing("CRD is not established");
    }
    HealthStatus::new(HealthCode::Healthy, "CRD is healthy")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(conditions: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"}, "status": {"conditions": conditions}})
    }

    fn judged(obj: &Value) -> (HealthCode, String) {
        let h = health(obj);
        (h.code, h.message)
    }

    #[test]
    fn crds_are_judged_as_argo_cds_script_judges_them() {
        assert_eq!(
            judged(&crd(json!([
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
            ]))),
            (HealthCode::Healthy, "CRD is healthy".into())
        );
        assert_eq!(
            judged(&crd(json!([]))),
            (
                HealthCode::Progressing,
                "Status conditions not found".into()
            )
        );
        assert_eq!(
            judged(&crd(
                json!([{"type": "NamesAccepted", "status": "False", "reason": "NameConflict",
                "message": "\"widgets\" is already in use"}])
            )),
            (
                HealthCode::Degraded,
                "CRD names have not been accepted: \"widgets\" is already in use".into()
            )
        );
        assert_eq!(
            judged(&crd(
                json!([{"type": "Established", "status": "False", "reason": "Installing",
                "message": "the initial names have been accepted"}])
            )),
            (HealthCode::Progressing, "CRD is being installed".into())
        );
        assert_eq!(
            judged(&crd(json!([{"type": "NamesAccepted", "status": "True"}]))),
            (HealthCode::Progressing, "CRD is not established".into())
        );
        let mut deleting = crd(json!([{"type": "Established", "status": "True"}]));
        deleting["metadata"]["deletionTimestamp"] = json!("2026-12-01T10:00:00Z");
        assert_eq!(
            judged(&deleting),
            (HealthCode::Progressing, "CRD is terminating".into())
        );
    }
}
