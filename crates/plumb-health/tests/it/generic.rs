//! Plumb's generic rule for kinds without a built-in rule or script.

use plumb_health::{Assessor, Config, HealthCode, UnknownKindHealth, assess};
use plumb_model::Settings;

use crate::support::fixture as read_fixture;

/// Certificates, Kustomizations and HelmReleases have Plumb's own scripts now; the generic rule is
/// tested on the same status shapes under a group that no rule knows.
fn fixture(name: &str) -> serde_json::Value {
    let mut obj = read_fixture(name);
    let api_version = obj["apiVersion"].as_str().unwrap_or_default().to_string();
    if let Some((group, version)) = api_version.split_once('/')
        && [
            "cert-manager.io",
            "kustomize.toolkit.fluxcd.io",
            "helm.toolkit.fluxcd.io",
        ]
        .contains(&group)
    {
        obj["apiVersion"] = format!("unruled.{group}.example.com/{version}").into();
    }
    obj
}

use HealthCode::*;

const CASES: &[(&str, Option<(HealthCode, &str)>)] = &[
    (
        "certificate-ready.yaml",
        Some((
            Healthy,
            "generic: condition Ready=True: Certificate is up to date and has not expired",
        )),
    ),
    (
        "certificate-issuing.yaml",
        Some((
            Progressing,
            "generic: condition Ready=False (DoesNotExist): Issuing certificate as Secret does not exist",
        )),
    ),
    (
        "certificate-stale-condition.yaml",
        Some((
            Progressing,
            "generic: condition Ready is stale: its observedGeneration 1 is behind metadata.generation 2",
        )),
    ),
    (
        "kustomization-stalled.yaml",
        Some((
            Degraded,
            "generic: condition Stalled=True (ArtifactFailed): kustomization path not found: stat /tmp/kustomization-1422/platform: no such file or directory",
        )),
    ),
    (
        "helmrelease-install-failed.yaml",
        Some((
            Degraded,
            "generic: condition Ready=False (InstallFailed): Helm install failed for release cache/redis with chart redis@20.3.0: context deadline exceeded",
        )),
    ),
    (
        "helmrelease-reconciling.yaml",
        Some((
            Progressing,
            "generic: condition Reconciling=True (Progressing): Running 'upgrade' action with timeout of 5m0s",
        )),
    ),
    (
        "pipelinerun-failed.yaml",
        Some((
            Degraded,
            "generic: condition Succeeded=False (Failed): Tasks Completed: 2 (Failed: 1, Cancelled 0), Skipped: 1",
        )),
    ),
    (
        "database-generation-behind.yaml",
        Some((
            Progressing,
            "generic: status.observedGeneration 4 is behind metadata.generation 5",
        )),
    ),
    ("configmap.yaml", None),
    ("widget-no-signals.yaml", None),
];

#[test]
fn generic_cases() {
    let mut failures = Vec::new();
    for (file, expected) in CASES {
        let got = assess(&fixture(file)).map(|h| (h.code, h.message));
        let expected = expected.map(|(c, m)| (c, m.to_string()));
        if got != expected {
            failures.push(format!("{file}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_generic_message_names_the_rule() {
    for (file, expected) in CASES {
        if let Some(h) = assess(&fixture(file)) {
            assert!(h.message.starts_with("generic: "), "{file}: {}", h.message);
            assert!(expected.is_some());
        }
    }
}

#[test]
fn failed_condition_with_ready_false_is_degraded() {
    let mut obj = fixture("certificate-issuing.yaml");
    obj["status"]["conditions"].as_array_mut().unwrap().push(serde_json::json!({
        "type": "Failed", "status": "True", "reason": "OrderFailed", "message": "ACME order was rejected"
    }));
    let h = assess(&obj).unwrap();
    assert_eq!(
        (h.code, h.message.as_str()),
        (
            Degraded,
            "generic: condition Failed=True (OrderFailed): ACME order was rejected"
        )
    );
}

#[test]
fn settings_and_override_switch_to_argo_behaviour() {
    let obj = fixture("kustomization-stalled.yaml");
    let settings = Settings::from_config_map(&serde_json::json!({
        "data": {"plumb.health.unknownKinds": "none"}
    }));
    let argo = Assessor::new(Config::default().settings(settings.clone())).unwrap();
    assert_eq!(argo.unknown_kinds(), UnknownKindHealth::None);
    assert_eq!(argo.assess(&obj), None);
    let forced = Assessor::new(
        Config::default()
            .settings(settings)
            .unknown_kinds(UnknownKindHealth::Generic),
    )
    .unwrap();
    assert_eq!(forced.assess(&obj).unwrap().code, Degraded);

    let bad = Settings::from_config_map(
        &serde_json::json!({"data": {"plumb.health.unknownKinds": "kstatus"}}),
    );
    let err = Assessor::new(Config::default().settings(bad)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "settings key plumb.health.unknownKinds: invalid value \"kstatus\" (expected generic or none)"
    );
}
