//! Rendering benchmarks: a 500-object directory (YAML read, checked, cached) and a cache hit.
//!
//! Run: `cargo bench -p plumb-source --bench render`. Figures go to docs/performance.md.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use plumb_model::application::ApplicationSource;
use plumb_source::{Config, Refresh, RenderRequest, Renderer};
use plumb_testenv::git::GitRepo;

fn fixture() -> (GitRepo, String) {
    let repo = GitRepo::new();
    let files: Vec<(String, String)> = (0..100)
        .map(|f| {
            let docs: Vec<String> = (0..5)
                .map(|d| {
                    let n = f * 5 + d;
                    format!(
                        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-{n}\n  labels:\n    app: svc-{n}\n    tier: web\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: svc-{n}\n  template:\n    metadata:\n      labels:\n        app: svc-{n}\n    spec:\n      containers:\n      - name: app\n        image: registry.example.com/svc-{n}:1.0.{n}\n        ports:\n        - containerPort: 8080\n        resources:\n          requests:\n            cpu: 100m\n            memory: 128Mi\n"
                    )
                })
                .collect();
            (format!("apps/file-{f:03}.yaml"), docs.join("---\n"))
        })
        .collect();
    let refs: Vec<(&str, String)> = files.iter().map(|(p, c)| (p.as_str(), c.clone())).collect();
    let commit = repo.commit(&refs, "500 objects");
    (repo, commit)
}

fn request(url: &str, revision: &str, refresh: Refresh) -> RenderRequest {
    RenderRequest {
        sources: vec![ApplicationSource {
            repo_url: url.into(),
            path: Some("apps".into()),
            target_revision: Some(revision.into()),
            ..Default::default()
        }],
        app_name: "bench".into(),
        namespace: "bench".into(),
        refresh,
        ..Default::default()
    }
}

fn benches(c: &mut Criterion) {
    let (repo, commit) = fixture();
    let dir = tempfile::tempdir().expect("tempdir");
    let renderer = Renderer::new(Config::new(dir.path())).expect("renderer");
    let warm = renderer
        .render(&request(&repo.url(), &commit, Refresh::Normal))
        .expect("render");
    assert_eq!(warm.manifests.len(), 500);

    let hard = request(&repo.url(), &commit, Refresh::Hard);
    c.bench_function("render_directory_500_objects", |b| {
        b.iter(|| {
            black_box(
                renderer
                    .render(black_box(&hard))
                    .expect("render")
                    .manifests
                    .len(),
            )
        })
    });
    let by_sha = request(&repo.url(), &commit, Refresh::Normal);
    c.bench_function("cache_hit_by_sha", |b| {
        b.iter(|| {
            black_box(
                renderer
                    .render(black_box(&by_sha))
                    .expect("render")
                    .manifests
                    .len(),
            )
        })
    });
    let by_branch = request(&repo.url(), "main", Refresh::Normal);
    c.bench_function("cache_hit_with_ref_check_file_url", |b| {
        b.iter(|| {
            black_box(
                renderer
                    .render(black_box(&by_branch))
                    .expect("render")
                    .manifests
                    .len(),
            )
        })
    });
}

criterion_group!(render, benches);
criterion_main!(render);
