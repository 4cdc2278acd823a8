//! plumb-kube against the real control plane (plumb-testenv): server-side apply and dry-run,
//! discovery after a CRD is installed, the live cache, and Plumb's own `deploy/` manifests.

// Helpers outside #[test] functions panic on purpose: a failed setup fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod apply;
mod deploy;
mod discovery;
mod live_cache;
mod namespaced_cache;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use plumb_kube::{ApiDiscovery, Applier};
use plumb_testenv::TestEnv;
use serde_json::Value;

/// How long a test waits for the cluster to reach a state.
const DEADLINE: Duration = Duration::from_secs(60);

/// A client, discovery and applier for the shared test control plane.
async fn setup() -> (kube::Client, Arc<ApiDiscovery>, Applier) {
    let client = TestEnv::shared().client().await;
    let discovery = Arc::new(ApiDiscovery::new(client.clone()).await.expect("discovery"));
    let applier = Applier::new(discovery.clone());
    (client, discovery, applier)
}

/// Polls `check` until it returns `Some`, failing the test with `what` at the deadline.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Reads a YAML file holding one or more documents.
fn read_yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    docs.into_iter().filter(|d| !d.is_null()).collect()
}

/// Waits until a CRD is Established, then refreshes discovery.
async fn wait_established(applier: &Applier, name: &str) {
    let key =
        plumb_model::ResourceKey::new("apiextensions.k8s.io", "CustomResourceDefinition", "", name);
    eventually(&format!("CRD {name} to be Established"), || async {
        let crd = applier.get(&key).await.expect("get CRD")?;
        let conditions = crd.pointer("/status/conditions")?.as_array()?.clone();
        conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
            .then_some(())
    })
    .await;
    applier
        .discovery()
        .refresh()
        .await
        .expect("refresh discovery");
}

/// Deletes a CRD and waits until it is gone. Kubernetes' CRD finalizer can stall for its
/// informer's 5-minute resync when the CRD is deleted moments after it changed: listing the
/// instances fails ("storage is (re)initializing"), the retry meets a conflict it drops, and an
/// update of the Terminating condition alone is not requeued. Touching a label requeues it, as
/// the resync would.
async fn delete_crd(applier: &Applier, client: &kube::Client, name: &str) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{Api, Patch, PatchParams};

    let key =
        plumb_model::ResourceKey::new("apiextensions.k8s.io", "CustomResourceDefinition", "", name);
    let deleted = applier
        .delete(&key, plumb_kube::PropagationPolicy::Background)
        .await
        .expect("delete CRD");
    assert_ne!(deleted, plumb_kube::Deleted::NotFound, "CRD {name}");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut nudges = 0u32;
    eventually(&format!("CRD {name} to be gone"), || {
        nudges += 1;
        let nudge = nudges;
        let crds = crds.clone();
        async move {
            if crds.get_opt(name).await.expect("get CRD").is_none() {
                return Some(());
            }
            // Every 5 s (polls are 200 ms apart).
            if nudge.is_multiple_of(25) {
                let label = serde_json::json!({"metadata": {"labels": {"plumb-test/finalizer-nudge": nudge.to_string()}}});
                // Gone in the meantime: the next poll sees it.
                let _ = crds.patch(name, &PatchParams::default(), &Patch::Merge(&label)).await;
            }
            None
        }
    })
    .await;
}
