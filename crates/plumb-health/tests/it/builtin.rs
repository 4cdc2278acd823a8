//! Argo CD's built-in rules on realistic objects: status and exact message for each case.

use plumb_health::{Assessor, Config, HealthCode, UnknownKindHealth, assess};

use crate::support::fixture;

use HealthCode::*;

const CASES: &[(&str, HealthCode, &str)] = &[
    ("deployment-healthy.yaml", Healthy, ""),
    (
        "deployment-progressing.yaml",
        Progressing,
        "Waiting for rollout to finish: 1 out of 3 new replicas have been updated...",
    ),
    (
        "deployment-old-replicas.yaml",
        Progressing,
        "Waiting for rollout to finish: 2 old replicas are pending termination...",
    ),
    (
        "deployment-unavailable.yaml",
        Progressing,
        "Waiting for rollout to finish: 2 of 3 updated replicas are available...",
    ),
    (
        "deployment-degraded.yaml",
        Degraded,
        "Deployment \"checkout\" exceeded its progress deadline",
    ),
    (
        "deployment-suspended.yaml",
        Suspended,
        "Deployment is paused",
    ),
    (
        "deployment-generation-not-observed.yaml",
        Progressing,
        "Waiting for rollout to finish: observed deployment generation less than desired generation",
    ),
    (
        "deployment-apps-v1beta2.yaml",
        Unknown,
        "unsupported Deployment GVK: apps/v1beta2, Kind=Deployment",
    ),
    (
        "statefulset-rolling-complete.yaml",
        Healthy,
        "partitioned roll out complete: 3 new pods have been updated...",
    ),
    (
        "statefulset-healthy.yaml",
        Healthy,
        "statefulset rolling update complete 3 pods at revision orders-db-7d9f8c6b5...",
    ),
    (
        "statefulset-updating.yaml",
        Progressing,
        "waiting for statefulset rolling update to complete 1 pods at revision orders-db-5c8e7a9d4...",
    ),
    (
        "statefulset-ondelete.yaml",
        Healthy,
        "statefulset has 3 ready pods",
    ),
    (
        "statefulset-partitioned.yaml",
        Progressing,
        "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...",
    ),
    (
        "statefulset-pods-not-ready.yaml",
        Progressing,
        "Waiting for 2 pods to be ready...",
    ),
    (
        "statefulset-not-observed.yaml",
        Progressing,
        "Waiting for statefulset spec update to be observed...",
    ),
    ("daemonset-healthy.yaml", Healthy, ""),
    (
        "daemonset-rolling.yaml",
        Progressing,
        "Waiting for daemon set \"node-exporter\" rollout to finish: 1 out of 3 new pods have been updated...",
    ),
    (
        "daemonset-unavailable.yaml",
        Progressing,
        "Waiting for daemon set \"node-exporter\" rollout to finish: 2 of 3 updated pods are available...",
    ),
    (
        "daemonset-ondelete.yaml",
        Healthy,
        "daemon set 1 out of 3 new pods have been updated",
    ),
    (
        "daemonset-not-observed.yaml",
        Progressing,
        "Waiting for rollout to finish: observed daemon set generation less than desired generation",
    ),
    ("replicaset-healthy.yaml", Healthy, ""),
    (
        "replicaset-progressing.yaml",
        Progressing,
        "Waiting for rollout to finish: 1 out of 3 new replicas are available...",
    ),
    (
        "replicaset-failure.yaml",
        Degraded,
        "pods \"checkout-6f9c7d8b5d-\" is forbidden: exceeded quota: shop-quota, requested: requests.cpu=250m, used: requests.cpu=1750m, limited: requests.cpu=2",
    ),
    (
        "replicaset-not-observed.yaml",
        Progressing,
        "Waiting for rollout to finish: observed replica set generation less than desired generation",
    ),
    ("pod-running-ready.yaml", Healthy, ""),
    (
        "pod-crashloop.yaml",
        Degraded,
        "back-off 2m40s restarting failed container=checkout pod=checkout-6f9c7d8b5d-x7k2p_shop(2b1d0c9e-8f7a-4e6d-5c4b-3a291807f6e5)",
    ),
    (
        "pod-imagepullbackoff.yaml",
        Degraded,
        "Back-off pulling image \"registry.example.com/shop/checkout:1.99.0\"",
    ),
    ("pod-pending.yaml", Progressing, ""),
    ("pod-running-not-ready.yaml", Progressing, ""),
    ("pod-running-restarted-not-ready.yaml", Degraded, ""),
    ("pod-failed-oomkilled.yaml", Degraded, "OOMKilled"),
    (
        "pod-failed-exit-code.yaml",
        Degraded,
        "container \"checkout\" failed with exit code 3",
    ),
    (
        "pod-evicted.yaml",
        Degraded,
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91564Ki. Container checkout was using 1723480Ki, request is 256Mi, has larger consumption of memory. ",
    ),
    ("pod-succeeded.yaml", Healthy, ""),
    ("pod-running-restart-never.yaml", Progressing, ""),
    ("pod-running-restart-onfailure.yaml", Progressing, ""),
    (
        "pod-running-restart-never-with-ignore-annotation.yaml",
        Healthy,
        "",
    ),
    (
        "pod-running-restart-never-hook-with-ignore-annotation.yaml",
        Progressing,
        "",
    ),
    ("pod-restart-never-backoff.yaml", Progressing, ""),
    (
        "pod-restart-never-with-ignore-annotation-backoff.yaml",
        Degraded,
        "back-off 2m40s restarting failed container=checkout pod=checkout-6f9c7d8b5d-x7k2p_shop(2b1d0c9e-8f7a-4e6d-5c4b-3a291807f6e5)",
    ),
    ("pod-deletion.yaml", Progressing, "Pending deletion"),
    ("pod-hook-deleting-with-finalizer.yaml", Healthy, ""),
    ("svc-clusterip.yaml", Healthy, ""),
    ("svc-loadbalancer-pending.yaml", Progressing, ""),
    ("svc-loadbalancer-ready.yaml", Healthy, ""),
    ("ingress-pending.yaml", Progressing, ""),
    ("ingress-ready.yaml", Healthy, ""),
    ("ingress-extensions-ready.yaml", Healthy, ""),
    ("pvc-bound.yaml", Healthy, ""),
    ("pvc-pending.yaml", Progressing, ""),
    ("pvc-lost.yaml", Degraded, ""),
    ("job-running.yaml", Progressing, ""),
    (
        "job-succeeded.yaml",
        Healthy,
        "Reached expected number of succeeded pods",
    ),
    (
        "job-failed.yaml",
        Degraded,
        "Job has reached the specified backoff limit",
    ),
    ("job-suspended.yaml", Suspended, "Job suspended"),
    ("job-resumed.yaml", Healthy, "Job resumed"),
    (
        "hpa-v2-healthy.yaml",
        Healthy,
        "recommended size matches current size",
    ),
    (
        "hpa-v2-degraded.yaml",
        Degraded,
        "failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API",
    ),
    (
        "hpa-v2-progressing.yaml",
        Progressing,
        "Waiting to Autoscale",
    ),
    (
        "hpa-v1-healthy.yaml",
        Healthy,
        "recommended size matches current size",
    ),
    (
        "hpa-v1-degraded.yaml",
        Degraded,
        "the HPA controller was unable to get the target's current scale: deployments/scale.apps \"checkout\" not found",
    ),
    (
        "hpa-v1-degraded-failedgetobjectmetric.yaml",
        Degraded,
        "the HPA was unable to compute the replica count: unable to get metric requests-per-second: Ingress on shop checkout/unable to fetch metrics from custom metrics API: the server could not find the metric requests-per-second for ingresses.networking.k8s.io checkout",
    ),
    (
        "hpa-v1-no-annotation.yaml",
        Progressing,
        "Waiting to Autoscale",
    ),
    (
        "apiservice-v1-available.yaml",
        Healthy,
        "Passed: all checks passed",
    ),
    (
        "apiservice-v1-unavailable.yaml",
        Progressing,
        "FailedDiscoveryCheck: failing or missing response from https://10.244.1.9:10250/apis/metrics.k8s.io/v1beta1: Get \"https://10.244.1.9:10250/apis/metrics.k8s.io/v1beta1\": dial tcp 10.244.1.9:10250: connect: connection refused",
    ),
    (
        "apiservice-v1beta1-available.yaml",
        Healthy,
        "Passed: all checks passed",
    ),
    (
        "apiservice-v1-no-conditions.yaml",
        Progressing,
        "Waiting to be processed",
    ),
    ("workflow-running.yaml", Progressing, ""),
    (
        "workflow-failed.yaml",
        Degraded,
        "child 'nightly-report-8x2kq' failed",
    ),
    ("workflow-succeeded.yaml", Healthy, ""),
];

