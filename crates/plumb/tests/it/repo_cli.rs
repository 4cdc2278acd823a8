//! `plumb repo`, `plumb repocreds` and `plumb cert` (issue #27) in core mode (the user's
//! kubeconfig) and through a real `plumb server` process, against a real Git server that
//! requires Basic credentials: Argo's messages and tables, Argo's Secrets and ConfigMaps, and
//! no password or key in anything the CLI printed, the server answered or the server logged.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::GitHttpServer;
use plumb_testenv::process::{LogTail, initial_admin_password, listening_addr};

use crate::app::{control_namespace, env, text};
use crate::server_cli::{Killed, all, login_admin, remote};

const PASSWORD: &str = "cli-Repo-pw-27";
/// A well-formed private key block whose body is `secret-key-material-27-ssh`.
const KEY_BODY: &str = "c2VjcmV0LWtleS1tYXRlcmlhbC0yNy1zc2g=";
const GITHUB: &str =
    "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n";

fn key_pem() -> String {
    format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n-----END OPENSSH PRIVATE KEY-----\n")
}

fn served(name: &str) -> (GitRepo, GitHttpServer) {
    let repo = GitRepo::named(name);
    repo.commit(&[("README", "hello\n")], "first");
    let http = GitHttpServer::serve(&repo, Some(("bot", PASSWORD)));
    (repo, http)
}

/// `plumb ARGS` in core mode on namespace `ns`, with `stdin` fed.
fn core(home: &Path, ns: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("HOME", home)
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("PLUMB_SERVER")
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Files the verbs read.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("known_hosts"), GITHUB).unwrap();
        std::fs::write(dir.path().join("id_key"), key_pem()).unwrap();
        let key = ca_pem();
        std::fs::write(dir.path().join("ca.pem"), key).unwrap();
        Self { dir }
    }
    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

/// A self-signed certificate for git.example.com (`openssl req -x509`, P-256, 100 years).
fn ca_pem() -> &'static str {
    include_str!("../fixtures/repo-cli-ca.pem")
}

/// Runs every verb with `run` and returns all it printed.
fn every_verb(
    run: &dyn Fn(&[&str], &str) -> Output,
    url: &str,
    url2: &str,
    files: &Files,
) -> String {
    let mut printed = String::new();
    let wrong = run(
        &[
            "repo",
            "add",
            url,
            "--username",
            "bot",
            "--password",
            "wrong-pw-1",
        ],
        "",
    );
    printed.push_str(&all(&wrong));
    assert!(!wrong.status.success());
    assert!(
        all(&wrong).contains(
            "error testing repository connectivity: unable to ls-remote HEAD on repository"
        ),
        "{}",
        all(&wrong)
    );
    let mut ok = |args: &[&str], stdin: &str| -> String {
        let out = run(args, stdin);
        printed.push_str(&all(&out));
        assert!(out.status.success(), "{args:?}: {}", all(&out));
        text(&out.stdout)
    };
    let out = ok(
        &[
            "repo",
            "add",
            url,
            "--username",
            "bot",
            "--password",
            PASSWORD,
        ],
        "",
    );
    assert_eq!(out, format!("Repository '{url}' added\n"));
    // The password from stdin when --username has none.
    let out = ok(
        &["repo", "add", url2, "--username", "bot"],
        &format!("{PASSWORD}\n"),
    );
    assert_eq!(out, format!("Repository '{url2}' added\n"));
    let list = ok(&["repo", "list"], "");
    let header = "TYPE  NAME  REPO";
    assert!(list.starts_with(header), "{list}");
    assert!(list.contains("STATUS      MESSAGE  PROJECT"), "{list}");
    let row = list.lines().find(|l| l.contains(url)).unwrap_or_default();
    assert!(
        row.contains("false     false  false  true   Successful"),
        "{list}"
    );
    let got: serde_json::Value =
        serde_json::from_str(&ok(&["repo", "get", url, "-o", "json"], "")).unwrap();
    assert_eq!(got["repo"], url);
    assert_eq!(got["connectionState"]["status"], "Successful");
    assert_eq!(ok(&["repo", "list", "-o", "url"], "").lines().count(), 2);

    let out = ok(
        &[
            "repocreds",
            "add",
            "git@git.example.com:team",
            "--ssh-private-key-path",
            &files.path("id_key"),
        ],
        "",
    );
    assert_eq!(
        out,
        "Repository credentials for 'git@git.example.com:team' added\n"
    );
    let creds = ok(&["repocreds", "list"], "");
    assert_eq!(
        creds,
        "URL PATTERN               USERNAME  SSH_CREDS  TLS_CREDS\ngit@git.example.com:team            false      false\n"
    );
    ok(&["repocreds", "list", "-o", "json"], "");

    let out = ok(
        &[
            "cert",
            "add-ssh",
            "--batch",
            "--from",
            &files.path("known_hosts"),
        ],
        "",
    );
    assert!(
        out.ends_with("Successfully created 1 SSH known host entries\n"),
        "{out}"
    );
    let out = ok(
        &[
            "cert",
            "add-tls",
            "git.example.com",
            "--from",
            &files.path("ca.pem"),
        ],
        "",
    );
    assert!(
        out.ends_with("Created/updated TLS certificate entry for repository server git.example.com with 1 unique PEM certificates\n"),
        "{out}"
    );
    let certs = ok(&["cert", "list", "--sort", "hostname"], "");
    assert!(
        certs.starts_with("HOSTNAME         TYPE   SUBTYPE      INFO\n"),
        "{certs}"
    );
    assert!(certs.contains("git.example.com  https"), "{certs}");
    assert!(certs.contains("github.com       ssh    ssh-ed25519  SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU"), "{certs}");
    let out = ok(&["cert", "rm", "github.com", "--cert-type", "ssh"], "");
    assert_eq!(
        out,
        "Removed cert for 'github.com' of type 'ssh' (subtype 'ssh-ed25519')\n"
    );

    let out = ok(&["repocreds", "rm", "git@git.example.com:team"], "");
    assert_eq!(
        out,
        "Repository credentials for 'git@git.example.com:team' removed\n"
    );
    let out = ok(&["repo", "rm", url, url2], "");
    assert_eq!(
        out,
        format!("Repository '{url}' removed\nRepository '{url2}' removed\n")
    );
    assert_eq!(ok(&["repo", "list", "-o", "url"], ""), "");
    printed
}

