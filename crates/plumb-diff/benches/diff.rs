//! Offline diffs per second for a typical Deployment pair (target: 20,000 pairs/s/core).
//!
//! `cargo bench -p plumb-diff --bench diff`; figures go to docs/performance.md.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;

use cpu_time::ThreadTime;
use criterion::{Bencher, Criterion, Throughput, criterion_group, criterion_main};
use plumb_diff::{DiffConfig, Pair, PairOptions, RenderOptions, SourcedObject, Strategy};

fn load(name: &str) -> serde_json::Value {
    let path = format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    plumb_yaml::read_documents(&text, &path)
        .unwrap()
        .remove(0)
        .value
}

fn pair(desired: &str, live: &str) -> Pair {
    let opts = PairOptions {
        default_namespace: "payments".into(),
        ..Default::default()
    };
    let d = SourcedObject {
        value: load(desired),
        source: desired.into(),
    };
    plumb_diff::pair(vec![d], vec![load(live)], &opts)
        .unwrap()
        .remove(0)
}

/// Measures the bench thread's CPU time: the machine is shared, and the target is per core.
fn per_core<R>(b: &mut Bencher<'_>, mut f: impl FnMut() -> R) {
    b.iter_custom(|iters| {
        let start = ThreadTime::now();
        for _ in 0..iters {
            black_box(f());
        }
        start.elapsed()
    });
}

fn bench(c: &mut Criterion) {
    let config = DiffConfig::default();
    let mut group = c.benchmark_group("offline-deployment");
    group.throughput(Throughput::Elements(1));

    let in_sync = pair("deployment-config.yaml", "deployment-live.yaml");
    group.bench_function("in-sync", |b| {
        per_core(b, || {
            plumb_diff::diff(&in_sync, Strategy::ThreeWay, &config).unwrap()
        });
    });

    let tampered = pair("deployment-config.yaml", "deployment-tampered-live.yaml");
    group.bench_function("drifted", |b| {
        per_core(b, || {
            plumb_diff::diff(&tampered, Strategy::ThreeWay, &config).unwrap()
        });
    });

    let opts = RenderOptions {
        attribution: true,
        ..Default::default()
    };
    group.bench_function("drifted+render", |b| {
        per_core(b, || {
            let r = plumb_diff::diff(&tampered, Strategy::ThreeWay, &config).unwrap();
            let mut out = Vec::with_capacity(4096);
            plumb_diff::render(&[plumb_diff::mask(&r)], &opts, &mut out).unwrap();
            out
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
