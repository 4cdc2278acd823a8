//! Crossplane claims and composite resources, recognised by their shape (their groups and kinds
//! are user-defined), on fixtures shaped as `kubectl get -o yaml` returns them.

use plumb_health::{Assessor, Config, HealthCode, assess};
use plumb_model::Settings;
use serde_json::json;

use crate::support::fixture;

use HealthCode::*;

const CASES: &[(&str, HealthCode, &str)] = &[
    (
        "crossplane-claim-ready.yaml",
        Healthy,
        "crossplane: condition Ready=True",
    ),
    (
        "crossplane-claim-waiting.yaml",
        Progressing,
        "crossplane: condition Ready=False (Waiting): Claim is waiting for composite resource to become Ready",
    ),
    (
        "crossplane-claim-reconcile-error.yaml",
        Degraded,
        "crossplane: condition Synced=False (ReconcileError): cannot compose resources: cannot get composition: Composition.apiextensions.crossplane.io \"postgresql-gcp\" not found",
    ),
    (
        "crossplane-xr-creating.yaml",
        Progressing,
        "crossplane: condition Ready=False (Creating): Unready resources: rds-instance, subnet-group",
    ),
    (
        "crossplane-xr-ready.yaml",
        Healthy,
        "crossplane: condition Ready=True",
    ),
    (
        "crossplane-xr-stale.yaml",
        Progressing,
        "crossplane: condition Ready is stale: its observedGeneration 2 is behind metadata.generation 3",
    ),
    (
        "crossplane-v2-xr-ready.yaml",
        Healthy,
        "crossplane: condition Ready=True",
    ),
    (
        "crossplane-v2-xr-compose-error.yaml",
        Degraded,
        "crossplane: condition Synced=False (ReconcileError): cannot compose resources: pipeline step \"render\" returned a fatal result: cannot render template: unknown field \"replicaCount\"",
    ),
];

#[test]
fn claims_and_composites_in_each_state() {
    for (file, code, message) in CASES {
        let h = assess(&fixture(file)).unwrap_or_else(|| panic!("{file}: no health"));
        assert_eq!((h.code, h.message.as_str()), (*code, *message), "{file}");
    }
}

#[test]
fn synced_true_without_ready_yet_is_progressing_and_unavailable_is_degraded() {
    let mut xr = fixture("crossplane-xr-creating.yaml");
    let conditions = xr["status"]["conditions"].as_array_mut().unwrap();
    conditions.retain(|c| c["type"] == "Synced");
    let h = assess(&xr).unwrap();
    assert_eq!(
        (h.code, h.message.as_str()),
        (Progressing, "crossplane: waiting for condition Ready")
    );

    let mut xr = fixture("crossplane-xr-ready.yaml");
    xr["status"]["conditions"][1] = json!({"type": "Ready", "status": "False", "reason": "Unavailable",
        "message": "composed resource rds-instance is not available", "observedGeneration": 2});
    let h = assess(&xr).unwrap();
    assert_eq!(h.code, Degraded, "{}", h.message);
}

#[test]
fn only_the_crossplane_shape_is_recognised() {
    // Ready/Synced-style conditions without Crossplane's spec fields: the generic rule decides.
    let mut other = fixture("crossplane-xr-creating.yaml");
    for field in [
        "resourceRefs",
        "compositionRef",
        "compositionRevisionRef",
        "claimRef",
    ] {
        other["spec"].as_object_mut().unwrap().remove(field);
    }
    let h = assess(&other).unwrap();
    assert!(h.message.starts_with("generic: "), "{}", h.message);

    // A `spec.resourceRef` that is a string, not a reference object, is not Crossplane's.
    let not_a_ref = json!({"apiVersion": "example.com/v1", "kind": "Report",
        "metadata": {"name": "r", "generation": 1},
        "spec": {"resourceRef": "orders"},
        "status": {"conditions": [{"type": "Synced", "status": "False", "reason": "ReconcileError"}]}});
    assert_eq!(assess(&not_a_ref), None);

    // A claim Crossplane has not looked at yet (no conditions): no verdict from this rule; the
    // rule for custom resources that never got a status applies instead.
    let mut fresh = fixture("crossplane-claim-waiting.yaml");
    fresh.as_object_mut().unwrap().remove("status");
    assert_eq!(assess(&fresh), None);
}

#[test]
fn unknown_kinds_none_and_user_scripts_win() {
    let claim = fixture("crossplane-claim-reconcile-error.yaml");
    let settings = |data: serde_json::Value| Settings::from_config_map(&json!({"data": data}));
    // `plumb.health.unknownKinds: none` (Argo's behaviour): no health.
    let argo = Assessor::new(
        Config::default().settings(settings(json!({"plumb.health.unknownKinds": "none"}))),
    )
    .unwrap();
    assert_eq!(argo.assess(&claim), None);
    // A script for the claim's group and kind comes first, as for every kind.
    let scripted = Assessor::new(Config::default().settings(settings(json!({
        "resource.customizations.health.database.acme.example_PostgreSQLInstance":
            "return {status = \"Suspended\", message = \"paused by the platform team\"}"
    }))))
    .unwrap();
    assert_eq!(scripted.assess(&claim).unwrap().code, Suspended);
}
