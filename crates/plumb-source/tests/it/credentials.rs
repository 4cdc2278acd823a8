//! Every credential kind and transport setting of Argo CD repository Secrets, against real
//! servers: `sshd` for host keys, `git http-backend` over HTTPS for TLS, bearer tokens, forced
//! Basic credentials and proxies, and GitHub's documented token endpoint for GitHub Apps.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use plumb_source::{Error, GitCache, KnownHosts, Limits, RepoCredentials, TlsCerts};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::{GitHttpServer, Options, basic_auth};
use plumb_testenv::git_ssh::GitSshServer;
use plumb_testenv::github_api::{GithubApi, Mode};
use serde_json::{Value, json};

use crate::support::*;

/// A repository Secret with these `stringData` fields.
fn secret(fields: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "repo-x", "namespace": "argocd",
            "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": fields
    })
}

fn creds(fields: Value) -> RepoCredentials {
    RepoCredentials::from_secret(&secret(fields)).unwrap()
}

fn cache_with(c: Vec<RepoCredentials>) -> (GitCache, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        fetch_timeout: Duration::from_secs(5),
        ..Limits::default()
    };
    let git = GitCache::new(dir.path(), limits)
        .unwrap()
        .with_credentials(c);
    (git, dir)
}

fn repo(name: &str) -> (GitRepo, String) {
    let repo = GitRepo::named(name);
    let c = repo.commit(&[("deploy/cm.yaml", configmap("a", "k: v"))], "one");
    (repo, c)
}

/// Every error text a test saw, to be searched for secrets at the end.
fn assert_no_secret(texts: &[String], secrets: &[&str]) {
    for t in texts {
        for s in secrets {
            assert!(!t.contains(s), "a secret shows in: {t}");
        }
    }
}

/// Issue #27: host keys were checked against the user's `~/.ssh/known_hosts` (and, without a
/// key in the Secret, under the user's own ssh configuration), never against Argo's list.
#[test]
fn ssh_host_keys_come_from_argocd_ssh_known_hosts_cm_only() {
    let (repo, c1) = repo("hosts-ssh");
    let server = GitSshServer::serve(&repo);
    let url = server.url();
    let key = creds(json!({"url": url, "sshPrivateKey": server.private_key()}));
    let mut seen = Vec::new();

    // No list: no host is known, and the refusal says so in Argo's words.
    let (git, _d) = cache_with(vec![key.clone()]);
    let err = git.resolve(&url, "main").unwrap_err();
    assert!(matches!(err, Error::RepositoryUnreachable { .. }), "{err}");
    assert!(
        err.to_string().contains("knownhosts: key is unknown")
            && err.to_string().contains("argocd-ssh-known-hosts-cm"),
        "{err}"
    );
    seen.push(err.to_string());

    // Another key for the same address: refused as a mismatch.
    git.set_known_hosts(KnownHosts::from_text(&server.wrong_known_hosts_line()));
    let err = git.resolve(&url, "main").unwrap_err().to_string();
    assert!(err.contains("knownhosts: key mismatch"), "{err}");
    seen.push(err);

    // The right key, as the ConfigMap lists it: fetched.
    let cm = json!({"data": {"ssh_known_hosts":
        format!("# github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n{}", server.known_hosts_line())}});
    git.set_known_hosts(KnownHosts::from_config_map(&cm));
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);
    assert!(
        git.checkout(&url, "main", &c1)
            .unwrap()
            .dir
            .join("deploy/cm.yaml")
            .is_file()
    );

    // `insecure: "true"` skips the check (Argo's InsecureIgnoreHostKey), list or not.
    let mut insecure = key.clone();
    insecure.insecure = true;
    let (git, _d) = cache_with(vec![insecure]);
    git.set_known_hosts(KnownHosts::from_text(&server.wrong_known_hosts_line()));
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);
    assert_no_secret(&seen, &["PRIVATE KEY"]);
}

