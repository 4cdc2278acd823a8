//! The live cache's store at the scale of DESIGN.md's memory budget: 10,000 tracked Deployments
//! (1,000 apps × 10, full bodies with managedFields) and 50,000 untracked Pods (metadata only).
//! Measures upserts and per-app lookups, and prints the resident memory the store added.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use kube::api::DynamicObject;
use kube::discovery::ApiResource;
use plumb_kube::bench_support::Store;
use plumb_kube::{ApiKind, Tracking, tracking_id};
use plumb_model::ResourceKey;
use serde_json::json;

const APPS: usize = 1_000;
const PER_APP: usize = 10;
const PODS: usize = 50_000;

fn kind(group: &str, kind: &str, plural: &str) -> ApiKind {
    let api_version = if group.is_empty() {
        "v1".to_string()
    } else {
        format!("{group}/v1")
    };
    ApiKind {
        resource: ApiResource {
            group: group.into(),
            version: "v1".into(),
            api_version,
            kind: kind.into(),
            plural: plural.into(),
        },
        namespaced: true,
        verbs: vec!["list".into(), "watch".into()],
        status_subresource: false,
    }
}

/// A Deployment as a list returns it, with managedFields and status (about 3 KB of JSON).
fn deployment(app: usize, i: usize, rv: u64) -> DynamicObject {
    let ns = format!("team-{}", app % 50);
    let name = format!("app-{app}-d{i}");
    let key = ResourceKey::new("apps", "Deployment", &ns, &name);
    serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": ns, "uid": format!("d-{app}-{i}"), "resourceVersion": rv.to_string(),
            "generation": 4, "creationTimestamp": "2026-11-29T10:02:21Z",
            "labels": {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": format!("app-{app}")},
            "annotations": {"argocd.argoproj.io/tracking-id": tracking_id(&format!("app-{app}"), &key, &ns),
                            "deployment.kubernetes.io/revision": "4"},
            "managedFields": [
                {"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "plumb-controller", "operation": "Apply",
                 "time": "2026-11-29T10:02:21Z",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:argocd.argoproj.io/tracking-id": {}}, "f:labels": {"f:app.kubernetes.io/name": {}}},
                              "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                              "f:spec": {"f:containers": {"k:{\"name\":\"api\"}": {".": {}, "f:image": {}, "f:name": {}, "f:ports": {}, "f:resources": {}}}}}}}},
                {"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager", "operation": "Update",
                 "subresource": "status", "time": "2026-11-29T10:02:40Z",
                 "fieldsV1": {"f:status": {"f:availableReplicas": {}, "f:conditions": {}, "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}, "f:updatedReplicas": {}}}}
            ]
        },
        "spec": {
            "replicas": 3, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "api", "image": format!("registry.example.com/{name}:v1.4.0"),
                                                  "imagePullPolicy": "IfNotPresent", "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                                  "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                                                  "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                                  "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                                  "securityContext": {"runAsNonRoot": true}, "terminationGracePeriodSeconds": 30}}
        },
        "status": {"availableReplicas": 3, "observedGeneration": 4, "readyReplicas": 3, "replicas": 3, "updatedReplicas": 3,
                   "conditions": [
                       {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
                        "lastTransitionTime": "2026-11-29T10:02:40Z", "lastUpdateTime": "2026-11-29T10:02:40Z"},
                       {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                        "message": format!("ReplicaSet \"{name}-7d9f8b6c5\" has successfully progressed."),
                        "lastTransitionTime": "2026-11-29T10:02:21Z", "lastUpdateTime": "2026-11-29T10:02:40Z"}]}
    }))
    .expect("valid deployment")
}

/// An untracked Pod owned by a ReplicaSet.
fn pod(i: usize, rv: u64) -> DynamicObject {
    serde_json::from_value(json!({
        "metadata": {
            "name": format!("worker-{i}"), "namespace": format!("team-{}", i % 50), "uid": format!("p-{i}"),
            "resourceVersion": rv.to_string(), "labels": {"app": "worker", "pod-template-hash": "7d9f8b6c5"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "worker-7d9f8b6c5",
                                 "uid": format!("rs-{}", i % 500), "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {"containers": [{"name": "worker", "image": "registry.example.com/worker:2.1.0"}], "nodeName": "kwok-node-0"},
        "status": {"phase": "Running", "podIP": "10.0.0.1"}
    }))
    .expect("valid pod")
}

fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn populated() -> Store {
    let tracking = Tracking::default();
    let (deployments, pods) = (
        kind("apps", "Deployment", "deployments"),
        kind("", "Pod", "pods"),
    );
    let mut store = Store::default();
    let start = resident_bytes();
    for i in 0..PODS {
        store.upsert(&pods, pod(i, 1), &tracking);
    }
    let after_pods = resident_bytes();
    for app in 0..APPS {
        for i in 0..PER_APP {
            store.upsert(&deployments, deployment(app, i, 1), &tracking);
        }
    }
    if let (Some(s), Some(p), Some(d)) = (start, after_pods, resident_bytes()) {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        eprintln!(
            "live store: {PODS} untracked Pods +{:.1} MiB, then {} tracked Deployments +{:.1} MiB",
            mib(p.saturating_sub(s)),
            APPS * PER_APP,
            mib(d.saturating_sub(p))
        );
    }
    store
}

fn bench(c: &mut Criterion) {
    let before = resident_bytes();
    let start = Instant::now();
    let mut store = populated();
    let after = resident_bytes();
    if let (Some(b), Some(a)) = (before, after) {
        eprintln!(
            "live store: {} tracked + {PODS} untracked objects filled in {:.2?}, resident memory +{:.1} MiB",
            APPS * PER_APP,
            start.elapsed(),
            a.saturating_sub(b) as f64 / (1024.0 * 1024.0)
        );
    }
    let tracking = Tracking::default();
    let deployments = kind("apps", "Deployment", "deployments");
    let pods = kind("", "Pod", "pods");

    c.bench_function("app_objects/10_of_60k", |b| {
        let mut app = 0;
        b.iter(|| {
            app = (app + 7) % APPS;
            black_box(store.app_objects(&format!("app-{app}")))
        })
    });
    // Object construction is part of each iteration (as in the watch stream, which decodes it).
    let mut rv = 2;
    c.bench_function("upsert/untracked_pod", |b| {
        b.iter(|| {
            rv += 1;
            black_box(store.upsert(&pods, pod((rv as usize) % PODS, rv), &tracking))
        })
    });
    c.bench_function("upsert/tracked_deployment", |b| {
        b.iter(|| {
            rv += 1;
            let n = rv as usize;
            black_box(store.upsert(
                &deployments,
                deployment(n % APPS, n % PER_APP, rv),
                &tracking,
            ))
        })
    });
    c.bench_function("decode_only/tracked_deployment", |b| {
        b.iter(|| {
            rv += 1;
            black_box(deployment((rv as usize) % APPS, 0, rv))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
