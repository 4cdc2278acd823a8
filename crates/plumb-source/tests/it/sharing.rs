//! Git once per repository, renders once per input: many Applications on one repository share
//! ref listings, fetches and renders, and a commit renders again only the sources whose inputs
//! it changed. Proven with the renderer's counters on real repositories over `file://`.

use std::sync::Arc;
use std::time::Duration;

use plumb_model::application::ApplicationSource;
use plumb_source::{Config, Refresh, RenderRequest, Renderer};
use plumb_testenv::git::GitRepo;

use crate::support::*;

/// A renderer whose sources share ref listings for a minute (the controller uses seconds; a
/// minute keeps the test independent of the machine's speed).
fn shared_renderer() -> (Arc<Renderer>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r = Renderer::new(
        Config::new(dir.path())
            .tools(tools())
            .ref_cache_ttl(Duration::from_secs(60)),
    )
    .unwrap();
    (Arc::new(r), dir)
}

fn app(url: &str, name: &str, path: &str) -> RenderRequest {
    RenderRequest {
        sources: vec![source(url, path, "main")],
        app_name: name.into(),
        namespace: name.into(),
        owner: Some(format!("argocd/{name}")),
        ..Default::default()
    }
}

/// A repository with `n` directory applications under `apps/app-<i>`.
fn fleet(n: usize) -> GitRepo {
    let repo = GitRepo::new();
    let files: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("apps/app-{i}/cm.yaml"),
                configmap(&format!("app-{i}"), "v: one"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    repo.commit(&refs, "fleet");
    repo
}

fn render_all(r: &Arc<Renderer>, reqs: &[RenderRequest]) -> Vec<plumb_source::Rendered> {
    let threads: Vec<_> = reqs
        .iter()
        .cloned()
        .map(|req| {
            let r = Arc::clone(r);
            std::thread::spawn(move || r.render(&req).unwrap())
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

#[test]
fn twenty_applications_on_one_repository_list_and_fetch_it_once() {
    let repo = fleet(20);
    let (r, _d) = shared_renderer();
    let reqs: Vec<_> = (0..20)
        .map(|i| {
            app(
                &repo.url(),
                &format!("sharing-{i}"),
                &format!("apps/app-{i}"),
            )
        })
        .collect();
    let out = render_all(&r, &reqs);
    assert_eq!(out.len(), 20);
    assert_eq!(r.git().listing_count(), 1, "one ls-remote for 20 sources");
    assert_eq!(r.git().fetch_count(), 1, "one fetch for 20 sources");
    assert_eq!(r.render_count(), 20);

    // A second wave within the TTL: no Git request at all, no render.
    render_all(&r, &reqs);
    assert_eq!((r.git().listing_count(), r.git().fetch_count()), (1, 1));
    assert_eq!((r.render_count(), r.cached_count()), (20, 20));

    // A hard refresh lists again (and renders), whatever the TTL; an invalidated repository too.
    let mut hard = reqs[0].clone();
    hard.refresh = Refresh::Hard;
    r.render(&hard).unwrap();
    assert_eq!((r.git().listing_count(), r.render_count()), (2, 21));
    r.invalidate_refs(&repo.url());
    r.render(&reqs[1]).unwrap();
    r.render(&reqs[2]).unwrap();
    assert_eq!(
        r.git().listing_count(),
        3,
        "one listing after the invalidation"
    );
}

#[test]
fn a_tag_pushed_within_the_ttl_is_found_not_reported_missing() {
    let repo = fleet(1);
    let (r, _d) = shared_renderer();
    r.render(&app(&repo.url(), "sharing-tag", "apps/app-0"))
        .unwrap();
    assert_eq!(r.git().listing_count(), 1);
    // The Application is pointed at a tag pushed after the shared listing was made: the kept
    // listing does not know it, so a fresh one is asked for before "not found" is believed.
    repo.tag("v1.4.0");
    let mut tagged = app(&repo.url(), "sharing-tag", "apps/app-0");
    tagged.sources[0].target_revision = Some("v1.4.0".into());
    let out = r.render(&tagged).unwrap();
    assert_eq!(out.sources[0].commit, repo.head());
    assert_eq!(r.git().listing_count(), 2);
    // A revision that really does not exist is still refused, after one more listing.
    tagged.sources[0].target_revision = Some("v9.9.9".into());
    let err = r.render(&tagged).unwrap_err().to_string();
    assert!(err.contains("v9.9.9"), "{err}");
}

#[test]
fn a_poll_may_share_a_listing_but_a_refresh_or_sync_sees_the_push() {
    let repo = fleet(1);
    let (r, _d) = shared_renderer();
    let first = r
        .render(&app(&repo.url(), "sharing-latest", "apps/app-0"))
        .unwrap();
    let pushed = repo.commit(
        &[(
            "apps/app-0/extra.yaml",
            "kind: ConfigMap\napiVersion: v1\nmetadata: {name: extra}\n",
        )],
        "push",
    );
    // A poll within the TTL shares the kept listing: the push is seen at a later poll.
    let polled = r
        .render(&app(&repo.url(), "sharing-latest", "apps/app-0"))
        .unwrap();
    assert_eq!(polled.sources[0].commit, first.sources[0].commit);
    assert_eq!(r.git().listing_count(), 1);
    // A refresh someone asked for, a sync, and the comparison recording its result list again.
    let mut latest = app(&repo.url(), "sharing-latest", "apps/app-0");
    latest.refresh = Refresh::Latest;
    let out = r.render(&latest).unwrap();
    assert_eq!(out.sources[0].commit, pushed);
    assert_eq!(r.git().listing_count(), 2);
    assert_eq!(out.manifests.len(), first.manifests.len() + 1);
}

/// Refreshes asked for at the same moment (a webhook annotating every Application of a
/// repository) share the first listing begun after they were asked; one asked after it began
/// lists again and sees a push made in between.
#[test]
fn refreshes_asked_before_a_listing_began_share_it() {
    let repo = fleet(3);
    let (r, _d) = shared_renderer();
    let asked = std::time::Instant::now();
    let refreshed = |name: &str, path: &str, at: std::time::Instant| {
        let mut req = app(&repo.url(), name, path);
        req.refresh = Refresh::Latest;
        req.refs_asked_at = Some(at);
        r.render(&req).unwrap()
    };
    let a = refreshed("asked-0", "apps/app-0", asked);
    let b = refreshed("asked-1", "apps/app-1", asked);
    let c = refreshed("asked-2", "apps/app-2", asked);
    assert_eq!(
        r.git().listing_count(),
        1,
        "one listing for three refreshes"
    );
    assert!(
        [&b, &c]
            .iter()
            .all(|o| o.sources[0].commit == a.sources[0].commit)
    );

    let pushed = repo.commit(
        &[("apps/app-0/cm.yaml", configmap("app-0", "v: two"))],
        "push",
    );
    let later = refreshed("asked-0", "apps/app-0", std::time::Instant::now());
    assert_eq!(
        r.git().listing_count(),
        2,
        "asked after the listing began: listed again"
    );
    assert_eq!(later.sources[0].commit, pushed);
    // Without the moment it was asked, a refresh lists after the render began.
    let mut unasked = app(&repo.url(), "asked-1", "apps/app-1");
    unasked.refresh = Refresh::Latest;
    r.render(&unasked).unwrap();
    assert_eq!(r.git().listing_count(), 3);
    // A branch deleted before the refresh was asked: not found from one listing begun since,
    // not listed again and again.
    let asked = std::time::Instant::now();
    let mut gone = app(&repo.url(), "asked-2", "apps/app-2");
    gone.sources[0].target_revision = Some("deleted-branch".into());
    gone.refresh = Refresh::Latest;
    gone.refs_asked_at = Some(asked);
    let err = r.render(&gone).unwrap_err().to_string();
    assert!(err.contains("deleted-branch"), "{err}");
    assert_eq!(r.git().listing_count(), 4);
}

#[test]
fn one_render_for_many_requests_of_the_same_input() {
    let repo = fleet(1);
    let (r, _d) = shared_renderer();
    // The same Application asked for eight times at once (reconcile and operation racing).
    let reqs = vec![app(&repo.url(), "sharing-same", "apps/app-0"); 8];
    let out = render_all(&r, &reqs);
    assert!(out.iter().all(|o| o.manifests == out[0].manifests));
    assert_eq!(r.render_count(), 1);
    assert_eq!(r.cached_count(), 7);
}

#[test]
fn a_commit_touching_one_application_renders_only_that_one() {
    let repo = fleet(5);
    let (r, _d) = shared_renderer();
    let reqs: Vec<_> = (0..5)
        .map(|i| app(&repo.url(), &format!("touch-{i}"), &format!("apps/app-{i}")))
        .collect();
    render_all(&r, &reqs);
    assert_eq!(r.render_count(), 5);

    let c2 = repo.commit(
        &[("apps/app-3/cm.yaml", configmap("app-3", "v: two"))],
        "app-3 only",
    );
    // Also a file outside every application.
    let c3 = repo.commit(&[("README.md", "docs")], "docs");
    r.invalidate_refs(&repo.url());
    let out = render_all(&r, &reqs);
    assert_eq!(r.render_count(), 6, "only app-3 rendered again");
    assert_eq!(r.skipped_count(), 4);
    for (i, o) in out.iter().enumerate() {
        // Every source moves to the new commit, rendered or not.
        assert_eq!(o.sources[0].commit, c3);
        assert!(
            o.sources[0].cache_hit == (i != 3),
            "{i}: {:?}",
            o.sources[0]
        );
        assert_eq!(o.sources[0].unchanged_inputs, i != 3);
    }
    assert_eq!(out[3].manifests[0].object["data"]["v"], "two");
    assert_ne!(c2, c3);
}

#[test]
fn manifest_generate_paths_decide_which_commits_render_again() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("apps/web/cm.yaml", configmap("web", "v: one")),
            ("apps/other/cm.yaml", configmap("other", "v: one")),
            ("shared/settings.yaml", "x: 1\n".to_string()),
        ],
        "one",
    );
    let (r, _d) = shared_renderer();
    let mut req = app(&repo.url(), "generate-paths-web", "apps/web");
    req.generate_paths = Some(".;/shared".into());
    r.render(&req).unwrap();
    assert_eq!(r.render_count(), 1);

    // Another application's path: skipped.
    repo.commit(
        &[("apps/other/cm.yaml", configmap("other", "v: two"))],
        "other",
    );
    r.invalidate_refs(&repo.url());
    assert!(r.render(&req).unwrap().sources[0].unchanged_inputs);
    assert_eq!(r.render_count(), 1);

    // A path the annotation names, outside the application: rendered again.
    repo.commit(&[("shared/settings.yaml", "x: 2\n")], "shared");
    r.invalidate_refs(&repo.url());
    assert!(!r.render(&req).unwrap().sources[0].cache_hit);
    assert_eq!(r.render_count(), 2);

    // The annotation is trusted as written (as Argo CD trusts it): naming only `/shared`, a
    // change of the application's own directory does not render again.
    let mut only_shared = req.clone();
    only_shared.generate_paths = Some("/shared".into());
    r.render(&only_shared).unwrap();
    assert_eq!(r.render_count(), 3);
    repo.commit(&[("apps/web/cm.yaml", configmap("web", "v: two"))], "web");
    r.invalidate_refs(&repo.url());
    let out = r.render(&only_shared).unwrap();
    assert!(out.sources[0].unchanged_inputs);
    assert_eq!(out.manifests[0].object["data"]["v"], "one");
    // Without the annotation the same commit renders again.
    let plain = app(&repo.url(), "generate-paths-web", "apps/web");
    let out = r.render(&plain).unwrap();
    assert_eq!(out.manifests[0].object["data"]["v"], "two");
}

#[test]
fn a_changed_kustomize_base_renders_its_overlay_again() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "base/kustomization.yaml",
                "resources: [cm.yaml]\n".to_string(),
            ),
            ("base/cm.yaml", configmap("web", "v: one")),
            (
                "overlays/prod/kustomization.yaml",
                "resources: [../../base]\nnamePrefix: prod-\n".to_string(),
            ),
            ("unrelated/cm.yaml", configmap("x", "v: one")),
        ],
        "one",
    );
    let dir = tempfile::tempdir().unwrap();
    let tools = plumb_source::Tools {
        helm: plumb_testenv::tools::helm(),
        kustomize: plumb_testenv::tools::kustomize(),
        worker: worker(),
    };
    let r = Renderer::new(Config::new(dir.path()).tools(tools)).unwrap();
    let req = app(&repo.url(), "overlay-prod", "overlays/prod");
    r.render(&req).unwrap();
    repo.commit(
        &[("unrelated/cm.yaml", configmap("x", "v: two"))],
        "unrelated",
    );
    assert!(r.render(&req).unwrap().sources[0].unchanged_inputs);
    repo.commit(&[("base/cm.yaml", configmap("web", "v: two"))], "base");
    let out = r.render(&req).unwrap();
    assert!(!out.sources[0].cache_hit);
    assert_eq!(out.manifests[0].object["data"]["v"], "two");
    assert_eq!(r.render_count(), 2);
}