/// Git over HTTPS: the CA of `argocd-tls-certs-cm`, `insecure`, and a TLS client certificate.
#[test]
fn https_git_uses_tls_certs_cm_insecure_and_client_certificates() {
    let (repo, c1) = repo("tls-git");
    let server = GitHttpServer::start(
        &repo,
        Options {
            authorization: Some(basic_auth("bot", "pw-tls-1")),
            tls: true,
            client_certs: true,
            ..Default::default()
        },
    );
    let url = server.url();
    assert!(url.starts_with("https://"), "{url}");
    let (cert, key) = server.client_identity();
    let full = creds(
        json!({"url": url, "username": "bot", "password": "pw-tls-1",
        "tlsClientCertData": cert, "tlsClientCertKey": key}),
    );
    let certs = TlsCerts::default().with("127.0.0.1", server.ca_pem());

    // Without the CA the server is not trusted (gix's own http.sslVerify was never read).
    let (git, _d) = cache_with(vec![full.clone()]);
    let untrusted = git.resolve(&url, "main").unwrap_err().to_string();
    assert!(untrusted.contains("certificate"), "{untrusted}");

    git.set_tls_certs(certs.clone());
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);
    assert!(
        git.checkout(&url, "main", &c1)
            .unwrap()
            .dir
            .join("deploy/cm.yaml")
            .is_file()
    );

    // No client certificate: the handshake fails.
    let mut no_cert = full.clone();
    no_cert.tls_client_cert_data = None;
    no_cert.tls_client_cert_key = None;
    let (git, _d) = cache_with(vec![no_cert]);
    git.set_tls_certs(certs);
    assert!(git.resolve(&url, "main").is_err());

    // `insecure` skips verification: no CA needed.
    let mut insecure = full;
    insecure.insecure = true;
    let (git, _d) = cache_with(vec![insecure]);
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);

    // A client key that is no key: refused, naming the fields, never quoting the key.
    let (git, _d) = cache_with(vec![creds(json!({"url": url,
        "tlsClientCertData": cert, "tlsClientCertKey": "-----BEGIN PRIVATE KEY-----\nbm9wZS1rZXktMQ==\n-----END PRIVATE KEY-----\n"}))]);
    let err = git.resolve(&url, "main").unwrap_err().to_string();
    assert!(
        err.contains("tlsClientCertData / tlsClientCertKey"),
        "{err}"
    );
    assert_no_secret(
        &[untrusted, err],
        &["pw-tls-1", "bm9wZS1rZXktMQ", "PRIVATE KEY"],
    );
}

/// `bearerToken` goes as `Authorization: Bearer`; `forceHttpBasicAuth` sends Basic credentials to
/// a server that never asks for them.
#[test]
fn bearer_tokens_and_forced_basic_credentials() {
    let (repo, c1) = repo("bearer-git");
    let server = GitHttpServer::start(
        &repo,
        Options {
            authorization: Some("Bearer bbdc-tok-1".into()),
            ..Default::default()
        },
    );
    let url = server.url();
    let (git, _d) = cache_with(vec![creds(
        json!({"url": url, "bearerToken": "bbdc-tok-1"}),
    )]);
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);
    let (git, _d) = cache_with(vec![creds(
        json!({"url": url, "username": "bot", "password": "bbdc-tok-1"}),
    )]);
    let refused = git.resolve(&url, "main").unwrap_err().to_string();

    let (repo, c1) = repo_named("forced-git");
    let server = GitHttpServer::start(
        &repo,
        Options {
            authorization: Some(basic_auth("bot", "pw-forced-1")),
            no_challenge: true,
            ..Default::default()
        },
    );
    let url = server.url();
    let plain = creds(json!({"url": url, "username": "bot", "password": "pw-forced-1"}));
    let (git, _d) = cache_with(vec![plain]);
    let unasked = git.resolve(&url, "main").unwrap_err().to_string();
    let forced = creds(
        json!({"url": url, "username": "bot", "password": "pw-forced-1",
        "forceHttpBasicAuth": "true"}),
    );
    let (git, _d) = cache_with(vec![forced]);
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);
    assert_no_secret(&[refused, unasked], &["bbdc-tok-1", "pw-forced-1"]);
}

fn repo_named(name: &str) -> (GitRepo, String) {
    repo(name)
}

/// A proxy that answers every request `502` and counts the requests naming `path`.
pub(crate) fn refusing_proxy(path: &'static str) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            if String::from_utf8_lossy(&buf[..n]).contains(path) {
                counter.fetch_add(1, Ordering::Relaxed);
            }
            let _ = stream.write_all(
                b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (format!("http://{addr}"), seen)
}

