//! Fetching and revision resolution over file:// and HTTP.

use std::time::Duration;

use plumb_source::{Error, GitCache, Limits, RepoCredentials};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;

use crate::support::*;

fn cache() -> (GitCache, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (GitCache::new(dir.path(), Limits::default()).unwrap(), dir)
}

#[test]
fn resolves_every_kind_of_revision_over_file_url() {
    let repo = GitRepo::new();
    let c1 = repo.commit(&[("app/cm.yaml", configmap("a", "k: v1"))], "one");
    repo.tag("v1");
    let tag_object = repo.annotated_tag("v1.0.0", "release 1");
    repo.update_ref("refs/pull/7/head");
    let c2 = repo.commit(&[("app/cm.yaml", configmap("a", "k: v2"))], "two");
    repo.branch("feature");
    let c3 = repo.commit(&[("app/cm.yaml", configmap("a", "k: v3"))], "three");
    repo.checkout("main");

    let (git, _d) = cache();
    let url = repo.url();
    assert_eq!(git.resolve(&url, "HEAD").unwrap(), c2);
    assert_eq!(git.resolve(&url, "").unwrap(), c2);
    assert_eq!(git.resolve(&url, "main").unwrap(), c2);
    assert_eq!(git.resolve(&url, "feature").unwrap(), c3);
    assert_eq!(git.resolve(&url, "v1").unwrap(), c1);
    // An annotated tag resolves to the commit, not to the tag object.
    assert_ne!(tag_object, c1);
    assert_eq!(git.resolve(&url, "v1.0.0").unwrap(), c1);
    assert_eq!(git.resolve(&url, "refs/tags/v1.0.0").unwrap(), c1);
    assert_eq!(git.resolve(&url, "refs/heads/feature").unwrap(), c3);
    assert_eq!(git.resolve(&url, "refs/pull/7/head").unwrap(), c1);
    assert_eq!(git.resolve(&url, &c1).unwrap(), c1);
    assert_eq!(git.resolve(&url, &c3[..8]).unwrap(), c3);

    let err = git.resolve(&url, "no-such-branch").unwrap_err();
    assert!(matches!(err, Error::RevisionNotFound { .. }), "{err}");
    assert!(err.to_string().contains("no-such-branch"), "{err}");
    let err = git
        .resolve(&url, "0000000000000000000000000000000000000000")
        .unwrap_err();
    assert!(matches!(err, Error::RevisionNotFound { .. }), "{err}");

    // The tree of an older commit is there, read-only, without touching the newer one.
    let old = git.checkout(&url, "v1", &c1).unwrap();
    let new = git.checkout(&url, "main", &c2).unwrap();
    assert!(
        std::fs::read_to_string(old.dir.join("app/cm.yaml"))
            .unwrap()
            .contains("k: v1")
    );
    assert!(
        std::fs::read_to_string(new.dir.join("app/cm.yaml"))
            .unwrap()
            .contains("k: v2")
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(old.dir.join("app/cm.yaml"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o222, 0, "tree files are read-only, mode {mode:o}");
    // A pull-request ref outside heads/tags is fetched explicitly.
    let pr = git.checkout(&url, "refs/pull/7/head", &c1).unwrap();
    assert_eq!(pr.dir, old.dir);
}

#[test]
fn ref_check_is_cheap_and_sees_a_moved_branch() {
    let repo = GitRepo::new();
    let c1 = repo.commit(&[("a.yaml", configmap("a", "k: one"))], "one");
    let (git, _d) = cache();
    assert_eq!(git.resolve(&repo.url(), "main").unwrap(), c1);
    assert_eq!(
        git.fetch_count(),
        0,
        "resolving a branch lists refs and fetches nothing"
    );
    git.checkout(&repo.url(), "main", &c1).unwrap();
    assert_eq!(git.fetch_count(), 1);
    git.checkout(&repo.url(), "main", &c1).unwrap();
    assert_eq!(git.fetch_count(), 1, "an existing tree costs no fetch");

    let c2 = repo.commit(&[("a.yaml", configmap("a", "k: two"))], "two");
    let refs = git.ls_remote(&repo.url()).unwrap();
    let main = refs.iter().find(|r| r.name == "refs/heads/main").unwrap();
    assert_eq!(main.target, c2);
    let head = refs.iter().find(|r| r.name == "HEAD").unwrap();
    assert_eq!(head.symref_target.as_deref(), Some("refs/heads/main"));
    assert_eq!(git.resolve(&repo.url(), "main").unwrap(), c2);
}

#[test]
fn http_with_basic_auth_from_an_argo_repository_secret() {
    let repo = GitRepo::named("payments-config");
    let c1 = repo.commit(&[("deploy/cm.yaml", configmap("a", "k: v"))], "one");
    let server = GitHttpServer::serve(&repo, Some(("bot", "s3cr3t-token")));

    // No credentials: refused, and the error says which repository.
    let (git, _d) = cache();
    let err = git.resolve(&server.url(), "main").unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains(&server.url()), "{err}");
    assert!(server.rejected() >= 1);

    // Credentials from a Secret as the API server returns it.
    let secret = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "payments-repo", "namespace": "argocd", "resourceVersion": "4411",
            "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"url": server.url(), "username": "bot", "password": "s3cr3t-token", "type": "git"}
    });
    let creds = RepoCredentials::from_secret(&secret).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let git = GitCache::new(dir.path(), Limits::default())
        .unwrap()
        .with_credentials(vec![creds]);
    assert_eq!(git.resolve(&server.url(), "main").unwrap(), c1);
    let tree = git.checkout(&server.url(), "main", &c1).unwrap();
    assert!(tree.dir.join("deploy/cm.yaml").is_file());

    // Wrong password in the URL itself: the error names the repository without the secret.
    let (git, _d) = cache();
    let err = git
        .resolve(
            &server.url_with_credentials("bot", "wrong-pass-xyz"),
            "main",
        )
        .unwrap_err();
    let text = chain(&err);
    assert!(!text.contains("wrong-pass-xyz"), "{text}");
    assert!(text.contains(&server.url()), "{text}");
    // Right password in the URL works.
    assert_eq!(
        git.resolve(&server.url_with_credentials("bot", "s3cr3t-token"), "main")
            .unwrap(),
        c1
    );
}

