//! The controller's own Kubernetes requests, counted by `argocd_app_k8s_request_total` (read from
//! its `/metrics`): a small fleet's cold start, then an idle poll wave that must write nothing.
//!
//! Only requests made for an Application carry its namespace label (the control namespace here),
//! so other tests' controllers in the same process do not count; the live cache's lists and
//! watches and discovery are shared by every Application and are not labelled.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kube::api::{Api, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::Controlled;

/// Applications in the fleet; `PLUMB_TRAFFIC_APPS` sets another size for a measurement
/// (docs/performance.md gives the figures at 100).
fn apps() -> usize {
    std::env::var("PLUMB_TRAFFIC_APPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(10)
}

/// One app directory: a Deployment, a Service, a ServiceAccount and seven ConfigMaps (ten
/// objects, the mix of `bench/scale` and of the conformance fleet).
fn app_files(app: &str) -> Vec<(String, String)> {
    let mut files = vec![
        (
            format!("{app}/deploy.yaml"),
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: {app}\n  template:\n    metadata:\n      labels:\n        app: {app}\n    spec:\n      containers:\n      - name: app\n        image: registry.example/{app}:1\n"
            ),
        ),
        (
            format!("{app}/svc.yaml"),
            format!(
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: {app}\nspec:\n  selector:\n    app: {app}\n  ports:\n  - port: 80\n"
            ),
        ),
        (
            format!("{app}/sa.yaml"),
            format!("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {app}\n"),
        ),
    ];
    for i in 0..7 {
        files.push((
            format!("{app}/cm-{i}.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {app}-{i}\ndata:\n  value: \"{i}\"\n"
            ),
        ));
    }
    files
}

/// A port nobody listens on (bound, then released for the controller's metrics server).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `/metrics` of the controller, which runs on this test's runtime: read without blocking it.
async fn scrape(port: u16) -> String {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("metrics server");
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .expect("request");
    let mut out = String::new();
    s.read_to_string(&mut out).await.expect("answer");
    out
}

/// Sums of `metric` over the series whose labels include `namespace="<ns>"`, by `key` labels.
fn sums(text: &str, metric: &str, ns: &str, key: &[&str]) -> BTreeMap<Vec<String>, f64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(metric) else {
            continue;
        };
        let Some(rest) = rest.strip_prefix('{') else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let labels: BTreeMap<&str, &str> = labels
            .split("\",")
            .filter_map(|kv| kv.split_once("=\""))
            .map(|(k, v)| (k, v.trim_end_matches('"')))
            .collect();
        if labels.get("namespace") != Some(&ns) {
            continue;
        }
        let k: Vec<String> = key
            .iter()
            .map(|l| labels.get(l).copied().unwrap_or_default().to_string())
            .collect();
        *out.entry(k).or_insert(0.0) += value.trim().parse::<f64>().unwrap_or(0.0);
    }
    out
}

/// Requests made for this namespace's Applications: (verb, resource) → count.
async fn requests(port: u16, ns: &str) -> BTreeMap<Vec<String>, f64> {
    sums(
        &scrape(port).await,
        "argocd_app_k8s_request_total",
        ns,
        &["verb", "resource_kind"],
    )
}

