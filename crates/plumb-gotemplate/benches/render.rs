//! Rendering a realistic ApplicationSet Application template (Argo's Go-template style, every
//! string field of the template one template, as Argo renders them) for 1,000 parameter sets.
//!
//! Run with `cargo bench -p plumb-gotemplate --bench render`; figures go in docs/performance.md.
//! Times are the benchmark thread's CPU time (the shared machines are busy).

use std::hint::black_box;

use cpu_time::ThreadTime;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use plumb_gotemplate::{Options, Template};
use serde_json::{Value, json};

/// The string fields of a cluster-generator Application template, as in Argo's docs.
const FIELDS: &[&str] = &[
    "{{ .name | normalize }}-guestbook",
    "default",
    "{{ index .metadata.labels \"team\" | default \"platform\" }}",
    "https://github.com/argoproj/argo-cd.git",
    "{{ .values.revision | default \"HEAD\" }}",
    "applicationset/examples/{{ .path.basename }}/{{ .metadata.labels.environment }}",
    "{{ .server }}",
    "{{ .name | slugify }}-{{ .metadata.labels.environment | lower }}",
    "{{- if eq .metadata.labels.environment \"prod\" }}true{{ else }}false{{ end }}",
    "{{ printf \"%s/%s\" .path.path .values.valueFile | clean }}",
    "{{ range $k, $v := .metadata.labels }}{{ $k }}={{ $v }},{{ end }}",
    "{{ toJson .metadata.annotations | b64enc | trunc 20 }}",
];

fn params(i: usize) -> Value {
    let env = ["dev", "staging", "prod"][i % 3];
    json!({
        "name": format!("Cluster-{i:04}.Example"),
        "nameNormalized": format!("cluster-{i:04}.example"),
        "server": format!("https://10.0.{}.{}:6443", i / 256, i % 256),
        "metadata": {
            "labels": {"environment": env, "team": format!("team-{}", i % 7), "region": "eu-west-1"},
            "annotations": {"owner": format!("owner-{i}@example.com")}
        },
        "path": {"path": format!("apps/app-{i}"), "basename": format!("app-{i}")},
        "values": {"revision": if i % 2 == 0 { "main" } else { "" }, "valueFile": "values.yaml"}
    })
}

fn render(c: &mut Criterion) {
    let templates: Vec<Template> = FIELDS.iter().map(|f| Template::parse("base", f).expect("parse")).collect();
    let sets: Vec<Value> = (0..1000).map(params).collect();
    let options = Options::from_go_options(&["missingkey=error".to_string()]).expect("options");
    let mut group = c.benchmark_group("applicationset");
    group.throughput(Throughput::Elements(sets.len() as u64));
    group.bench_function("application_template_x1000", |b| {
        b.iter_custom(|iters| {
            let start = ThreadTime::now();
            for _ in 0..iters {
                for p in &sets {
                    for t in &templates {
                        black_box(t.execute(black_box(p), &options).expect("render"));
                    }
                }
            }
            start.elapsed()
        })
    });
    group.throughput(Throughput::Elements(FIELDS.len() as u64));
    group.bench_function("parse_template_fields", |b| {
        b.iter_custom(|iters| {
            let start = ThreadTime::now();
            for _ in 0..iters {
                for f in FIELDS {
                    black_box(Template::parse("base", f).expect("parse"));
                }
            }
            start.elapsed()
        })
    });
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