/// `proxy` is this repository's proxy (and `noProxy` its exceptions); a proxy that is no URL is
/// refused when the Secret is read.
#[test]
fn the_repository_proxy_is_used_and_no_proxy_bypasses_it() {
    let (repo, c1) = repo("proxied-git");
    let server = GitHttpServer::serve(&repo, None);
    let url = server.url();
    let (proxy, seen) = refusing_proxy("/proxied-git");
    let (git, _d) = cache_with(vec![creds(json!({"url": url, "proxy": proxy}))]);
    let err = git.resolve(&url, "main").unwrap_err().to_string();
    assert!(err.contains("502"), "{err}");
    assert!(seen.load(Ordering::Relaxed) > 0, "the proxy saw no request");
    let before = server.requests();
    assert_eq!(before, 0, "the request went around the proxy");

    let (git, _d) = cache_with(vec![creds(
        json!({"url": url, "proxy": proxy, "noProxy": "example.com,127.0.0.1"}),
    )]);
    assert_eq!(git.resolve(&url, "main").unwrap(), c1);
    assert!(server.requests() > 0);

    for bad in ["not a url", "ftp://proxy:21", "http://", "proxy.corp:3128"] {
        let err = RepoCredentials::from_secret(&secret(json!({"url": url, "proxy": bad})))
            .unwrap_err()
            .to_string();
        assert!(err.contains("proxy is not a URL"), "{bad}: {err}");
    }
}

fn app_secret(url: &str, api: &GithubApi) -> RepoCredentials {
    creds(
        json!({"url": url, "githubAppID": "1234", "githubAppInstallationID": "5678",
        "githubAppPrivateKey": api.private_key(), "githubAppEnterpriseBaseUrl": api.base_url()}),
    )
}

/// A GitHub App: the JWT is exchanged for an installation token (checked by a server that
/// verifies the signature with the App's public key and answers as GitHub documents), kept while
/// valid, and used as the password of `x-access-token` by a real fetch.
#[test]
fn github_app_installation_tokens_fetch_over_https() {
    let (repo, c1) = repo("app-git");
    let api = GithubApi::start(1234, 5678, "ghs_inst4llationT0ken", Mode::Documented);
    let server = GitHttpServer::serve(&repo, Some(("x-access-token", "ghs_inst4llationT0ken")));
    let url = server.url();
    let (git, _d) = cache_with(vec![app_secret(&url, &api)]);
    assert_eq!(git.resolve_fresh(&url, "main").unwrap(), c1);
    assert!(
        git.checkout(&url, "main", &c1)
            .unwrap()
            .dir
            .join("deploy/cm.yaml")
            .is_file()
    );
    git.resolve_fresh(&url, "main").unwrap();
    assert_eq!(
        api.issued(),
        1,
        "the token is kept until it nears its expiry"
    );
    assert_eq!(api.refused(), 0);

    // Another installation ID: GitHub refuses the exchange and the error says where.
    let mut other = app_secret(&url, &api);
    if let Some(app) = other.github_app.as_mut() {
        app.installation_id = 9;
    }
    let (git, _d) = cache_with(vec![other]);
    let err = git.resolve(&url, "main").unwrap_err().to_string();
    assert!(
        err.contains("GitHub App installation token") && err.contains("HTTP 401"),
        "{err}"
    );
    assert_no_secret(&[err], &["ghs_inst4llationT0ken", "PRIVATE KEY"]);
}

