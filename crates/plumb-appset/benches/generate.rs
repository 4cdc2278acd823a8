//! Generator cost for 1,000 list elements (the budget: generator + template under
//! 100 ms of CPU). Run: `cargo bench -p plumb-appset --bench generate`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use plumb_appset::{Context, Limits, generate_params};
use plumb_model::applicationset::ApplicationSet;
use serde_json::json;

fn set(go_template: bool) -> ApplicationSet {
    let elements: Vec<_> = (0..1000)
        .map(|i| json!({"cluster": format!("cluster-{i}"), "url": format!("https://10.0.{}.{}", i / 256, i % 256)}))
        .collect();
    serde_json::from_value(json!({
        "metadata": {"name": "bench", "namespace": "argocd"},
        "spec": {
            "goTemplate": go_template,
            "generators": [{"list": {"elements": elements}}],
            "template": {
                "metadata": {"name": "{{cluster}}-guestbook"},
                "spec": {
                    "project": "default",
                    "source": {"repoURL": "https://github.com/argoproj/argo-cd.git", "targetRevision": "HEAD", "path": "applicationset/examples/list-generator/guestbook/{{cluster}}"},
                    "destination": {"server": "{{url}}", "namespace": "guestbook"}
                }
            }
        }
    }))
    .expect("the bench ApplicationSet parses")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ctx = rt.block_on(async {
        // The list generator never calls the API server: a client to nowhere suffices.
        let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
        Context {
            client: kube::Client::try_from(config).expect("a client"),
            control_namespace: "argocd".into(),
            git: Arc::new(
                plumb_source::GitCache::new(dir.path(), plumb_source::Limits::default())
                    .expect("a git cache"),
            ),
            http: reqwest::Client::new(),
            limits: Limits::default(),
        }
    });
    for go in [false, true] {
        let set = set(go);
        let name = if go { "list_1000_go" } else { "list_1000_flat" };
        c.bench_function(name, |b| {
            b.iter(|| {
                let out = rt
                    .block_on(generate_params(&set.spec.generators[0], &set, &ctx))
                    .expect("the list generates");
                assert_eq!(out.len(), 1000);
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