fn assert_no_credential(what: &str, text: &str) {
    for secret in [PASSWORD, KEY_BODY, "secret-key-material-27-ssh"] {
        assert!(!text.contains(secret), "{what} carries {secret:?}:\n{text}");
    }
}

#[test]
fn repo_repocreds_and_cert_in_core_mode() {
    let ns = control_namespace("repo-cli-core");
    let home = tempfile::tempdir().unwrap();
    let (_r1, h1) = served("repo-cli-core-a");
    let (_r2, h2) = served("repo-cli-core-b");
    let files = Files::new();
    let run = |args: &[&str], stdin: &str| core(home.path(), ns.name(), args, stdin);
    let printed = every_verb(&run, &h1.url(), &h2.url(), &files);
    assert_no_credential("the CLI's output", &printed);
}

fn start_server(ns: &str, cache: &Path) -> (Killed, SocketAddr, LogTail) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args([
            "server",
            "--listen",
            "127.0.0.1:0",
            "-n",
            ns,
            "--metrics-addr",
            "off",
        ])
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .arg("--cache-dir")
        .arg(cache)
        .env("PLUMB_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (addr, log) = listening_addr(&mut child);
    (Killed(child), addr, log)
}

#[test]
fn repo_repocreds_and_cert_through_the_server_leak_no_credential() {
    let ns = control_namespace("repo-cli-server");
    let cache = tempfile::tempdir().unwrap();
    let (_server, addr, log) = start_server(ns.name(), cache.path());
    let home = tempfile::tempdir().unwrap();
    let password = initial_admin_password(env(), ns.name());
    let out = login_admin(home.path(), &addr.to_string(), &password);
    assert!(out.status.success(), "{}", all(&out));
    let (_r1, h1) = served("repo-cli-server-a");
    let (_r2, h2) = served("repo-cli-server-b");
    let files = Files::new();
    let run = |args: &[&str], stdin: &str| remote_with_stdin(home.path(), args, stdin);
    let printed = every_verb(&run, &h1.url(), &h2.url(), &files);
    assert_no_credential("the CLI's output", &printed);
    assert_no_credential("the server's log", &log.text());
    assert!(!log.text().is_empty());
}

/// [`remote`] with `stdin` fed.
fn remote_with_stdin(home: &Path, args: &[&str], stdin: &str) -> Output {
    if stdin.is_empty() {
        return remote(home, args);
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", home.join("empty-bin"))
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `repo add --type oci` and `repo add --type helm --enable-oci` check the registry (a real
/// distribution registry with Basic authentication, its CA added with `cert add-tls`) before
/// storing, as argocd does.
#[test]
fn oci_repositories_are_checked_by_repo_add() {
    use plumb_testenv::oci_registry::{OciRegistry, Options};
    let ns = control_namespace("repo-cli-oci");
    let home = tempfile::tempdir().unwrap();
    let reg = OciRegistry::start(Options {
        auth: Some(("bot", PASSWORD)),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, reg.ca_pem()).unwrap();
    let run = |args: &[&str]| core(home.path(), ns.name(), args, "");
    let mut printed = String::new();
    let url = reg.url("charts");

    let out = run(&[
        "cert",
        "add-tls",
        "127.0.0.1",
        "--from",
        &ca.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", all(&out));
    let out = run(&[
        "repo",
        "add",
        &url,
        "--type",
        "oci",
        "--username",
        "bot",
        "--password",
        "wrong-Pw-27",
    ]);
    printed.push_str(&all(&out));
    assert!(!out.status.success(), "{}", all(&out));
    assert!(
        all(&out).contains("error testing repository connectivity"),
        "{}",
        all(&out)
    );
    let out = run(&[
        "repo",
        "add",
        &url,
        "--type",
        "oci",
        "--username",
        "bot",
        "--password",
        PASSWORD,
    ]);
    printed.push_str(&all(&out));
    assert!(out.status.success(), "{}", all(&out));
    assert_eq!(text(&out.stdout), format!("Repository '{url}' added\n"));
    let host = reg.host();
    let out = run(&[
        "repo",
        "add",
        &host,
        "--type",
        "helm",
        "--name",
        "oci-charts",
        "--enable-oci",
        "--username",
        "bot",
        "--password",
        PASSWORD,
    ]);
    printed.push_str(&all(&out));
    assert!(out.status.success(), "{}", all(&out));
    let out = run(&["repo", "list", "-o", "json"]);
    printed.push_str(&all(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let states: Vec<(String, String)> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["repo"].as_str().unwrap_or_default().to_owned(),
                r["connectionState"]["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            (host, "Successful".to_owned()),
            (url, "Successful".to_owned())
        ],
        "{list}"
    );
    assert_no_credential("the CLI's output", &printed);
    assert!(!printed.contains("wrong-Pw-27"), "{printed}");
}