/// Without `githubAppInstallationID` the installation is found from the URL's organization
/// among the App's installations (listed over several pages, as GitHub pages them), then its
/// token fetches; an organization the App is not installed on gets Argo's message.
#[test]
fn github_app_installations_are_discovered_from_the_organization() {
    let (repo, c1) = repo("app-discover");
    let token = "ghs_d1scoveredT0ken";
    let api = GithubApi::start_installed(
        1234,
        &[
            ("first", 11),
            ("second", 22),
            ("third", 33),
            ("Octo-Org", 44),
            ("fifth", 55),
        ],
        token,
        Mode::Documented,
    );
    let server = GitHttpServer::start(
        &repo,
        Options {
            authorization: Some(basic_auth("x-access-token", token)),
            owner: Some("octo-org".into()),
            ..Default::default()
        },
    );
    let url = server.url();
    let secret = |url: &str| {
        creds(json!({"url": url, "githubAppID": "1234",
            "githubAppPrivateKey": api.private_key(), "githubAppEnterpriseBaseUrl": api.base_url()}))
    };
    let (git, _d) = cache_with(vec![secret(&url)]);
    assert_eq!(git.resolve_fresh(&url, "main").unwrap(), c1);
    assert_eq!(api.issued(), 1);
    assert_eq!(api.refused(), 0);

    // An organization without the App: Argo's message, nothing fetched.
    let elsewhere = url.replace("/octo-org/", "/other-org/");
    let (git, _d) = cache_with(vec![secret(&elsewhere)]);
    let err = git.resolve(&elsewhere, "main").unwrap_err().to_string();
    assert!(
        err.contains(
            "failed to discover GitHub App installation ID for organization other-org: ensure the \
             GitHub App (ID: 1234) is installed for this organization: installation not found \
             for org: other-org"
        ),
        "{err}"
    );
    // A URL without an organization.
    let bare = GitHttpServer::serve(&repo, None).url();
    let (git, _d) = cache_with(vec![secret(&bare)]);
    let err = git.resolve(&bare, "main").unwrap_err().to_string();
    assert!(err.contains("does not contain org/repo format"), "{err}");
    let key_line = api
        .private_key()
        .lines()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    assert_no_secret(&[err], &[token, &key_line]);

    // Hostile listings: bounded and clear.
    for (mode, expect) in [
        (Mode::Garbage, "is not GitHub's JSON"),
        (Mode::Huge, "the answer exceeds"),
    ] {
        let api = GithubApi::start_installed(1234, &[("octo-org", 44)], token, mode);
        let c = creds(json!({"url": url, "githubAppID": "1234",
            "githubAppPrivateKey": api.private_key(), "githubAppEnterpriseBaseUrl": api.base_url()}));
        let (git, _d) = cache_with(vec![c]);
        let err = git.resolve(&url, "main").unwrap_err().to_string();
        assert!(err.contains(expect), "{mode:?}: {err}");
    }
}

/// Hostile token endpoints and App keys: bounded, clear, and no secret in the errors.
#[test]
fn hostile_github_app_endpoints_and_keys() {
    let (repo, _) = repo("app-hostile");
    let server = GitHttpServer::serve(&repo, Some(("x-access-token", "never")));
    let url = server.url();
    let mut seen = Vec::new();
    for (mode, expect) in [
        (Mode::Garbage, "is not GitHub's JSON"),
        (Mode::Huge, "the answer exceeds"),
        (Mode::Hang, ""),
    ] {
        let api = GithubApi::start(1234, 5678, "ghs_x", mode);
        let (git, _d) = cache_with(vec![app_secret(&url, &api)]);
        let err = git.resolve(&url, "main").unwrap_err();
        if mode == Mode::Hang {
            assert!(matches!(err, Error::FetchTimeout { .. }), "{err}");
        } else {
            assert!(err.to_string().contains(expect), "{mode:?}: {err}");
        }
        seen.push(err.to_string());
        let key = api.private_key().to_owned();
        assert_no_secret(&seen, &[key.lines().nth(1).unwrap()]);
    }
    let api = GithubApi::start(1, 2, "ghs_x", Mode::Documented);
    for (fields, expect) in [
        (
            json!({"githubAppPrivateKey": "hunter2-not-pem", "githubAppID": "1", "githubAppInstallationID": "2"}),
            "githubAppPrivateKey: not a PEM private key",
        ),
        (
            json!({"githubAppPrivateKey": "-----BEGIN RSA PRIVATE KEY-----\naHVudGVyMg==\n-----END RSA PRIVATE KEY-----\n", "githubAppID": "1", "githubAppInstallationID": "2"}),
            "githubAppPrivateKey: not a usable RSA private key",
        ),
        (
            json!({"githubAppPrivateKey": api.private_key(), "githubAppID": "one", "githubAppInstallationID": "2"}),
            "githubAppID is not a number",
        ),
        (
            json!({"githubAppPrivateKey": api.private_key(), "githubAppInstallationID": "1"}),
            "githubAppID is missing",
        ),
        (
            json!({"githubAppPrivateKey": api.private_key(), "githubAppID": "1", "githubAppInstallationID": "2", "githubAppEnterpriseBaseUrl": "ghe"}),
            "githubAppEnterpriseBaseUrl is not an http(s) URL",
        ),
    ] {
        let mut f = fields;
        f["url"] = json!(url);
        let err = RepoCredentials::from_secret(&secret(f))
            .unwrap_err()
            .to_string();
        assert!(err.contains(expect), "{err}");
        seen.push(err);
    }
    assert_no_secret(
        &seen,
        &[
            "hunter2",
            "aHVudGVyMg",
            api.private_key().lines().nth(1).unwrap(),
        ],
    );
}