#[test]
fn every_builtin_case_matches_argo() {
    // Argo mode too: built-in rules must not depend on the unknown-kind setting.
    let argo = Assessor::new(Config::default().unknown_kinds(UnknownKindHealth::None)).unwrap();
    let mut failures = Vec::new();
    for (file, code, message) in CASES {
        let obj = fixture(file);
        for (mode, got) in [("default", assess(&obj)), ("argo", argo.assess(&obj))] {
            match got {
                Some(h) if h.code == *code && h.message == *message => {}
                other => failures.push(format!(
                    "{file} ({mode}): expected {code:?} {message:?}, got {other:?}"
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn unsupported_versions_are_unknown_with_argos_message() {
    let mut pod = fixture("pod-running-ready.yaml");
    pod["apiVersion"] = "v2".into();
    let h = assess(&pod).unwrap();
    assert_eq!(
        (h.code, h.message.as_str()),
        (Unknown, "unsupported Pod GVK: /v2, Kind=Pod")
    );
    let mut hpa = fixture("hpa-v2-healthy.yaml");
    hpa["apiVersion"] = "autoscaling/v2beta2".into();
    let h = assess(&hpa).unwrap();
    assert_eq!(
        h.message,
        "unsupported HorizontalPodAutoscaler GVK: autoscaling/v2beta2, Kind=HorizontalPodAutoscaler"
    );
}

#[test]
fn pending_deletion_comes_first_for_every_kind() {
    for file in [
        "deployment-healthy.yaml",
        "configmap.yaml",
        "certificate-ready.yaml",
    ] {
        let mut obj = fixture(file);
        obj["metadata"]["deletionTimestamp"] = "2026-11-28T17:00:00Z".into();
        let h = assess(&obj).unwrap();
        assert_eq!(
            (h.code, h.message.as_str()),
            (Progressing, "Pending deletion"),
            "{file}"
        );
    }
}

#[test]
fn kinds_without_rules_have_no_health_in_argo_mode() {
    let argo = Assessor::new(Config::default().unknown_kinds(UnknownKindHealth::None)).unwrap();
    for file in [
        "configmap.yaml",
        "widget-no-signals.yaml",
        "database-generation-behind.yaml",
    ] {
        assert_eq!(argo.assess(&fixture(file)), None, "{file}");
    }
    // Kinds with Plumb's own scripts keep them, as Argo's bundled scripts keep theirs; so do
    // CRDs, which Argo CD 3.6 judges with a script it ships.
    for file in [
        "certificate-ready.yaml",
        "kustomization-stalled.yaml",
        "crd-established.yaml",
    ] {
        assert!(argo.assess(&fixture(file)).is_some(), "{file}");
    }
}

/// Argo CD ships a Lua script for CRDs (`apiextensions.k8s.io/CustomResourceDefinition`); Plumb
/// has the same rule built in (found by the conformance harness: the generic rule judged an
/// established CRD Healthy with its own message).
#[test]
fn an_established_crd_is_healthy_with_argo_cds_message() {
    let h = assess(&fixture("crd-established.yaml")).unwrap();
    assert_eq!((h.code, h.message.as_str()), (Healthy, "CRD is healthy"));
}