#[test]
fn a_restart_renders_nothing_it_had_even_at_a_new_commit_that_changed_nothing() {
    let repo = fleet(3);
    let dir = tempfile::tempdir().unwrap();
    let reqs: Vec<_> = (0..3)
        .map(|i| {
            app(
                &repo.url(),
                &format!("restart-{i}"),
                &format!("apps/app-{i}"),
            )
        })
        .collect();
    let first = Renderer::new(Config::new(dir.path()).tools(tools())).unwrap();
    for req in &reqs {
        first.render(req).unwrap();
    }
    assert_eq!(first.render_count(), 3);
    drop(first);
    repo.commit(&[("README.md", "docs")], "docs only");
    let again = Renderer::new(Config::new(dir.path()).tools(tools())).unwrap();
    for req in &reqs {
        let out = again.render(req).unwrap();
        assert!(out.sources[0].unchanged_inputs);
    }
    assert_eq!((again.render_count(), again.skipped_count()), (0, 3));
}

#[test]
fn old_manifests_leave_memory_once_no_application_points_at_them() {
    let repo = fleet(2);
    let (r, _d) = shared_renderer();
    let a = app(&repo.url(), "memory-a", "apps/app-0");
    let b = app(&repo.url(), "memory-b", "apps/app-1");
    r.render(&a).unwrap();
    r.render(&b).unwrap();
    let both = r.memory_cache_bytes();
    assert!(both > 0);
    repo.commit(
        &[(
            "apps/app-0/cm.yaml",
            configmap("app-0", "v: a-much-longer-value"),
        )],
        "a",
    );
    r.invalidate_refs(&repo.url());
    r.render(&a).unwrap();
    let new_a = r.memory_cache_bytes();
    // Nobody points at app-0's old manifests any more: only the new ones and app-1's are held.
    assert_eq!(new_a, both + "a-much-longer-value".len() - "one".len());
    r.release("argocd/memory-b");
    assert!(r.memory_cache_bytes() < new_a);
    // Still on disk: asking again costs no render.
    r.render(&b).unwrap();
    assert_eq!(r.render_count(), 3);
}