/// A superproject with a submodule at `vendor/lib` whose `.gitmodules` url is `sub_url`.
fn superproject(name: &str, lib_commit: &str, sub_url: &str) -> GitRepo {
    let app = GitRepo::named(name);
    app.commit(&[("deploy/cm.yaml", configmap("app", "k: v"))], "app");
    app.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{lib_commit},vendor/lib"),
    ]);
    std::fs::write(
        app.path().join(".gitmodules"),
        format!("[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = {sub_url}\n"),
    )
    .unwrap();
    app.git(&["add", ".gitmodules"]);
    app.git(&["commit", "-q", "-m", "submodule"]);
    app
}

/// Submodules are fetched (Argo's default) with the same credential rules as any repository,
/// can be turned off, and never lead to a local path.
#[test]
fn submodules_are_fetched_with_credentials_and_never_from_local_paths() {
    let lib = GitRepo::named("lib-sub");
    let lib_commit = lib.commit(&[("lib.yaml", configmap("lib", "k: from-lib"))], "lib");
    let lib_server = GitHttpServer::serve(&lib, Some(("bot", "pw-sub-1")));
    let app = superproject("app-super", &lib_commit, &lib_server.url());
    let app_server = GitHttpServer::serve(&app, None);
    let url = app_server.url();
    let lib_creds =
        creds(json!({"url": lib_server.url(), "username": "bot", "password": "pw-sub-1"}));

    let (git, _d) = cache_with(vec![lib_creds.clone()]);
    let head = git.resolve(&url, "main").unwrap();
    let tree = git.checkout(&url, "main", &head).unwrap();
    let text = std::fs::read_to_string(tree.dir.join("vendor/lib/lib.yaml")).unwrap();
    assert!(text.contains("from-lib"), "{text}");

    // Without the Secret the submodule's server refuses, and the checkout with it.
    let (git, _d) = cache_with(vec![]);
    let err = git.checkout(&url, "main", &head).unwrap_err().to_string();
    assert!(err.contains("lib-sub"), "{err}");
    assert!(!err.contains("pw-sub-1"), "{err}");

    // Turned off (`reposerver.enable.git.submodule: "false"`): the directory stays empty.
    let (git, _d) = cache_with(vec![]);
    git.set_submodules(false);
    let tree = git.checkout(&url, "main", &head).unwrap();
    assert_eq!(
        std::fs::read_dir(tree.dir.join("vendor/lib"))
            .unwrap()
            .count(),
        0
    );

    // Hostile: a local submodule URL (absolute, file://, or relative to a local superproject).
    for (name, sub_url) in [
        ("evil-file", format!("file://{}", lib.path().display())),
        ("evil-path", lib.path().display().to_string()),
        ("evil-up", "../../../../../../etc".to_owned()),
    ] {
        let evil = superproject(name, &lib_commit, &sub_url);
        let server = GitHttpServer::serve(&evil, None);
        for evil_url in [server.url(), evil.url()] {
            let (git, _d) = cache_with(vec![]);
            let head = git.resolve(&evil_url, "main").unwrap();
            let err = git.checkout(&evil_url, "main", &head).unwrap_err();
            assert!(
                matches!(err, Error::RepositoryRefused { .. }),
                "{name}: {err}"
            );
            assert!(err.to_string().contains("submodule vendor/lib"), "{err}");
        }
    }
    let (git, _d) = cache_with(vec![]);
    let relative = superproject("evil-rel", &lib_commit, "../lib-sub");
    let head = git.resolve(&relative.url(), "main").unwrap();
    let err = git
        .checkout(&relative.url(), "main", &head)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a remote repository"), "{err}");
}
