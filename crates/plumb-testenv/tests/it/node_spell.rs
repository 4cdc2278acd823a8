//! The test control plane survives a NotReady spell of its fake node: with kwok frozen past the
//! node monitor grace period (as a starved kwok on a loaded machine was, for 81 s), the node goes
//! NotReady and every Pod Ready=False; when kwok runs again the node and the same Pods (none
//! evicted) are Ready again. Before, kwok's ready stage acted on Pending Pods only and the Pods
//! stayed Ready=False for good.
//!
//! A private control plane with a 10 s grace period (the default is 180 s), so the spell is short.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, PostParams};
use plumb_testenv::{Component, PrivateOptions, TestEnv};
use serde_json::json;

const DEADLINE: Duration = Duration::from_secs(120);

fn node_ready(node: &Node) -> Option<String> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status.clone())
}

fn pod_ready(pod: &Pod) -> Option<String> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.status.clone())
}

/// The pods by name, with their UID and Ready status.
async fn pods_ready(pods: &Api<Pod>) -> BTreeMap<String, (String, Option<String>)> {
    pods.list(&ListParams::default())
        .await
        .expect("list pods")
        .items
        .iter()
        .map(|p| {
            (
                p.metadata.name.clone().unwrap_or_default(),
                (p.metadata.uid.clone().unwrap_or_default(), pod_ready(p)),
            )
        })
        .collect()
}

async fn wait_for<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < DEADLINE, "{what} within {DEADLINE:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn pods_are_ready_again_after_a_node_not_ready_spell_and_none_is_evicted() {
    let env = TestEnv::private_with(&PrivateOptions {
        node_grace_seconds: Some(10),
        ..Default::default()
    })
    .expect("a private control plane");
    let ns = env.namespace("spell");
    let client = env.client().await;
    let nodes: Api<Node> = Api::all(client.clone());
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns.name());
    let deployments: Api<Deployment> = Api::namespaced(client, ns.name());

    let d: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.example/web:v1"}]}
            }
        }
    }))
    .expect("valid deployment");
    deployments
        .create(&PostParams::default(), &d)
        .await
        .expect("create deployment");
    // A bare Pod that tolerates the node's NoExecute taints for 0 s: with taint-based eviction on
    // it would be deleted the moment the node is tainted unreachable.
    let bare: Pod = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bare"},
        "spec": {
            "containers": [{"name": "main", "image": "registry.example/main:v1"}],
            "tolerations": [
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0},
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}
            ]
        }
    }))
    .expect("valid pod");
    pods.create(&PostParams::default(), &bare)
        .await
        .expect("create pod");

    let before = wait_for("three pods Ready", async || {
        let now = pods_ready(&pods).await;
        (now.len() == 3 && now.values().all(|(_, r)| r.as_deref() == Some("True"))).then_some(now)
    })
    .await;

    env.pause(Component::Kwok).expect("pause kwok");
    // Frozen until the spell is seen: the node not Ready and every Pod Ready=False, each observed
    // at least once (the node-lifecycle controller marks the Pods after the node).
    let mut node_seen_down = false;
    let spell = wait_for("the node NotReady and every pod Ready=False", async || {
        let node = nodes.get("kwok-node-0").await.ok()?;
        node_seen_down |= node_ready(&node).as_deref() != Some("True");
        let now = pods_ready(&pods).await;
        let all_down = now.len() == 3 && now.values().all(|(_, r)| r.as_deref() == Some("False"));
        (node_seen_down && all_down).then_some(now)
    })
    .await;
    env.resume(Component::Kwok).expect("resume kwok");

    let after = wait_for("the node and every pod Ready again", async || {
        let node = nodes.get("kwok-node-0").await.ok()?;
        let tainted = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|t| !t.is_empty());
        if node_ready(&node).as_deref() != Some("True") || tainted {
            return None;
        }
        let now = pods_ready(&pods).await;
        now.values()
            .all(|(_, r)| r.as_deref() == Some("True"))
            .then_some(now)
    })
    .await;
    // The same Pods: none was evicted and replaced.
    let uids = |m: &BTreeMap<String, (String, Option<String>)>| {
        m.iter()
            .map(|(n, (uid, _))| (n.clone(), uid.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(
        uids(&after),
        uids(&before),
        "no pod replaced; during the spell: {spell:#?}"
    );
    wait_for("the deployment available again", async || {
        let d = deployments.get("web").await.ok()?;
        (d.status?.available_replicas == Some(2)).then_some(())
    })
    .await;
}