/// Ref listings (`git ls-remote`) this controller made, for every repository.
async fn listings(port: u16) -> f64 {
    scrape(port)
        .await
        .lines()
        .find_map(|l| l.strip_prefix("plumb_git_requests_total{request=\"ls-remote\"} "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

async fn reconciles(port: u16, ns: &str) -> f64 {
    sums(&scrape(port).await, "argocd_app_reconcile_count", ns, &[])
        .values()
        .sum()
}

/// Waits until the request counters stop moving for a few seconds (the controller is idle).
async fn settled(port: u16, ns: &str) -> BTreeMap<Vec<String>, f64> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = requests(port, ns).await;
    let mut quiet_since = Instant::now();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = requests(port, ns).await;
        if now != last {
            last = now;
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= Duration::from_secs(4) {
            break;
        }
    }
    last
}

fn table(counts: &BTreeMap<Vec<String>, f64>) -> String {
    counts
        .iter()
        .map(|(k, v)| format!("  {:<8} {:<22} {v}\n", k[0], k[1]))
        .collect()
}

fn is_write(verb: &str) -> bool {
    matches!(
        verb,
        "create" | "update" | "patch" | "delete" | "deletecollection"
    )
}

#[tokio::test]
async fn a_fleet_cold_start_and_an_idle_poll_wave_cost_what_the_work_needs() {
    let env = TestEnv::shared();
    let dest = env.namespace("dest-traffic");
    let repo = GitRepo::new();
    // Names unique to this process: tracking instances are names, and objects a killed earlier
    // run left behind must not look like this run's own.
    let apps = apps();
    let names: Vec<String> = (0..apps)
        .map(|i| format!("traffic-{}-{i}", std::process::id()))
        .collect();
    let files: Vec<(String, String)> = names.iter().flat_map(|n| app_files(n)).collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    repo.commit(&refs, "fleet");
    let port = free_port();
    let ctl = Controlled::start_with(env, "ctl-traffic", |c| {
        c.metrics_addr = Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
        // A minute (git_sharing's choice), so how many waves share a listing does not depend on
        // how fast this machine runs them.
        c.source.ref_cache_ttl = Duration::from_secs(60);
    })
    .await;
    let ns = ctl.ns.name().to_string();
    for name in &names {
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": name},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                     "syncPolicy": {"automated": {"prune": true, "selfHeal": true}}}
        }))
        .await;
    }
    // The control plane's Deployment controller sets the pace to Healthy: a bigger fleet gets
    // a longer deadline (a deadline only, nothing is timed).
    let deadline = Instant::now() + Duration::from_secs(90 + 3 * apps as u64);
    for name in &names {
        loop {
            let a = serde_json::to_value(ctl.apps().get(name).await.expect("application"))
                .expect("json");
            if a["status"]["sync"]["status"] == "Synced"
                && a["status"]["health"]["status"] == "Healthy"
                && a["status"]["operationState"]["phase"] == "Succeeded"
                && a["operation"].is_null()
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: Synced and Healthy after its sync not reached; last seen:\n{:#}",
                a["status"]
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    let cold = settled(port, &ns).await;
    let total: f64 = cold.values().sum();
    let per_app = total / apps as f64;
    eprintln!(
        "cold start of {apps} apps x 10 objects: {total} requests, {per_app:.1} per app\n{}",
        table(&cold)
    );

    // An idle poll wave: every Application reconciled again (a settings change re-queues them
    // all, then the poller every 2 s) with nothing changed in Git or in the cluster.
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(ctl.client.clone(), &ns);
    let before = reconciles(port, &ns).await;
    let listed_before = listings(port).await;
    cms.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm"},
            "data": {"timeout.reconciliation": "2s", "timeout.reconciliation.jitter": "0s"}
        }))
        .expect("configmap"),
    )
    .await
    .expect("create argocd-cm");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let done = reconciles(port, &ns).await;
        if done >= before + 2.0 * apps as f64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the poll waves did not reconcile every Application twice: {done} reconciles after {before}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Stop the polls before counting, so no reconcile is half-way when the counters are read.
    cms.patch(
        "argocd-cm",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"data": {"timeout.reconciliation": "0"}})),
    )
    .await
    .expect("stop polling");
    let idle = settled(port, &ns).await;
    let waves = (reconciles(port, &ns).await - before) / apps as f64;
    let listed = listings(port).await - listed_before;
    let wave: BTreeMap<Vec<String>, f64> = idle
        .iter()
        .map(|(k, v)| (k.clone(), v - cold.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, v)| *v > 0.0)
        .collect();
    eprintln!(
        "idle poll waves ({waves:.1} waves of {apps}): {listed} ref listings; requests\n{}",
        table(&wave)
    );
    let writes: Vec<_> = wave.iter().filter(|(k, _)| is_write(&k[0])).collect();
    assert!(
        writes.is_empty(),
        "an idle poll wave wrote: {writes:?}\n{}",
        table(&wave)
    );
    let app_reads: Vec<_> = wave
        .iter()
        .filter(|(k, _)| k[0] == "get" && matches!(k[1].as_str(), "applications" | "appprojects"))
        .collect();
    assert!(
        app_reads.is_empty(),
        "Applications and AppProjects come from the watch caches, not a GET per reconcile: {app_reads:?}"
    );
    // Every Application is on one repository: a wave lists it once at most (a poll shares the
    // listing kept for the TTL), not once per Application.
    assert!(
        listed <= waves.ceil(),
        "{listed} ref listings of one repository in {waves:.1} idle poll waves"
    );
    // Asserted last, so the idle wave's figures are printed even while these bounds are not met.
    let per_app_of = |verb: &str, resource: &str| {
        cold.get(&vec![verb.to_string(), resource.to_string()])
            .copied()
            .unwrap_or(0.0)
            / apps as f64
    };
    // Its creation's dry run and its apply: the revision annotation and the status its
    // controller writes moments later cost neither a dry run nor a read.
    assert!(
        per_app_of("patch", "deployments") <= 2.0 && per_app_of("get", "deployments") == 0.0,
        "a Deployment dry-run again after its controller wrote to it\n{}",
        table(&cold)
    );
    // Argo CD's: the automated sync's request, its completion, two sync and at most three health
    // transitions. A sync status that flaps, or a second start event, is one more.
    assert!(
        per_app_of("create", "events") <= 7.0,
        "more events than transitions\n{}",
        table(&cold)
    );
    assert!(
        per_app < COLD_START_BOUND,
        "{per_app:.1} requests per app at cold start (bound {COLD_START_BOUND})\n{}",
        table(&cold)
    );
}

/// Requests per Application for a cold start of 10 objects, from what the design still asks:
/// per object a server-side dry run (the sync validates every object on the API server before
/// it applies any, as Flux does; Argo CD's dry run is client-side) and the apply (20); the
/// Application's writes (the automated sync's request, the status found with the operation
/// `Running` in one write, the operation cleared, the result, health moving on: about 5);
/// Argo CD's events (the automated sync's request, its completion, two sync and up to three
/// health transitions: about 7). About 32; the bound leaves room for progress writes and
/// reconciles that run while the sync applies.
const COLD_START_BOUND: f64 = 40.0;
