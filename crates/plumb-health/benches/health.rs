//! Evaluations per second: built-in rules and cached Lua scripts.
//!
//! Run with `cargo bench -p plumb-health --bench health`; figures go in docs/performance.md.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
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

fn builtin(c: &mut Criterion) {
    let mut group = c.benchmark_group("builtin");
    group.throughput(Throughput::Elements(1));
    let deployment = fixture("deployment-healthy.yaml");
    group.bench_function("deployment_healthy", |b| {
        b.iter(|| assess(black_box(&deployment)))
    });
    let progressing = fixture("deployment-progressing.yaml");
    group.bench_function("deployment_progressing", |b| {
        b.iter(|| assess(black_box(&progressing)))
    });
    let pod = fixture("pod-crashloop.yaml");
    group.bench_function("pod_crashloop", |b| b.iter(|| assess(black_box(&pod))));
    let certificate = fixture("certificate-ready.yaml");
    group.bench_function("generic_certificate", |b| {
        b.iter(|| assess(black_box(&certificate)))
    });
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
        b.iter(|| script.evaluate(black_box(&database), &limits))
    });

    let cron_source =
        std::fs::read_to_string(dir.join("batch/CronJob/health.lua")).expect("script");
    let cron = LuaScript::new(cron_source, true, "bench");
    let cronjob = fixture("customizations/batch/CronJob/testdata/last-run-succeeded.yaml");
    group.bench_function("cronjob_cached_script_open_libs", |b| {
        b.iter(|| cron.evaluate(black_box(&cronjob), &limits))
    });

    let assessor = Assessor::new(Config::default().customizations_dir(&dir)).expect("assessor");
    group.bench_function("database_via_assessor_lookup", |b| {
        b.iter(|| assessor.assess(black_box(&database)))
    });
    group.finish();
}

criterion_group!(benches, builtin, lua);
criterion_main!(benches);
