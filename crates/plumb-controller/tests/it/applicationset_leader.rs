//! Two `plumb controller` replicas sharing a control namespace through shard Leases: only the
//! leader (the lowest live shard) runs the ApplicationSet controller's reconciles; when it
//! stops, its Lease lapses and the other replica takes over. Each replica runs in a runtime of
//! its own (stopping it ends every task it started, its Lease renewal too) and reaches the API
//! server with its own User-Agent, so the managedFields say who wrote what.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_controller::ControllerConfig;
use plumb_controller::sharding::ShardingConfig;
use plumb_testenv::TestEnv;
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(120);

/// A replica: its runtime's thread, stopped by dropping `stop`.
struct Replica {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Replica {
    fn start(ns: &str, shard: usize, kubeconfig: PathBuf) -> Self {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let ns = ns.to_string();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let client = client_as(&kubeconfig, &format!("actlt-replica-{shard}")).await;
                let mut config = ControllerConfig::new(tempfile::tempdir().expect("dir").keep());
                config.control_namespace = ns;
                config.metrics_addr = None;
                config.sharding = ShardingConfig {
                    replicas: 2,
                    shard: Some(shard),
                    lease_duration: Duration::from_secs(4),
                    identity: Some(format!("actlt-replica-{shard}")),
                    ..ShardingConfig::default()
                };
                tokio::select! {
                    r = plumb_controller::run(client, config) => eprintln!("REPLICA {shard} STOPPED: {r:?}"),
                    _ = stopped => {}
                }
            });
            // Every task of the replica ends here: its watches, reconciles and Lease renewal.
            rt.shutdown_background();
        });
        Self {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A client sending `agent` as its User-Agent: the managedFields' manager of its writes.
async fn client_as(kubeconfig: &std::path::Path, agent: &str) -> kube::Client {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let mut config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config");
    // The header types are http's, inferred from the field (no direct dependency on it).
    config.headers.push((
        "user-agent".parse().expect("header name"),
        agent.parse().expect("agent"),
    ));
    kube::Client::try_from(config).expect("client")
}

async fn eventually<T, Fut: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> Fut,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The managers of `obj`'s managedFields, for the main resource or one subresource.
fn managers(obj: &Value, subresource: &str) -> BTreeSet<String> {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["subresource"].as_str().unwrap_or_default() == subresource)
        .filter_map(|f| f["manager"].as_str().map(str::to_string))
        .collect()
}

fn set(elements: &[&str]) -> Value {
    let elements: Vec<Value> = elements.iter().map(|n| json!({"name": n})).collect();
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": "fleet"},
        "spec": {
            "generators": [{"list": {"elements": elements}}],
            "template": {"metadata": {"name": "{{name}}"},
                         "spec": {"project": "default",
                                  "source": {"repoURL": "https://example.com/r.git", "path": "{{name}}"},
                                  "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"}}}
        }
    })
}

async fn holder(leases: &Api<Lease>, shard: usize) -> Option<String> {
    let lease = leases
        .get_opt(&format!("plumb-controller-shard-{shard}"))
        .await
        .ok()??;
    lease.spec?.holder_identity
}

#[tokio::test]
async fn only_the_leader_reconciles_sets_and_a_survivor_takes_over() {
    let env = TestEnv::shared();
    crate::support::install_crds(env);
    let client = env.client().await;
    let ns = env.namespace("actlt-lead");
    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns.name(), &plumb_app::appproject_resource());
    let project: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default"},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}
    }))
    .expect("project");
    projects
        .create(&PostParams::default(), &project)
        .await
        .expect("project");
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns.name());
    let sets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns.name(),
        &plumb_appset::controller::applicationset_resource(),
    );
    let apps: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns.name(),
        &plumb_app::application_resource(),
    );
    let kubeconfig = env.kubeconfig().to_path_buf();

    let mut leader = Replica::start(ns.name(), 0, kubeconfig.clone());
    eventually("shard 0's Lease", || async {
        (holder(&leases, 0).await.as_deref() == Some("actlt-replica-0")).then_some(())
    })
    .await;
    let _follower = Replica::start(ns.name(), 1, kubeconfig);
    eventually("shard 1's Lease", || async {
        (holder(&leases, 1).await.as_deref() == Some("actlt-replica-1")).then_some(())
    })
    .await;

    let obj: DynamicObject = serde_json::from_value(set(&["a"])).expect("set");
    sets.create(&PostParams::default(), &obj)
        .await
        .expect("create set");
    let json = |o: DynamicObject| serde_json::to_value(o).expect("json");
    let fleet = eventually("fleet reconciled", || async {
        let s = json(sets.get("fleet").await.ok()?);
        (s["status"]["resourcesCount"] == 1).then_some(s)
    })
    .await;
    let a = json(apps.get("a").await.expect("a"));
    assert_eq!(a["metadata"]["ownerReferences"][0]["name"], "fleet");
    // Only the leader wrote the set's status and created its Application.
    assert_eq!(
        managers(&fleet, "status"),
        BTreeSet::from(["actlt-replica-0".to_string()]),
        "{fleet}"
    );

    // The leader stops; once its Lease lapses the other replica leads and reconciles.
    leader.stop();
    sets.patch(
        "fleet",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": set(&["a", "b"])["spec"]})),
    )
    .await
    .expect("patch set");
    let b = eventually("b created by the survivor", || async {
        apps.get_opt("b").await.ok()?.map(json)
    })
    .await;
    assert!(managers(&b, "").contains("actlt-replica-1"), "{b}");
    let fleet = eventually("the survivor's status", || async {
        let s = json(sets.get("fleet").await.ok()?);
        (s["status"]["resourcesCount"] == 2).then_some(s)
    })
    .await;
    assert!(
        managers(&fleet, "status").contains("actlt-replica-1"),
        "{fleet}"
    );
}
