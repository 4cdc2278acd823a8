//! The 1,000-Application figure (a benchmark, not a timed test: run by hand with
//! `cargo test -p plumb-appset --test it controller::bench -- --ignored --nocapture`; the
//! figure goes to docs/performance.md).

use std::time::Instant;

use serde_json::json;

use super::support::{Running, eventually, list_set, refresh, versions};

#[tokio::test]
#[ignore = "benchmark: prints the time to create 1,000 generated Applications"]
async fn thousand_applications() {
    let r = Running::start("actl-bench", |_| {}).await;
    let names: Vec<(String, String)> = (0..1000)
        .map(|i| (format!("app-{i:04}"), format!("apps/{i}")))
        .collect();
    let elements: Vec<(&str, &str)> = names
        .iter()
        .map(|(n, p)| (n.as_str(), p.as_str()))
        .collect();
    measure(&r, list_set("big", &elements, json!({})), "list generator").await;
}

/// The budget case: a git directories generator over 1,000 directories of a real
/// repository (`cargo test -p plumb-appset --test it controller::bench::thousand_from_git --
/// --ignored --nocapture`).
#[tokio::test]
#[ignore = "benchmark: prints the time to create 1,000 Applications from git directories"]
async fn thousand_from_git() {
    let r = Running::start("actl-bench-git", |_| {}).await;
    let repo = plumb_testenv::git::GitRepo::new();
    let files: Vec<(String, String)> = (0..1000)
        .map(|i| (format!("apps/app-{i:04}/cm.yaml"), format!("i: \"{i}\"\n")))
        .collect();
    let refs: Vec<(&str, String)> = files.iter().map(|(p, c)| (p.as_str(), c.clone())).collect();
    repo.commit(&refs, "1,000 apps");
    let set = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": "big"},
        "spec": {
            "generators": [{"git": {"repoURL": repo.url(), "revision": "HEAD",
                                    "directories": [{"path": "apps/*"}]}}],
            "template": {
                "metadata": {"name": "{{path.basename}}"},
                "spec": {"project": "default",
                         "source": {"repoURL": repo.url(), "path": "{{path}}", "targetRevision": "HEAD"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "{{path.basename}}"}}
            }
        }
    });
    measure(&r, set, "git directories generator").await;
}

async fn measure(r: &Running, set: serde_json::Value, what: &str) {
    let started = Instant::now();
    r.create_set(set).await;
    eventually("ResourcesUpToDate with 1000 resources", || async {
        let s = r.set("big").await;
        (s["status"]["resourcesCount"] == 1000
            && r.condition("big", "ResourcesUpToDate").await.is_some())
        .then_some(())
    })
    .await;
    let created = started.elapsed();
    let before = versions(r).await;
    assert_eq!(before.len(), 1000);
    let again = Instant::now();
    refresh(r, "big").await;
    let second = again.elapsed();
    assert_eq!(
        versions(r).await,
        before,
        "a second reconcile wrote Applications"
    );
    println!(
        "{what}: 1000 Applications created and reported in {:.1} s; second reconcile (no writes) {:.2} s",
        created.as_secs_f64(),
        second.as_secs_f64()
    );
}
