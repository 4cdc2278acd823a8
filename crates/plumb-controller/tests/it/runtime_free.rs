//! The comparison's CPU work stays off the async runtime: a deliberately expensive (but bounded)
//! jq ignore rule runs on the blocking pool while other tasks of the runtime keep running.
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

use plumb_controller::{
    Cluster, CompareOptions, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER, compare,
};
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
    ticks: Arc<AtomicU64>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if !event.metadata().target().starts_with("plumb_diff") {
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
    let recorder = Recorder {
        ticks: Arc::new(AtomicU64::new(0)),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(recorder.clone()));
    // This thread runs the runtime; blocking-pool threads get the recorder when they start.
    let _here = tracing::dispatcher::set_default(&dispatch);
    let runtime = {
        let dispatch = dispatch.clone();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_start(move || {
                // The guard lives as long as the thread: the pool's threads record until they end.
                std::mem::forget(tracing::dispatcher::set_default(&dispatch));
            })
            .build()
            .unwrap()
    };
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
