//! Workload behaviour chosen by annotations (docs/testing.md, "Workload behaviour"): Plumb's kwok
//! stages in tools/k8s/kwok-stages.yaml, on the real control plane.

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::watcher;
use plumb_testenv::TestEnv;
use serde_json::json;

const DEADLINE: Duration = Duration::from_secs(90);

fn pod(name: &str, annotations: serde_json::Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "registry.example/hook:v1"}]
        }
    }))
    .expect("valid pod")
}

fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a str> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.status.as_str())
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

fn exit_code(pod: &Pod) -> Option<i32> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .first()?
        .state
        .as_ref()?
        .terminated
        .as_ref()
        .map(|t| t.exit_code)
}

/// Watches one Pod until `done` holds, returning every version seen (so a test can check what
/// the Pod went through, not only where it ended).
async fn watch_pod_until(api: &Api<Pod>, name: &str, done: impl Fn(&Pod) -> bool) -> Vec<Pod> {
    let mut seen = Vec::new();
    let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut stream = watcher::watcher(api.clone(), cfg).boxed();
    let start = Instant::now();
    loop {
        let left = DEADLINE.checked_sub(start.elapsed()).unwrap_or_default();
        let event = tokio::time::timeout(left, stream.try_next())
            .await
            .unwrap_or_else(|_| {
                let last = seen.last().and_then(|p: &Pod| p.status.clone());
                panic!("pod {name} not done within {DEADLINE:?}; last status: {last:#?}")
            })
            .expect("watch error")
            .expect("watch ended");
        if let watcher::Event::Apply(p) | watcher::Event::InitApply(p) = event {
            let finished = done(&p);
            seen.push(p);
            if finished {
                return seen;
            }
        }
    }
}

async fn poll<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < DEADLINE, "{what} within {DEADLINE:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn pod_annotated_run_for_runs_ready_then_succeeds() {
    let env = TestEnv::shared();
    let ns = env.namespace("run-for");
    let pods: Api<Pod> = Api::namespaced(env.client().await, ns.name());
    pods.create(
        &PostParams::default(),
        &pod("hook", json!({"testenv.plumb.dev/run-for": "2s"})),
    )
    .await
    .expect("create pod");

    let seen = watch_pod_until(&pods, "hook", |p| phase(p) == Some("Succeeded")).await;
    let last = seen.last().expect("at least one version");
    assert_eq!(exit_code(last), Some(0), "exit code 0: {:#?}", last.status);
    // It ran first: Running and Ready, then Succeeded (a bare Pod without the annotation runs for
    // ever, which is why hook Pods never finished before).
    assert!(
        seen.iter()
            .any(|p| phase(p) == Some("Running") && condition(p, "Ready") == Some("True")),
        "the pod was Running and Ready before it succeeded"
    );
}

#[tokio::test]
async fn pod_annotated_exit_fail_runs_then_fails_with_exit_code_1() {
    let env = TestEnv::shared();
    let ns = env.namespace("exit-fail");
    let pods: Api<Pod> = Api::namespaced(env.client().await, ns.name());
    pods.create(
        &PostParams::default(),
        &pod(
            "hook",
            json!({"testenv.plumb.dev/run-for": "1s", "testenv.plumb.dev/exit": "fail"}),
        ),
    )
    .await
    .expect("create pod");
    pods.create(&PostParams::default(), &pod("plain", json!({})))
        .await
        .expect("create pod");

    let seen = watch_pod_until(&pods, "hook", |p| phase(p) == Some("Failed")).await;
    let last = seen.last().expect("at least one version");
    assert_eq!(exit_code(last), Some(1), "exit code 1: {:#?}", last.status);
    assert_eq!(condition(last, "Ready"), Some("False"));
    assert!(
        seen.iter().any(|p| phase(p) == Some("Running")),
        "the pod ran before it failed"
    );
    // Without annotations a bare Pod keeps running.
    let plain = pods.get("plain").await.expect("get plain pod");
    assert_eq!(phase(&plain), Some("Running"));
    assert_eq!(condition(&plain, "Ready"), Some("True"));
}

#[tokio::test]
async fn deployment_with_never_ready_pods_never_becomes_available() {
    let env = TestEnv::shared();
    let ns = env.namespace("never-ready");
    let client = env.client().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns.name());
    let pods: Api<Pod> = Api::namespaced(client, ns.name());
    let d: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "progressDeadlineSeconds": 5,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": {"testenv.plumb.dev/never-ready": "true"}},
                "spec": {"containers": [{"name": "web", "image": "registry.example/web:v1"}]}
            }
        }
    }))
    .expect("valid deployment");
    deployments
        .create(&PostParams::default(), &d)
        .await
        .expect("create deployment");

    // The deployment controller gives up on it: Progressing=False, ProgressDeadlineExceeded.
    let status = poll("ProgressDeadlineExceeded", async || {
        let d = deployments.get("web").await.ok()?;
        let s = d.status?;
        let stuck = s.conditions.as_ref()?.iter().any(|c| {
            c.type_ == "Progressing"
                && c.status == "False"
                && c.reason.as_deref() == Some("ProgressDeadlineExceeded")
        });
        stuck.then_some(s)
    })
    .await;
    assert_eq!(status.available_replicas.unwrap_or(0), 0, "{status:#?}");
    assert_eq!(status.ready_replicas.unwrap_or(0), 0, "{status:#?}");
    let available = status
        .conditions
        .as_ref()
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Available"))
        .map(|c| c.status.clone());
    assert_eq!(available.as_deref(), Some("False"), "{status:#?}");

    // Its Pods run (containers started) but are not Ready, as with a failing readiness probe.
    let list = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("list pods");
    assert_eq!(list.items.len(), 2);
    for p in &list.items {
        assert_eq!(phase(p), Some("Running"), "{:#?}", p.status);
        assert_eq!(condition(p, "Ready"), Some("False"), "{:#?}", p.status);
    }
}

#[tokio::test]
async fn job_with_failing_pods_fails_and_a_plain_job_completes() {
    let env = TestEnv::shared();
    let ns = env.namespace("job-fail");
    let jobs: Api<Job> = Api::namespaced(env.client().await, ns.name());
    let job = |name: &str, annotations: serde_json::Value| -> Job {
        serde_json::from_value(json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name},
            "spec": {
                "backoffLimit": 0,
                "template": {
                    "metadata": {"annotations": annotations},
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "migrate", "image": "registry.example/migrate:v1"}]
                    }
                }
            }
        }))
        .expect("valid job")
    };
    jobs.create(
        &PostParams::default(),
        &job("migrate", json!({"testenv.plumb.dev/exit": "fail"})),
    )
    .await
    .expect("create job");
    jobs.create(&PostParams::default(), &job("plain", json!({})))
        .await
        .expect("create job");

    let finished = |name: &'static str, type_: &'static str| {
        let jobs = jobs.clone();
        async move {
            poll(&format!("job {name} {type_}"), async || {
                let j = jobs.get(name).await.ok()?;
                let c = j
                    .status?
                    .conditions?
                    .into_iter()
                    .find(|c| c.type_ == type_ && c.status == "True")?;
                Some(c)
            })
            .await
        }
    };
    let failed = finished("migrate", "Failed").await;
    assert_eq!(
        failed.reason.as_deref(),
        Some("BackoffLimitExceeded"),
        "{failed:#?}"
    );
    finished("plain", "Complete").await;
    let migrate = jobs.get("migrate").await.expect("get job");
    assert_eq!(
        migrate.status.and_then(|s| s.succeeded).unwrap_or(0),
        0,
        "the failing job never succeeded"
    );
}