#[test]
fn renders_over_http_like_over_file() {
    let repo = GitRepo::named("app");
    repo.commit(
        &[
            ("deploy/deployment.yaml", DEPLOYMENT),
            ("deploy/service.yaml", SERVICE),
        ],
        "app",
    );
    let server = GitHttpServer::serve(&repo, None);
    let (r, _d) = renderer();
    let out = r
        .render(&request(vec![source(&server.url(), "deploy", "main")]))
        .unwrap();
    assert_eq!(keys(&out), ["apps/Deployment//api", "/Service//api"]);
}

#[test]
fn fetch_timeout_stops_waiting_on_a_silent_server() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/repo", listener.local_addr().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let git = GitCache::new(
        dir.path(),
        Limits::default().fetch_timeout(Duration::from_secs(1)),
    )
    .unwrap();
    let err = git.resolve(&url, "main").unwrap_err();
    assert!(matches!(err, Error::FetchTimeout { .. }), "{err}");
    assert!(err.to_string().contains("took longer than 1s"), "{err}");
    drop(listener);
}

#[test]
fn concurrent_fetches_of_one_repository_share_the_cache_safely() {
    let repo = GitRepo::new();
    let mut files = Vec::new();
    for i in 0..50 {
        files.push((
            format!("app/cm-{i}.yaml"),
            configmap(&format!("cm-{i}"), "k: v"),
        ));
    }
    let files: Vec<(&str, String)> = files.iter().map(|(p, c)| (p.as_str(), c.clone())).collect();
    let c1 = repo.commit(&files, "many");
    let dir = tempfile::tempdir().unwrap();
    let url = repo.url();
    // Two caches on one directory stand for two controller processes.
    let caches: Vec<GitCache> = (0..2)
        .map(|_| GitCache::new(dir.path(), Limits::default()).unwrap())
        .collect();
    std::thread::scope(|s| {
        for i in 0..6 {
            let git = &caches[i % 2];
            let url = url.clone();
            let c1 = c1.clone();
            s.spawn(move || {
                let commit = git.resolve(&url, "main").unwrap();
                assert_eq!(commit, c1);
                let tree = git.checkout(&url, "main", &commit).unwrap();
                assert_eq!(std::fs::read_dir(tree.dir.join("app")).unwrap().count(), 50);
            });
        }
    });
}

