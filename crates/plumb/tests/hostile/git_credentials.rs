//! Attacks and mistakes in Git repository Secrets (issue #27): a bearer token the server refuses,
//! a proxy with a password in its URL, a TLS client key that is no key, a GitHub App key that is
//! not PEM, and a GitHub App token endpoint that answers garbage. Each runs the real
//! `plumb render` with `PLUMB_LOG=trace` against real servers on 127.0.0.1 and checks that it
//! fails with an error naming the field, and that no secret appears anywhere in what it printed.

use std::io::{Read, Write};
use std::path::Path;

use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::{GitHttpServer, Options};
use plumb_testenv::github_api::{GithubApi, Mode};

/// `plumb render --repo <url> --path app` with this Secret (`stringData` lines), tracing on:
/// whether it succeeded, and everything it printed.
fn render(dir: &Path, url: &str, fields: &str) -> (bool, String) {
    let secret = dir.join("repo-secret.yaml");
    std::fs::write(
        &secret,
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: repo\n  namespace: argocd\n  labels:\n    argocd.argoproj.io/secret-type: repository\nstringData:\n  url: {url}\n{fields}"
        ),
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["render", "--repo", url, "--path", "app", "--repo-secret"])
        .arg(&secret)
        .arg("--cache-dir")
        .arg(cache.path())
        .env("PLUMB_LOG", "trace")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), all)
}

/// A proxy that answers `502` to everything.
fn refusing_proxy() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let _ = s.read(&mut [0u8; 4096]);
            let _ = s.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
        }
    });
    format!("{addr}")
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

#[test]
fn git_secrets_with_hostile_values_fail_clearly_and_never_print_a_secret() {
    let repo = GitRepo::named("secrets-git");
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )],
        "one",
    );
    let server = GitHttpServer::start(
        &repo,
        Options {
            authorization: Some("Bearer the-right-token".into()),
            ..Default::default()
        },
    );
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let api = GithubApi::start(7, 8, "ghs_never", Mode::Garbage);
    let key_line = api.private_key().lines().nth(1).unwrap().to_owned();
    let cases = [
        ("  bearerToken: bbdc-wrong-tok-77\n".to_owned(), "unreachable"),
        (
            format!("  proxy: http://proxyuser:pr0xy-pass-77@{}\n", refusing_proxy()),
            "502",
        ),
        (
            "  tlsClientCertData: not-a-cert\n  tlsClientCertKey: tls-key-77\n".to_owned(),
            "tlsClientCertData / tlsClientCertKey",
        ),
        (
            "  githubAppID: \"7\"\n  githubAppInstallationID: \"8\"\n  githubAppPrivateKey: app-key-77\n"
                .to_owned(),
            "githubAppPrivateKey: not a PEM private key",
        ),
        (
            format!(
                "  githubAppID: \"7\"\n  githubAppInstallationID: \"8\"\n  githubAppEnterpriseBaseUrl: {}\n  githubAppPrivateKey: |\n{}",
                api.base_url(),
                indent(api.private_key())
            ),
            "is not GitHub's JSON",
        ),
    ];
    for (fields, want) in cases {
        let (ok, all) = render(dir.path(), &url, &fields);
        assert!(!ok, "{fields}: {all}");
        assert!(all.contains(want), "{want}: {all}");
        for secret in [
            "bbdc-wrong-tok-77",
            "pr0xy-pass-77",
            "tls-key-77",
            "app-key-77",
            key_line.as_str(),
            "the-right-token",
        ] {
            assert!(!all.contains(secret), "{secret} printed: {all}");
        }
    }
}
