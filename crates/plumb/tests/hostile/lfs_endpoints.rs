//! Hostile Git LFS endpoints and GitHub App installation listings (issue #27): for a repository
//! with `enableLfs`, an LFS server answering 1 GB, a download href that is not HTTP, an
//! `.lfsconfig` whose URL carries credentials, an object whose bytes are not the pointer's; a
//! GitHub App without an installation ID whose installation list is 1 GB. Each runs the real
//! `plumb render` with `PLUMB_LOG=trace` and must fail, bounded, with a clear message and no
//! credential in anything it printed.

use std::io::{Read, Write};
use std::path::Path;

use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use plumb_testenv::github_api::{GithubApi, Mode};

const PASSWORD: &str = "lfs-repo-Pw-77";
/// The pointer of "hello\n".
const OID: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

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

/// An HTTP server answering every request with `head` then `body_bytes` bytes of `{`.
fn answering(head: &'static str, body_bytes: usize) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = s.read(&mut [0u8; 8192]);
                if s.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let chunk = vec![b'{'; 1 << 20];
                let mut left = body_bytes;
                while left > 0 {
                    let n = left.min(chunk.len());
                    if s.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n;
                }
            });
        }
    });
    format!("http://{addr}")
}

/// A batch API answer (a whole HTTP response) giving `href` as the download of [`OID`].
fn batch_answer(href: &str) -> &'static str {
    let body = format!(
        "{{\"objects\":[{{\"oid\":\"{OID}\",\"size\":6,\"actions\":{{\"download\":{{\"href\":\"{href}\"}}}}}}]}}"
    );
    Box::leak(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.git-lfs+json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_boxed_str(),
    )
}

/// A repository whose `app/cm.yaml` is an LFS pointer, its `.lfsconfig` naming `lfs_url`.
fn pointer_repo(name: &str, lfs_url: &str) -> GitRepo {
    let repo = GitRepo::named(name);
    repo.commit(
        &[
            (
                "app/cm.yaml",
                format!("version https://git-lfs.github.com/spec/v1\noid sha256:{OID}\nsize 6\n"),
            ),
            (".lfsconfig", format!("[lfs]\n\turl = {lfs_url}\n")),
        ],
        "pointer",
    );
    repo
}

#[test]
fn hostile_lfs_endpoints_fail_clearly_and_never_print_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let huge = answering(
        "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.git-lfs+json\r\nconnection: close\r\n\r\n",
        1 << 30,
    );
    let file_server = answering(batch_answer("file:///etc/passwd"), 0);
    // An object server whose bytes are not the pointer's ("hellx\n", not "hello\n").
    let wrong_bytes = answering(
        "HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nhellx\n",
        0,
    );
    let wrong_server = answering(batch_answer(&format!("{wrong_bytes}/o")), 0);
    let cases = [
        (huge.clone(), "exceeds"),
        (file_server, "not an http(s) URL"),
        (wrong_server, "its SHA-256 is not the pointer's oid"),
        (
            format!("http://bot:{PASSWORD}@127.0.0.1:9/x"),
            "the Git LFS endpoint in .lfsconfig holds credentials",
        ),
    ];
    for (i, (lfs_url, want)) in cases.into_iter().enumerate() {
        let repo = pointer_repo(&format!("lfs-hostile-{i}"), &lfs_url);
        let server = GitHttpServer::serve(&repo, Some(("bot", PASSWORD)));
        let fields = format!("  enableLfs: \"true\"\n  username: bot\n  password: {PASSWORD}\n");
        let (ok, all) = render(dir.path(), &server.url(), &fields);
        assert!(!ok, "{lfs_url}: {all}");
        assert!(all.contains(want), "{want}: {all}");
        assert!(!all.contains(PASSWORD), "the password printed: {all}");
    }
}

#[test]
fn a_huge_github_installation_list_fails_bounded() {
    let repo = GitRepo::named("app-huge-list");
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )],
        "one",
    );
    let server = GitHttpServer::start(
        &repo,
        plumb_testenv::git_http::Options {
            owner: Some("octo-org".into()),
            ..Default::default()
        },
    );
    let api = GithubApi::start_installed(7, &[("octo-org", 8)], "ghs_never", Mode::Huge);
    let key_line = api.private_key().lines().nth(1).unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let fields = format!(
        "  githubAppID: \"7\"\n  githubAppEnterpriseBaseUrl: {}\n  githubAppPrivateKey: |\n{}",
        api.base_url(),
        api.private_key()
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    let (ok, all) = render(dir.path(), &server.url(), &fields);
    assert!(!ok, "{all}");
    assert!(
        all.contains("failed to discover GitHub App installation ID for organization octo-org")
            && all.contains("the answer exceeds"),
        "{all}"
    );
    assert!(!all.contains(&key_line), "the App key printed: {all}");
}