#[test]
fn unused_commit_trees_are_removed_beyond_the_newest() {
    let repo = fleet(1);
    let (r, d) = shared_renderer();
    r.git().set_tree_retention(2, Duration::ZERO);
    let req = app(&repo.url(), "trees", "apps/app-0");
    for i in 0..5 {
        repo.commit(
            &[(
                "apps/app-0/cm.yaml",
                configmap("app-0", &format!("v: '{i}'")),
            )],
            "next",
        );
        r.invalidate_refs(&repo.url());
        r.render(&req).unwrap();
    }
    let trees = d.path().join("git/trees");
    let repo_dir = std::fs::read_dir(&trees)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let left = std::fs::read_dir(repo_dir)
        .unwrap()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .count();
    assert_eq!(left, 2);
}

/// Keeps `ApplicationSource` in use for the multi-source helper below.
#[test]
fn a_ref_source_on_the_same_repository_shares_the_listing() {
    let repo = fleet(1);
    let (r, _d) = shared_renderer();
    let mut req = app(&repo.url(), "refs-shared", "apps/app-0");
    req.sources.push(ApplicationSource {
        repo_url: repo.url(),
        target_revision: Some("main".into()),
        reference: Some("values".into()),
        ..Default::default()
    });
    r.render(&req).unwrap();
    assert_eq!(r.git().listing_count(), 1);
}

