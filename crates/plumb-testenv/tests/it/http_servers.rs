//! The test HTTP servers on their own, without a control plane: Git over smart HTTP through
//! `git http-backend` (with and without credentials, and again on the same port after a stop),
//! and the chart repository's files, credentials, redirects, log and TLS.

use std::process::Command;

use plumb_testenv::chart_repo::{ChartRepoServer, Options};
use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use reqwest::StatusCode;
use reqwest::blocking::Client;

/// `git <args>` with no prompt for credentials: stdout on success, stderr on failure.
fn git(args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ASKPASS", "")
        .output()
        .expect("running git");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn git_is_served_over_smart_http_with_basic_auth() {
    let repo = GitRepo::named("served");
    let head = repo.commit(&[("a.yaml", "a: 1\n")], "first");
    let server = GitHttpServer::serve(&repo, Some(("bot", "s3cret")));

    let refs = git(&["ls-remote", &server.url_with_credentials("bot", "s3cret")]).unwrap();
    assert!(refs.contains(&format!("{head}\trefs/heads/main")), "{refs}");

    let denied = git(&["ls-remote", &server.url()]).unwrap_err();
    assert!(server.rejected() >= 1, "{denied}");
    let wrong = git(&["ls-remote", &server.url_with_credentials("bot", "nope")]);
    assert!(wrong.is_err());

    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("checkout");
    let url = server.url_with_credentials("bot", "s3cret");
    git(&["clone", "-q", &url, checkout.to_str().unwrap()]).unwrap();
    let file = std::fs::read_to_string(checkout.join("a.yaml")).unwrap();
    assert_eq!(file, "a: 1\n");
    assert!(server.requests() > server.rejected());
}

#[test]
fn git_server_stops_when_dropped_and_serves_again_on_its_port() {
    let repo = GitRepo::named("restarted");
    let head = repo.commit(&[("a.yaml", "a: 1\n")], "first");
    let server = GitHttpServer::serve(&repo, None);
    let (url, port) = (server.url(), server.port());
    assert!(git(&["ls-remote", &url]).unwrap().contains(&head));
    drop(server);
    assert!(git(&["ls-remote", &url]).is_err(), "nothing listens");

    let again = GitHttpServer::serve_on(&repo, None, port);
    assert_eq!(again.url(), url);
    assert!(git(&["ls-remote", &url]).unwrap().contains(&head));
}

const INDEX: &str = "apiVersion: v1\nentries: {}\n";

#[test]
fn chart_repo_serves_files_behind_basic_auth_and_logs_requests() {
    let server = ChartRepoServer::start(Options {
        auth: Some(("bot", "s3cret")),
        ..Default::default()
    });
    server.put("index.yaml", INDEX.as_bytes());
    let client = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let index = format!("{}/index.yaml", server.url());

    let anonymous = client.get(&index).send().unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        anonymous.headers()["www-authenticate"],
        "Basic realm=\"charts\""
    );
    assert_eq!(anonymous.headers()["connection"], "close");

    let get = |url: &str| client.get(url).basic_auth("bot", Some("s3cret")).send();
    let ok = get(&index).unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(ok.headers()["content-length"], INDEX.len().to_string());
    assert_eq!(ok.text().unwrap(), INDEX);
    let missing = get(&format!("{}/nothing.tgz", server.url())).unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let root = get(&format!("{}/", server.origin())).unwrap();
    assert_eq!(root.status(), StatusCode::NOT_FOUND, "no directory listing");

    server.redirect("/charts/old.yaml", "/charts/index.yaml");
    let moved = client
        .get(format!("{}/old.yaml", server.url()))
        .send()
        .unwrap();
    assert_eq!(
        moved.status(),
        StatusCode::FOUND,
        "redirects come before auth"
    );
    assert_eq!(moved.headers()["location"], "/charts/index.yaml");

    let log = server.requests();
    let paths: Vec<&str> = log.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/charts/index.yaml",
            "/charts/index.yaml",
            "/charts/nothing.tgz",
            "/",
            "/charts/old.yaml"
        ]
    );
    assert_eq!(log[0].authorization, None);
    assert_eq!(
        log[1].authorization.as_deref(),
        Some("Basic Ym90OnMzY3JldA==")
    );
}

#[test]
fn chart_repo_over_tls_demands_the_client_certificate_it_was_asked_to() {
    let server = ChartRepoServer::start(Options {
        tls: true,
        client_certs: true,
        ..Default::default()
    });
    server.put("index.yaml", INDEX.as_bytes());
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let ca = reqwest::Certificate::from_pem_bundle(server.ca_pem().as_bytes()).unwrap();
    let index = format!("{}/index.yaml", server.url());

    let anonymous = Client::builder()
        .tls_certs_merge(ca.clone())
        .build()
        .unwrap();
    assert!(
        anonymous.get(&index).send().is_err(),
        "no client certificate"
    );

    let (cert, key) = server.client_identity();
    let identity = reqwest::Identity::from_pem(format!("{cert}\n{key}").as_bytes()).unwrap();
    let client = Client::builder()
        .tls_certs_merge(ca)
        .identity(identity)
        .build()
        .unwrap();
    let ok = client.get(&index).send().unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    assert_eq!(ok.text().unwrap(), INDEX);
}
