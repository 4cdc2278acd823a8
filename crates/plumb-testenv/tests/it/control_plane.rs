use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::discovery::{self, Discovery, Scope};
use kube::runtime::watcher;
use plumb_testenv::TestEnv;
use serde_json::json;

const DEADLINE: Duration = Duration::from_secs(90);

fn deployment(name: &str, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": image}]}
            }
        }
    }))
    .expect("valid deployment")
}

/// Watches one Deployment until `done` holds for its status, recording every status seen.
async fn watch_until(
    api: &Api<Deployment>,
    name: &str,
    mut done: impl FnMut(&Deployment) -> bool,
) -> Vec<serde_json::Value> {
    let mut seen = Vec::new();
    let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut stream = watcher::watcher(api.clone(), cfg).boxed();
    let start = Instant::now();
    loop {
        let left = DEADLINE.checked_sub(start.elapsed()).unwrap_or_default();
        let event = tokio::time::timeout(left, stream.try_next())
            .await
            .unwrap_or_else(|_| {
                panic!("deployment {name} not done within {DEADLINE:?}; statuses seen: {seen:#?}")
            })
            .expect("watch error")
            .expect("watch ended");
        let objs = match event {
            watcher::Event::Apply(d) | watcher::Event::InitApply(d) => vec![d],
            _ => vec![],
        };
        for d in objs {
            seen.push(json!({
                "generation": d.metadata.generation,
                "status": d.status,
            }));
            if done(&d) {
                return seen;
            }
        }
    }
}

fn is_complete(d: &Deployment, image: &str) -> bool {
    let s = match &d.status {
        Some(s) => s,
        None => return false,
    };
    let img_ok = d
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| p.containers[0].image.as_deref() == Some(image))
        .unwrap_or(false);
    img_ok
        && s.observed_generation == d.metadata.generation
        && s.updated_replicas == Some(3)
        && s.available_replicas == Some(3)
        && s.ready_replicas == Some(3)
        && s.replicas == Some(3)
}

#[tokio::test]
async fn deployment_rolls_out_on_the_kwok_node_and_rolls_a_new_image() {
    let env = TestEnv::shared();
    let ns = env.namespace("rollout");
    let client = env.client().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.name());

    deployments
        .create(
            &PostParams::default(),
            &deployment("web", "registry.example/web:v1"),
        )
        .await
        .expect("create deployment");
    watch_until(&deployments, "web", |d| {
        is_complete(d, "registry.example/web:v1")
    })
    .await;

    // Pods were made by the real ReplicaSet controller, scheduled onto the kwok node, and are Ready.
    let list = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("list pods");
    let running: Vec<&Pod> = list
        .items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect();
    assert_eq!(running.len(), 3, "three pods");
    for pod in running {
        let spec = pod.spec.as_ref().expect("pod spec");
        assert_eq!(
            spec.node_name.as_deref(),
            Some("kwok-node-0"),
            "scheduled onto the kwok node"
        );
        let owner = &pod.metadata.owner_references.as_ref().expect("owned")[0];
        assert_eq!(owner.kind, "ReplicaSet");
        let status = pod.status.as_ref().expect("pod status");
        assert_eq!(status.phase.as_deref(), Some("Running"));
        let ready = status
            .conditions
            .as_ref()
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
            .map(|c| c.status.as_str());
        assert_eq!(ready, Some("True"), "pod {:?} ready", pod.metadata.name);
    }

    // An image change rolls out through a new ReplicaSet, passing through updated < replicas.
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "registry.example/web:v2"}]}}}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Strategic(&patch))
        .await
        .expect("patch image");
    let seen = watch_until(&deployments, "web", |d| {
        is_complete(d, "registry.example/web:v2")
    })
    .await;
    let partial = seen.iter().any(|s| {
        let updated = s["status"]["updatedReplicas"].as_i64().unwrap_or(0);
        let observed = s["status"]["observedGeneration"].as_i64().unwrap_or(0);
        observed == s["generation"].as_i64().unwrap_or(-1) && updated < 3
    });
    assert!(
        partial,
        "rollout passed through updatedReplicas < replicas; seen: {seen:#?}"
    );

    let rs: Api<k8s_openapi::api::apps::v1::ReplicaSet> = Api::namespaced(client, ns.name());
    let sets = rs
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("list replicasets");
    assert_eq!(sets.items.len(), 2, "old and new ReplicaSet");
}

#[tokio::test]
async fn crd_becomes_established_and_custom_resources_are_found_through_discovery() {
    let env = TestEnv::shared();
    let ns = env.namespace("crd");
    let client = env.client().await;
    // A group unique to this process so repeated runs against one cluster do not collide.
    let group = format!("p{}.testenv.plumb.dev", std::process::id());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("databases.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "databases", "singular": "database", "kind": "Database", "listKind": "DatabaseList"},
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}}
            }]
        }
    }))
    .expect("valid crd");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("create crd");

    let start = Instant::now();
    loop {
        let got = crds
            .get(&format!("databases.{group}"))
            .await
            .expect("get crd");
        let established = got
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if established {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "CRD not Established within {DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Discovery (run after the CRD is Established) finds the new kind with its real plural.
    let start = Instant::now();
    let (ar, caps) = loop {
        // Discovery is eventually consistent after Established: the group can be listed
        // under /apis a moment before /apis/<group>/<version> is served (a 404), so a 404
        // inside the deadline means "not yet", anything else is a failure.
        match Discovery::new(client.clone())
            .filter(&[group.as_str()])
            .run()
            .await
        {
            Ok(d) => {
                if let Some(found) = d
                    .groups()
                    .flat_map(|g| g.recommended_resources())
                    .find(|(ar, _)| ar.kind == "Database")
                {
                    break found;
                }
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(other) => panic!("discovery: {other}"),
        }
        assert!(start.elapsed() < DEADLINE, "Database kind not discovered");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(ar.plural, "databases");
    assert_eq!(caps.scope, Scope::Namespaced);
    let pinned = discovery::pinned_kind(
        &client,
        &kube::api::GroupVersionKind::gvk(&group, "v1alpha1", "Database"),
    )
    .await
    .expect("pinned kind");
    assert_eq!(pinned.0.plural, "databases");

    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns.name(), &ar);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{group}/v1alpha1"),
        "kind": "Database",
        "metadata": {"name": "orders"},
        "spec": {"engine": "postgres", "storageGiB": 20}
    }))
    .expect("valid cr");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create custom resource");
    let back = api.get("orders").await.expect("read back");
    assert_eq!(back.data["spec"]["engine"], "postgres");
    assert_eq!(back.data["spec"]["storageGiB"], 20);

    crds.delete(&format!("databases.{group}"), &Default::default())
        .await
        .expect("delete crd");
}

#[test]
fn kubectl_works_with_the_written_kubeconfig() {
    let env = TestEnv::shared();
    let out = env
        .kubectl()
        .args(["get", "nodes", "-o", "name"])
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl get nodes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "node/kwok-node-0"
    );

    let out = env
        .kubectl()
        .args(["version", "-o", "json"])
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl version: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("version json");
    assert_eq!(
        v["serverVersion"]["gitVersion"], "v1.36.3",
        "server reports the real release"
    );
    assert_eq!(v["serverVersion"]["major"], "1");
    assert_eq!(v["serverVersion"]["minor"], "36");
}
