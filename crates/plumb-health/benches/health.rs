//! Evaluations per second: built-in rules and cached Lua scripts.
//!
//! Run with `cargo bench -p plumb-health --bench health`; figures go in docs/performance.md.
//!
//! The shared 2-core machines are usually busy, so wall-clock time mostly measures the other
//! processes. Each benchmark therefore reports the benchmark thread's own CPU time, which is what
//! "evaluations per second per core" means.

use std::hint::black_box;
use std::path::PathBuf;

use cpu_time::ThreadTime;
use criterion::{Bencher, Criterion, Throughput, criterion_group, criterion_main};
use plumb_health::{Assessor, Config, LuaLimits, LuaScript, assess};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).expect("yaml");
    docs.into_iter().next().expect("one document")
}

/// Times `f` by the thread's CPU time.
fn cpu<R>(b: &mut Bencher<'_>, mut f: impl FnMut() -> R) {
    b.iter_custom(|iters| {
        let start = ThreadTime::now();
        for _ in 0..iters {
            black_box(f());
        }
        start.elapsed()
    });
}

fn builtin(c: &mut Criterion) {
    let mut group = c.benchmark_group("builtin");
    group.throughput(Throughput::Elements(1));
    let deployment = fixture("deployment-healthy.yaml");
    group.bench_function("deployment_healthy", |b| {
        cpu(b, || assess(black_box(&deployment)))
    });
    let progressing = fixture("deployment-progressing.yaml");
    group.bench_function("deployment_progressing", |b| {
        cpu(b, || assess(black_box(&progressing)))
    });
    let pod = fixture("pod-crashloop.yaml");
    group.bench_function("pod_crashloop", |b| cpu(b, || assess(black_box(&pod))));
    // Certificates have Plumb's own script now; the generic rule is measured on a Flux Bucket.
    let bucket = fixture("bucket-stalled.yaml");
    group.bench_function("generic_bucket", |b| cpu(b, || assess(black_box(&bucket))));
    group.finish();
}

fn lua(c: &mut Criterion) {
    let mut group = c.benchmark_group("lua");
    group.throughput(Throughput::Elements(1));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/customizations");
    let limits = LuaLimits::default();

    let source =
        std::fs::read_to_string(dir.join("platform.acme.io/Database/health.lua")).expect("script");
    let script = LuaScript::new(source, false, "bench");
    let database = fixture("customizations/platform.acme.io/Database/testdata/ready.yaml");
    group.bench_function("database_cached_script", |b| {
        cpu(b, || script.evaluate(black_box(&database), &limits))
    });

    let cron_source =
        std::fs::read_to_string(dir.join("batch/CronJob/health.lua")).expect("script");
    let cron = LuaScript::new(cron_source, true, "bench");
    let cronjob = fixture("customizations/batch/CronJob/testdata/last-run-succeeded.yaml");
    group.bench_function("cronjob_cached_script_open_libs", |b| {
        cpu(b, || cron.evaluate(black_box(&cronjob), &limits))
    });

    let assessor = Assessor::new(Config::default().customizations_dir(&dir)).expect("assessor");
    group.bench_function("database_via_assessor_lookup", |b| {
        cpu(b, || assessor.assess(black_box(&database)))
    });
    group.finish();
}

criterion_group!(benches, builtin, lua);
criterion_main!(benches);
