//! The comparison's CPU work stays off the async runtime: a deliberately expensive (but bounded)
//! jq ignore rule runs on the blocking pool while other tasks of the runtime keep running. So do
//! the Lua health scripts a sync's wave gate runs between waves.
//!
//! The runtime is a current-thread one, the smallest there is: if the diff ran on it, nothing
//! else could run until the rule ended. Every jq rule that fails emits a `plumb_diff` debug event
//! on the thread evaluating it; a recorder installed on the runtime's thread and on every
//! blocking-pool thread notes which thread that was and how far a ticking task had counted. No
//! clocks: the rule before the expensive one and the rule after it are one synchronous diff
//! apart, so the ticker can only have moved between them if the runtime was free meanwhile.

// Helpers outside #[test] functions panic on a broken fixture, which is what a test wants.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use plumb_app::{Cluster, CompareOptions, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER, compare};
use plumb_model::Settings;
use plumb_model::application::Application;
use plumb_source::Renderer;
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::json;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// One `plumb_diff` event: the thread it fired on, the ticker's count then, and its text.
#[derive(Debug, Clone)]
struct Seen {
    thread: ThreadId,
    ticks: u64,
    text: String,
}

#[derive(Clone)]
struct Recorder {
    /// The events recorded: those whose target starts with this.
    target: &'static str,
    ticks: Arc<AtomicU64>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Recorder {
    fn new(target: &'static str) -> Self {
        Self {
            target,
            ticks: Arc::new(AtomicU64::new(0)),
            seen: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// A current-thread runtime on this thread, recording here and on every blocking-pool thread.
    fn runtime(&self) -> (tokio::runtime::Runtime, tracing::dispatcher::DefaultGuard) {
        let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(self.clone()));
        let here = tracing::dispatcher::set_default(&dispatch);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_start(move || {
                // The guard lives as long as the thread: the pool's threads record until they end.
                std::mem::forget(tracing::dispatcher::set_default(&dispatch));
            })
            .build()
            .unwrap();
        (runtime, here)
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if !event.metadata().target().starts_with(self.target) {
            return;
        }
        let ticks = self.ticks.load(Ordering::SeqCst);
        let mut text = String::new();
        event.record(
            &mut |field: &tracing::field::Field, value: &dyn std::fmt::Debug| {
                text.push_str(&format!("{}={value:?} ", field.name()));
            },
        );
        self.seen.lock().unwrap().push(Seen {
            thread: std::thread::current().id(),
            ticks,
            text,
        });
    }
}

const CONFIG_MAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n";

fn application(repo: &GitRepo, dest: &str, ignore: serde_json::Value) -> Application {
    serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "settings", "namespace": "argocd"},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": IN_CLUSTER_SERVER, "namespace": dest},
                 "ignoreDifferences": ignore}
    }))
    .unwrap()
}

#[test]
fn an_expensive_jq_rule_does_not_hold_the_runtime() {
    let recorder = Recorder::new("plumb_diff");
    // This thread runs the runtime; blocking-pool threads get the recorder when they start.
    let (runtime, _here) = recorder.runtime();
    let runtime_thread = std::thread::current().id();

    runtime.block_on(async {
        let env = TestEnv::shared();
        let dest = env.namespace("runtime-free");
        let repo = GitRepo::new();
        repo.commit(&[("app/cm.yaml", CONFIG_MAP)], "settings");
        let cluster = Cluster::connect(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, env.client().await)
            .await
            .unwrap();
        let engines = Engines::new(Settings::default(), "argocd", &[]).unwrap();
        let cache = tempfile::tempdir().unwrap();
        let renderer =
            Arc::new(Renderer::new(plumb_source::Config::new(cache.path())).unwrap());
        let opts = CompareOptions {
            refs_asked_at: None,
            fresh_reads: true,
            ..CompareOptions::default()
        };
        // The live object exists, so the diff is a server-side one over desired, live and
        // predicted: each rule runs on each of them.
        let cmp = compare(
            &application(&repo, dest.name(), json!([])),
            &engines,
            &cluster,
            &renderer,
            &opts,
        )
        .await
        .unwrap();
        for r in &cmp.resources {
            cluster
                .applier
                .apply(r.desired.as_ref().unwrap(), None)
                .await
                .unwrap();
        }

        // A rule that fails at once (a debug event), one that runs into its limits on the real
        // object (not on the made-up one rules are checked on when loaded), and another that
        // fails at once.
        let app = application(
            &repo,
            dest.name(),
            json!([{"kind": "ConfigMap", "jqPathExpressions": [
                "error(\"first-marker\")",
                ".data | select(.mode == \"fast\" and (reduce range(1000000000) as $i (0; . + $i)) < 0)",
                "error(\"second-marker\")"
            ]}]),
        );
        recorder.seen.lock().unwrap().clear();
        let ticks = recorder.ticks.clone();
        let ticker = tokio::spawn(async move {
            loop {
                ticks.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
        });
        let cmp = compare(&app, &engines, &cluster, &renderer, &opts)
            .await
            .unwrap();
        ticker.abort();
        let cm = &cmp.resources[0];
        let notes = format!("{:?}", cm.diff.as_ref().unwrap());
        assert!(
            notes.contains("nothing ignored"),
            "the expensive rule did not run into its bound: {notes}"
        );
    });

    let seen = recorder.seen.lock().unwrap().clone();
    let first: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.text.contains("first-marker") && s.text.contains("settings"))
        .collect();
    let second: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.text.contains("second-marker") && s.text.contains("settings"))
        .collect();
    assert!(
        !first.is_empty() && !second.is_empty(),
        "the marker rules left no events: {seen:#?}"
    );
    assert!(
        seen.iter().all(|s| s.thread != runtime_thread),
        "a jq rule ran on the runtime's thread: {seen:#?}"
    );
    let before = first.iter().map(|s| s.ticks).min().unwrap();
    let after = second.iter().map(|s| s.ticks).max().unwrap();
    assert!(
        after > before,
        "the runtime made no progress while the expensive rule ran: {seen:#?}"
    );
}

