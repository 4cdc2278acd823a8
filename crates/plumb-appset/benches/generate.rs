//! Generator and generator + template cost for 1,000 list elements (the budget: under
//! 100 ms of CPU). Run: `cargo bench -p plumb-appset --bench generate`; `bench/appset-generate`
//! runs it beside Argo CD's own code on the same set (tools/argocd/appset-bench). Besides
//! criterion's wall-clock figures it prints the best CPU time of 10 rounds (every thread of the
//! process, from /proc/self/task/*/schedstat): the budget's unit, and steadier than wall time on
//! a shared machine.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use plumb_appset::{Context, Limits, generate, generate_params};
use plumb_model::applicationset::ApplicationSet;
use serde_json::json;

fn set(go_template: bool) -> ApplicationSet {
    let elements: Vec<_> = (0..1000)
        .map(|i| json!({"cluster": format!("cluster-{i}"), "url": format!("https://10.0.{}.{}", i / 256, i % 256)}))
        .collect();
    let p = |name: &str| {
        if go_template {
            format!("{{{{.{name}}}}}")
        } else {
            format!("{{{{{name}}}}}")
        }
    };
    serde_json::from_value(json!({
        "metadata": {"name": "bench", "namespace": "argocd"},
        "spec": {
            "goTemplate": go_template,
            "generators": [{"list": {"elements": elements}}],
            "template": {
                "metadata": {"name": format!("{}-guestbook", p("cluster"))},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": "https://github.com/argoproj/argo-cd.git", "targetRevision": "HEAD", "path": format!("applicationset/examples/list-generator/guestbook/{}", p("cluster"))},
                    "destination": {"server": p("url"), "namespace": "guestbook"}
                }
            }
        }
    }))
    .expect("the bench ApplicationSet parses")
}

fn context(rt: &tokio::runtime::Runtime, dir: &std::path::Path) -> Context {
    rt.block_on(async {
        // The list generator never calls the API server: a client to nowhere suffices.
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
        Context {
            client: kube::Client::try_from(config).expect("a client"),
            control_namespace: "argocd".into(),
            git: Arc::new(
                plumb_source::GitCache::new(dir, plumb_source::Limits::default())
                    .expect("a git cache"),
            ),
            http: reqwest::Client::new(),
            limits: Limits::default(),
            scm: Default::default(),
        }
    })
}

fn bench(c: &mut Criterion) {
    plumb_kube::install_crypto_provider();
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ctx = context(&rt, dir.path());
    for go in [false, true] {
        let set = set(go);
        let name = if go { "list_1000_go" } else { "list_1000_flat" };
        c.bench_function(&format!("params_{name}"), |b| {
            b.iter(|| {
                let out = rt
                    .block_on(generate_params(&set.spec.generators[0], &set, &ctx))
                    .expect("the list generates");
                assert_eq!(out.len(), 1000);
            })
        });
        c.bench_function(&format!("generate_{name}"), |b| {
            b.iter(|| {
                let out = rt.block_on(generate(&set, &ctx));
                assert!(out.errors.is_empty(), "{:?}", out.errors);
                assert_eq!(out.applications.len(), 1000);
            })
        });
    }
}

/// CPU nanoseconds spent so far by every thread of this process (the scheduler's own
/// accounting; nanosecond resolution, unlike `/proc/self/stat`'s clock ticks).
fn process_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// The best CPU time of 10 runs of `generate` for each template mode, printed in the form
/// tools/argocd/appset-bench prints Argo's.
fn cpu(_: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ctx = context(&rt, dir.path());
    for go in [false, true] {
        let set = set(go);
        let best = (0..10)
            .map(|_| {
                let start = process_cpu_ns();
                let out = rt.block_on(generate(&set, &ctx));
                let spent = process_cpu_ns().saturating_sub(start);
                assert_eq!(out.applications.len(), 1000);
                spent
            })
            .min()
            .unwrap_or_default();
        let name = if go { "go" } else { "flat" };
        println!(
            "plumb generate_list_1000_{name} {:.1} ms CPU",
            best as f64 / 1e6
        );
    }
}

criterion_group!(benches, bench, cpu);
criterion_main!(benches);
