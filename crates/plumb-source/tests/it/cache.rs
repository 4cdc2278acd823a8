//! The manifest cache, proven by counting renders.

use plumb_model::application::DirectorySource;
use plumb_source::{Config, Refresh, Renderer};
use plumb_testenv::git::GitRepo;

use crate::support::*;

#[test]
fn unchanged_commit_costs_one_ref_check_and_no_render() {
    let repo = GitRepo::new();
    let c1 = repo.commit(&[("deploy/a.yaml", configmap("a", "k: one"))], "one");
    let (r, _d) = renderer();
    let req = request(vec![source(&repo.url(), "deploy", "main")]);

    let first = r.render(&req).unwrap();
    assert_eq!((r.render_count(), first.sources[0].cache_hit), (1, false));
    assert_eq!(first.sources[0].commit, c1);
    let (fetches, listings) = (r.git().fetch_count(), r.git().listing_count());

    let second = r.render(&req).unwrap();
    assert_eq!((r.render_count(), second.sources[0].cache_hit), (1, true));
    assert_eq!(second.manifests, first.manifests);
    assert_eq!(
        r.git().fetch_count(),
        fetches,
        "no fetch for an unchanged commit"
    );
    assert_eq!(
        r.git().listing_count(),
        listings + 1,
        "exactly one ref check"
    );

    // The same commit named by its SHA shares the entry.
    let by_sha = r
        .render(&request(vec![source(&repo.url(), "deploy", &c1)]))
        .unwrap();
    assert!(by_sha.sources[0].cache_hit);
    assert_eq!(r.render_count(), 1);

    // A hard refresh renders again.
    let mut hard = req.clone();
    hard.refresh = Refresh::Hard;
    assert!(!r.render(&hard).unwrap().sources[0].cache_hit);
    assert_eq!(r.render_count(), 2);

    // A new commit renders again, and so does a changed parameter.
    repo.commit(&[("deploy/a.yaml", configmap("a", "k: two"))], "two");
    let third = r.render(&req).unwrap();
    assert_eq!(r.render_count(), 3);
    assert_eq!(third.manifests[0].object["data"]["k"], "two");
    let mut recurse = req.clone();
    recurse.sources[0].directory = Some(DirectorySource {
        recurse: Some(true),
        ..Default::default()
    });
    r.render(&recurse).unwrap();
    assert_eq!(r.render_count(), 4);
}

#[test]
fn disk_cache_survives_a_restart() {
    let repo = GitRepo::new();
    repo.commit(&[("deploy/a.yaml", configmap("a", "k: one"))], "one");
    let dir = tempfile::tempdir().unwrap();
    let req = request(vec![source(&repo.url(), "deploy", "main")]);
    let first = Renderer::new(Config::new(dir.path())).unwrap();
    first.render(&req).unwrap();
    assert_eq!(first.render_count(), 1);
    drop(first);
    let again = Renderer::new(Config::new(dir.path())).unwrap();
    let out = again.render(&req).unwrap();
    assert_eq!(again.render_count(), 0);
    assert!(out.sources[0].cache_hit);
    assert_eq!(keys(&out), ["/ConfigMap//a"]);
}