/// Figures for docs/performance.md ("Git and render sharing"): 1,000 directory Applications of
/// ten objects on one repository, rendered by four threads (the controller's default workers):
/// a cold wave, a wave with nothing new, a commit touching 10 % of them, and a restart.
/// `cargo test -p plumb-source --test it -- --ignored thousand_applications --nocapture`
#[test]
#[ignore = "prints figures; run on purpose"]
fn thousand_applications_on_one_repository_figures() {
    const N: usize = 1000;
    let repo = GitRepo::new();
    let objects = |i: usize, v: &str| -> String {
        (0..10)
            .map(|k| configmap(&format!("app-{i}-{k}"), &format!("v: '{v}'")))
            .collect::<Vec<_>>()
            .join("---\n")
    };
    let files: Vec<(String, String)> = (0..N)
        .map(|i| (format!("apps/app-{i}/objects.yaml"), objects(i, "one")))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    repo.commit(&refs, "fleet");
    let dir = tempfile::tempdir().unwrap();
    let make = || {
        Arc::new(
            Renderer::new(
                Config::new(dir.path())
                    .tools(tools())
                    .ref_cache_ttl(Duration::from_secs(5)),
            )
            .unwrap(),
        )
    };
    let reqs: Arc<Vec<RenderRequest>> = Arc::new(
        (0..N)
            .map(|i| app(&repo.url(), &format!("fleet-{i}"), &format!("apps/app-{i}")))
            .collect(),
    );
    let wave = |r: &Arc<Renderer>, what: &str| {
        let start = std::time::Instant::now();
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (r, reqs, next) = (Arc::clone(r), Arc::clone(&reqs), Arc::clone(&next));
                std::thread::spawn(move || {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(req) = reqs.get(i) else { break };
                        r.render(req).unwrap();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        println!(
            "| {what} | {:.1} s | {} | {} | {} | {} | {} | {:.1} MiB |",
            start.elapsed().as_secs_f64(),
            r.git().listing_count(),
            r.git().fetch_count(),
            r.render_count(),
            r.cached_count(),
            r.skipped_count(),
            r.memory_cache_bytes() as f64 / (1 << 20) as f64,
        );
    };
    println!(
        "| wave | time | ls-remote | fetch | rendered | cached | skipped | manifests in memory |"
    );
    let r = make();
    wave(&r, "cold");
    std::thread::sleep(Duration::from_secs(6));
    wave(&r, "nothing new (TTL expired: one listing)");
    let touched: Vec<(String, String)> = (0..N)
        .step_by(10)
        .map(|i| (format!("apps/app-{i}/objects.yaml"), objects(i, "two")))
        .collect();
    let refs: Vec<(&str, &str)> = touched
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    repo.commit(&refs, "10 %");
    r.invalidate_refs(&repo.url());
    wave(&r, "a commit touching 10 %");
    drop(r);
    let r = make();
    wave(&r, "restart (same cache directory)");
}