#[test]
fn ssh_with_a_private_key_from_an_argo_repository_secret() {
    let repo = GitRepo::named("payments-ssh");
    let c1 = repo.commit(&[("deploy/cm.yaml", configmap("a", "k: v"))], "one");
    let server = plumb_testenv::git_ssh::GitSshServer::serve(&repo);
    let url = server.url();

    // No key: the ssh binary is refused, and the error names the repository.
    let (git, _d) = cache();
    let err = git.resolve(&url, "main").unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains("127.0.0.1"), "{err}");

    // The key from an Argo repository Secret (`insecure: "true"` skips host key checking).
    let secret = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "payments-ssh", "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"url": url, "sshPrivateKey": server.private_key(), "insecure": "true", "type": "git"}
    });
    let creds = RepoCredentials::from_secret(&secret).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let git = GitCache::new(dir.path(), Limits::default())
        .unwrap()
        .with_credentials(vec![creds]);
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);
    let tree = git.checkout(&url, "main", &c1).unwrap();
    assert!(tree.dir.join("deploy/cm.yaml").is_file());
    // The key never shows in what the cache reports.
    let err = git.resolve(&url, "no-such-branch").unwrap_err().to_string();
    assert!(!err.contains("PRIVATE KEY"), "{err}");
}

/// A `file://` source may name any repository on the machine except the cache's own copies:
/// they are other tenants' private repositories (an Application under a project that permits
/// every URL, `sourceRepos: ["*"]`, could otherwise render them). Refused however the path is
/// spelt: directly, through a link from outside, with `..`, percent-encoded, or in a sibling
/// cache directory given to [`GitCache::protect`].
#[test]
fn a_local_source_cannot_read_the_caches_own_repositories() {
    let victim = GitRepo::new();
    victim.commit(
        &[("app/secret.yaml", configmap("victim", "k: private"))],
        "private",
    );
    let (git, dir) = cache();
    // The victim's mirror, as another Application's fetch leaves it.
    git.resolve(&victim.url(), "HEAD").unwrap();
    let mirror = std::fs::read_dir(dir.path().join("repos"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "git"))
        .expect("a mirror in the cache");
    let outside = tempfile::tempdir().unwrap();
    let link = outside.path().join("innocent.git");
    std::os::unix::fs::symlink(&mirror, &link).unwrap();
    let m = mirror.display().to_string();
    let name = mirror.file_name().unwrap().to_string_lossy().to_string();
    let encoded = m.replacen("/repos/", "/%72epos/", 1);
    let climbing = format!("{}/../repos/{name}", dir.path().join("keys").display());
    for url in [
        format!("file://{m}"),
        format!("FILE://{m}"),
        format!("file:{m}"),
        m.clone(),
        format!("file://{}", link.display()),
        format!("file://{encoded}"),
        format!("file://{climbing}"),
    ] {
        match git.resolve(&url, "HEAD") {
            Err(Error::RepositoryRefused { reason, .. }) => {
                assert!(reason.contains("cache directory"), "{url}: {reason}")
            }
            other => panic!("{url}: {other:?}"),
        }
    }
    // A sibling directory of the cache, protected by its owner.
    let sibling = tempfile::tempdir().unwrap();
    let copy = sibling.path().join("copy.git");
    std::fs::create_dir_all(&copy).unwrap();
    let status = std::process::Command::new("git")
        .args(["clone", "--bare", "-q", &victim.url()])
        .arg(&copy)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success());
    let url = format!("file://{}", copy.display());
    assert!(git.resolve(&url, "HEAD").is_ok(), "not protected yet");
    git.protect(sibling.path());
    assert!(matches!(
        git.resolve(&url, "HEAD"),
        Err(Error::RepositoryRefused { .. })
    ));
    // Any other local repository is still a source (the victim's own, here).
    assert!(git.resolve(&victim.url(), "HEAD").is_ok());
}
