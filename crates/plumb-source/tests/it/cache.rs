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

/// The unsalted key of the layout before issue #12: SHA-256 of the normalised URL, 12 bytes.
fn legacy_key(url: &str) -> String {
    use sha2::Digest;
    let lower = url.trim().to_lowercase();
    let lower = lower.trim_end_matches('/');
    let normalized = lower.strip_suffix(".git").unwrap_or(lower);
    sha2::Sha256::digest(normalized.as_bytes())
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn cache_directories_are_salted_per_installation() {
    let repo = GitRepo::new();
    repo.commit(&[("deploy/a.yaml", configmap("a", "k: v"))], "one");
    let req = request(vec![source(&repo.url(), "deploy", "main")]);
    let (a, dir_a) = renderer();
    let (b, dir_b) = renderer();
    a.render(&req).unwrap();
    b.render(&req).unwrap();
    let trees_a = names(&dir_a.path().join("git/trees"));
    let trees_b = names(&dir_b.path().join("git/trees"));
    assert_eq!((trees_a.len(), trees_b.len()), (1, 1));
    // Two installations put one repository in different places, neither computable from the URL.
    assert_ne!(trees_a, trees_b);
    assert!(!trees_a.contains(&legacy_key(&repo.url())));
    let salt = std::fs::read_to_string(dir_a.path().join("git/salt")).unwrap();
    assert_eq!(salt.trim().len(), 64);
    // Manifest cache files differ too.
    assert_ne!(
        names(&dir_a.path().join("manifests")),
        names(&dir_b.path().join("manifests"))
    );
}

#[test]
fn a_cache_of_the_unsalted_layout_is_emptied_once_and_refilled() {
    let repo = GitRepo::new();
    repo.commit(&[("deploy/a.yaml", configmap("a", "k: v"))], "one");
    let dir = tempfile::tempdir().unwrap();
    let key = legacy_key(&repo.url());
    // What an older Plumb left: a mirror, a read-only tree, a key file and a manifest entry.
    let tree = dir.path().join("git/trees").join(&key).join("0123abcd");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("a.yaml"), "stale").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::create_dir_all(dir.path().join("git/repos").join(format!("{key}.git"))).unwrap();
    std::fs::create_dir_all(dir.path().join("git/keys")).unwrap();
    std::fs::write(dir.path().join("git/keys").join(format!("{key}.key")), "k").unwrap();
    std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
    std::fs::write(dir.path().join("manifests/old.json"), "[]").unwrap();

    let r = Renderer::new(Config::new(dir.path())).unwrap();
    assert!(names(&dir.path().join("git/trees")).is_empty());
    assert!(names(&dir.path().join("git/repos")).is_empty());
    assert!(names(&dir.path().join("git/keys")).is_empty());
    assert!(names(&dir.path().join("manifests")).is_empty());
    let out = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap();
    assert_eq!(keys(&out), ["/ConfigMap//a"]);

    // A second start keeps the salted entries.
    let trees = names(&dir.path().join("git/trees"));
    drop(r);
    let r = Renderer::new(Config::new(dir.path())).unwrap();
    assert_eq!(names(&dir.path().join("git/trees")), trees);
    let again = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap();
    assert!(again.sources[0].cache_hit);
}