/// A health script for Widgets that runs into its limits until the Widget reports `ready`.
const SLOW_HEALTH: &str = r#"
if obj.status ~= nil and obj.status.ready == true then
  return {status = "Healthy", message = "ready"}
end
local n = 0
while true do n = n + 1 end
"#;

#[test]
fn a_slow_lua_health_script_in_a_sync_wave_gate_does_not_hold_the_runtime() {
    // Every Lua health script that hits a limit emits a `plumb_health` warning on the thread
    // that ran it.
    let recorder = Recorder::new("plumb_health");
    let (runtime, _here) = recorder.runtime();
    let runtime_thread = std::thread::current().id();

    runtime.block_on(async {
        use crate::missing_status::{install_kind, kubectl, kubectl_apply};
        use crate::support::Controlled;

        let env = TestEnv::shared();
        let group = format!("slowgate.p{}.plumb.test", std::process::id());
        install_kind(env, &group, "Widget", "widgets", true);
        crate::support::install_crds(env);
        let ns = env.namespace("ctl-slowgate");
        kubectl_apply(
            env,
            ns.name(),
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
                    "data": {format!("resource.customizations.health.{group}_Widget"): SLOW_HEALTH}}),
        );
        // The whole controller runs on this one runtime thread.
        let ctl = Controlled::start_in(env, ns).await;
        let dest = env.namespace("dest-slowgate");
        let repo = GitRepo::new();
        let widget = |name: &str| {
            json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
                   "metadata": {"name": name, "annotations": {"argocd.argoproj.io/sync-wave": "0"}},
                   "spec": {"size": 1}})
            .to_string()
        };
        let after = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "after", "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
            "data": {"k": "v"}});
        repo.commit(
            &[
                ("gated/a.yaml", widget("a")),
                ("gated/b.yaml", widget("b")),
                ("gated/after.yaml", after.to_string()),
                ("other/cm.yaml", CONFIG_MAP.to_string()),
            ],
            "two Widgets in wave 0, a ConfigMap in wave 1; another app beside",
        );
        let app = |name: &str, path: &str| {
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                   "metadata": {"name": name},
                   "spec": {"project": "default",
                            "source": {"repoURL": repo.url(), "path": path},
                            "destination": {"server": IN_CLUSTER_SERVER, "namespace": dest.name()}}})
        };
        ctl.create_app(app("gated", "gated")).await;
        ctl.wait_app("gated", "compared", |a| !a["status"]["sync"]["status"].is_null())
            .await;

        let ticks = recorder.ticks.clone();
        let ticker = tokio::spawn(async move {
            let mut every = tokio::time::interval(std::time::Duration::from_millis(20));
            loop {
                every.tick().await;
                ticks.fetch_add(1, Ordering::SeqCst);
            }
        });
        let who = ctl.request_op("gated", json!({"sync": {}})).await;
        let waiting = format!("waiting for healthy state of {group}/Widget/a and 1 more resources");
        ctl.wait_app("gated", "the sync waits for the Widgets", |a| {
            a["status"]["operationState"]["message"] == waiting.as_str()
        })
        .await;
        recorder.seen.lock().unwrap().clear();

        // While the gate keeps judging the Widgets, another Application is compared and synced.
        ctl.create_app(app("other", "other")).await;
        ctl.wait_app("other", "compared", |a| !a["status"]["sync"]["status"].is_null())
            .await;
        let other = ctl.sync("other", json!({})).await;
        assert_eq!(other["status"]["operationState"]["phase"], "Succeeded");
        let app = ctl.wait_app("gated", "still waiting", |_| true).await;
        let st = &app["status"]["operationState"];
        assert_eq!(st["phase"], "Running", "{st:#}");
        assert_eq!(st["message"], waiting.as_str(), "{st:#}");
        let cm = env
            .kubectl()
            .args(["-n", dest.name(), "get", "configmap", "after"])
            .output()
            .unwrap();
        assert!(!cm.status.success(), "wave 1 was applied before the Widgets were healthy");
        // The gate's judgements run into the script's limit (it looks every half second).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while recorder.seen.lock().unwrap().len() < 4 {
            assert!(std::time::Instant::now() < deadline, "no Lua limit was hit");
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }

        // The Widgets report: the script says Healthy, the next wave goes.
        for name in ["a", "b"] {
            kubectl(
                env,
                &["-n", dest.name(), "patch", &format!("widgets.{group}"), name,
                  "--subresource=status", "--type=merge", "-p", r#"{"status":{"ready":true}}"#],
            );
        }
        let app = ctl.wait_op("gated", &who).await;
        assert_eq!(app["status"]["operationState"]["phase"], "Succeeded", "{:#}", app["status"]["operationState"]);
        kubectl(env, &["-n", dest.name(), "get", "configmap", "after"]);
        ticker.abort();
        let _ = env
            .kubectl()
            .args(["delete", "crd", &format!("widgets.{group}"), "--wait=false", "--ignore-not-found"])
            .output();
    });

    let seen = recorder.seen.lock().unwrap().clone();
    let limits: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.text.contains("hit a limit"))
        .collect();
    assert!(limits.len() >= 4, "too few Lua limits recorded: {seen:#?}");
    assert!(
        limits.iter().all(|s| s.thread != runtime_thread),
        "a Lua health script ran on the runtime's thread: {limits:#?}"
    );
}
