//! Git LFS (`enableLfs: "true"`): manifests stored in LFS by the real `git lfs` client on
//! git-lfs's reference server (`lfs-test-server`) render with their content; without
//! `enableLfs` the pointers stay, as in Argo CD; objects the server lacks, objects over the
//! limits, and a server on another origin that needs credentials are refused naming the file,
//! with no credential in the error.

use std::time::Duration;

use plumb_source::{Config, GitCache, Limits, RepoCredentials};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use plumb_testenv::git_lfs::{LfsServer, commit_lfs};
use serde_json::{Value, json};

use crate::support::{chain, keys, request, source, tools};

const CM: &[u8] = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-lfs\ndata:\n  k: v\n";

fn secret(fields: Value) -> RepoCredentials {
    RepoCredentials::from_secret(&json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "repo", "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": fields
    }))
    .unwrap()
}

fn renderer(
    creds: Vec<RepoCredentials>,
    limits: Limits,
) -> (plumb_source::Renderer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r =
        plumb_source::Renderer::new(Config::new(dir.path()).tools(tools()).limits(limits)).unwrap();
    r.set_repositories(creds, Default::default());
    (r, dir)
}

fn limits() -> Limits {
    Limits {
        fetch_timeout: Duration::from_secs(20),
        ..Limits::default()
    }
}

#[test]
fn manifests_stored_in_lfs_render_with_enable_lfs() {
    let lfs = LfsServer::start(None);
    let repo = GitRepo::named("lfs-render");
    repo.commit(
        &[(
            "deploy/plain.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
        )],
        "plain",
    );
    commit_lfs(&repo, &lfs, &[("deploy/cm.yaml", CM)], "lfs");
    let http = GitHttpServer::serve(&repo, None);
    let url = http.url();

    let (r, _d) = renderer(
        vec![secret(json!({"url": url, "enableLfs": "true"}))],
        limits(),
    );
    let rendered = r
        .render(&request(vec![source(&url, "deploy", "main")]))
        .unwrap_or_else(|e| panic!("{}\n{}", chain(&e), lfs.log()));
    assert_eq!(
        keys(&rendered),
        ["/ConfigMap//from-lfs", "/ConfigMap//plain"]
    );

    // Without enableLfs the pointer stays in the checkout, as in Argo CD.
    let dir = tempfile::tempdir().unwrap();
    let git = GitCache::new(dir.path(), limits()).unwrap();
    let head = repo.head();
    let tree = git.checkout(&url, "main", &head).unwrap();
    let text = std::fs::read_to_string(tree.dir.join("deploy/cm.yaml")).unwrap();
    assert!(
        text.starts_with("version https://git-lfs.github.com/spec/v1"),
        "{text}"
    );
}

#[test]
fn hostile_lfs_objects_are_refused_naming_the_file() {
    let lfs = LfsServer::start(None);
    let repo = GitRepo::named("lfs-hostile");
    let big = [CM, format!("# {}\n", "x".repeat(1000)).as_bytes()].concat();
    commit_lfs(&repo, &lfs, &[("deploy/cm.yaml", &big)], "lfs");
    let http = GitHttpServer::serve(&repo, None);
    let url = http.url();
    let head = repo.head();
    let enabled = || vec![secret(json!({"url": url, "enableLfs": "true"}))];
    let checkout = |creds: Vec<RepoCredentials>, limits: Limits| {
        let dir = tempfile::tempdir().unwrap();
        let git = GitCache::new(dir.path(), limits)
            .unwrap()
            .with_credentials(creds);
        git.checkout(&url, "main", &head)
            .map(|_| ())
            .map_err(|e| chain(&e))
    };

    // Over the file limit: refused before anything is downloaded.
    let small = Limits {
        // Every file of the tree fits (the pointer too), the object does not.
        max_file_bytes: 512,
        ..limits()
    };
    let err = checkout(enabled(), small).unwrap_err();
    assert!(
        err.contains("deploy/cm.yaml") && err.contains("file limit"),
        "{err}"
    );

    // A pointer whose object the server does not have.
    let missing = GitRepo::named("lfs-missing");
    std::fs::write(
        missing.path().join(".lfsconfig"),
        format!("[lfs]\n\turl = {}\n", lfs.url("lfs-missing")),
    )
    .unwrap();
    let c = missing.commit(&[("deploy/cm.yaml", "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12\n")], "pointer");
    let mhttp = GitHttpServer::serve(&missing, None);
    let murl = mhttp.url();
    let dir = tempfile::tempdir().unwrap();
    let git = GitCache::new(dir.path(), limits())
        .unwrap()
        .with_credentials(vec![secret(json!({"url": murl, "enableLfs": "true"}))]);
    let err = chain(&git.checkout(&murl, "main", &c).unwrap_err());
    assert!(
        err.contains("4d7a2146") || err.contains("deploy/cm.yaml"),
        "{err}"
    );

    // An LFS server on another origin that wants credentials gets none of the repository's.
    let guarded = LfsServer::start(Some(("bot", "lfs-Pw-27")));
    let repo2 = GitRepo::named("lfs-guarded");
    commit_lfs(&repo2, &guarded, &[("deploy/cm.yaml", CM)], "lfs");
    let http2 = GitHttpServer::serve(&repo2, Some(("bot", "lfs-Pw-27")));
    let url2 = http2.url();
    let dir = tempfile::tempdir().unwrap();
    let git = GitCache::new(dir.path(), limits())
        .unwrap()
        .with_credentials(vec![secret(
            json!({"url": url2, "enableLfs": "true", "username": "bot", "password": "lfs-Pw-27"}),
        )]);
    let err = chain(&git.checkout(&url2, "main", &repo2.head()).unwrap_err());
    assert!(err.contains("HTTP 401"), "{err}");
    assert!(!err.contains("lfs-Pw-27"), "{err}");
}
