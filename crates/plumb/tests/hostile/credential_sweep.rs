//! The credential sweep (issue #27, "Bad input"): known credentials are planted in every place
//! Plumb keeps them (a repository password and a wrong one, a bearer token, a proxy password,
//! an SSH private key, a TLS client key, a GitHub App private key and the installation token
//! it buys, a cluster bearer token, an exec plugin's token and its garbage, a project role
//! token, the admin password) and driven through every path that handles them: `plumb repo`,
//! `repocreds`, `cert`, `cluster` and `proj` in core mode and through a real `plumb server`,
//! the server's API answers, a real `plumb controller` at trace level rendering and syncing
//! Applications whose connections and renders fail, its Events and the Applications' status.
//! Then every captured output is searched for each credential, raw and base64, and the test
//! fails naming where each one appeared. The only output allowed to hold one is the token
//! `proj role create-token` prints for its caller.

use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use plumb_testenv::git::GitRepo;
use plumb_testenv::git_http::{GitHttpServer, Options};
use plumb_testenv::github_api::{GithubApi, Mode};
use plumb_testenv::process::{LogTail, initial_admin_password, listening_addr};
use serde_json::{Value, json};

use crate::running::{Running, env, kubectl, kubectl_apply, text};
use crate::secrets::{b64, distinctive, forms};
use crate::server::{raw, status};

/// Every output captured: where it came from, and its text.
#[derive(Default)]
struct Seen(Vec<(String, String)>);

impl Seen {
    fn add(&mut self, what: impl Into<String>, text: String) {
        self.0.push((what.into(), text));
    }

    fn output(&mut self, what: impl Into<String>, out: &Output) {
        self.add(what, format!("{}{}", text(&out.stdout), text(&out.stderr)));
    }

    /// Each place a planted value shows, with the text around it.
    fn leaks(&self, planted: &[(&str, String)]) -> Vec<String> {
        let mut found = Vec::new();
        for (what, output) in &self.0 {
            for (name, value) in planted {
                for form in forms(value) {
                    if let Some(at) = output.find(&form) {
                        found.push(format!(
                            "{what} shows the {name} ({form}):\n…{}…",
                            around(output, at, form.len())
                        ));
                    }
                }
            }
        }
        found
    }
}

fn around(text: &str, at: usize, len: usize) -> String {
    let start = (0..=at.saturating_sub(200))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let end = ((at + len + 200).min(text.len())..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text[start..end].to_string()
}

/// A `plumb server` with authentication over the controller's namespace, plain HTTP, logging
/// everything at trace level; killed when dropped.
struct SweepServer {
    child: Child,
    addr: SocketAddr,
    log: LogTail,
    _cache: tempfile::TempDir,
}

impl Drop for SweepServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SweepServer {
    fn start(ns: &str) -> Self {
        let cache = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["server", "--insecure", "--listen", "127.0.0.1:0", "-n", ns])
            .args(["--metrics-addr", "off"])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(cache.path())
            .env("PLUMB_LOG", "trace")
            .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
            .env("PLUMB_HELM", plumb_testenv::tools::helm())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (addr, log) = listening_addr(&mut child);
        Self {
            child,
            addr,
            log,
            _cache: cache,
        }
    }

    /// `METHOD path` with `token`; the whole answer (status line, headers, body).
    fn call(&self, method: &str, path: &str, token: &str, body: &str) -> String {
        let auth = if token.is_empty() {
            String::new()
        } else {
            format!("Authorization: Bearer {token}\r\n")
        };
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        raw(self.addr, request.as_bytes())
    }
}

/// How the CLI is run: core mode over the kubeconfig, or logged in to the server.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode2 {
    Core,
    Server,
}

/// The CLI of one user: a HOME of its own (logged in to the server there), trace logging on.
struct Cli {
    home: tempfile::TempDir,
    ns: String,
}

impl Cli {
    fn run(&self, mode: Mode2, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_plumb"));
        cmd.args(args)
            .env_clear()
            .env("HOME", self.home.path())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TZ", "UTC")
            .env("PLUMB_LOG", "trace")
            .stdin(Stdio::null());
        if mode == Mode2::Core {
            cmd.arg("--core")
                .arg("--kubeconfig")
                .arg(env().kubeconfig())
                .args(["-N", &self.ns]);
        }
        cmd.output().unwrap()
    }
}

/// A file in `dir` holding `body`.
fn file(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

/// An exec credential plugin script printing `body`.
fn plugin(dir: &Path, name: &str, body: &str) -> String {
    let path = file(dir, name, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The test API server's URL (`https://127.0.0.1:PORT`).
fn api_server() -> String {
    let out = kubectl(&["config", "view", "--minify", "-o", "json"]);
    let cfg: Value = serde_json::from_slice(&out.stdout).unwrap();
    cfg["clusters"][0]["cluster"]["server"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A PEM block of `tag` whose content is `body` (so its base64 lines are distinctive).
fn pem(tag: &str, body: &str) -> String {
    format!(
        "-----BEGIN {tag}-----\n{}\n-----END {tag}-----\n",
        b64(body)
    )
}

/// The credentials planted, each distinctive, and the servers that know them.
struct Plants {
    repo_password: String,
    wrong_password: String,
    bearer: String,
    proxy_password: String,
    ssh_key: String,
    ssh_raw: String,
    tls_keys: Vec<String>,
    app_key: String,
    app_token: String,
    cluster_token: String,
    exec_token: String,
    exec_garbage: String,
    dir: tempfile::TempDir,
}

impl Plants {
    fn new() -> Self {
        let ssh_raw = distinctive("sshkeymaterial");
        Self {
            repo_password: distinctive("repopassword"),
            wrong_password: distinctive("wrongpassword"),
            bearer: distinctive("bearertoken"),
            proxy_password: distinctive("proxypassword"),
            ssh_key: pem("OPENSSH PRIVATE KEY", &ssh_raw),
            ssh_raw,
            tls_keys: Vec::new(),
            app_key: String::new(),
            app_token: distinctive("ghsinstalltoken"),
            cluster_token: distinctive("clustertoken"),
            exec_token: distinctive("exectoken"),
            exec_garbage: distinctive("execgarbage"),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// (name, value) of every credential, as the sweep looks for them: whole values, and for
    /// PEM keys each line of their body (what a partial print would show).
    fn all(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            ("repository password", self.repo_password.clone()),
            ("wrong repository password", self.wrong_password.clone()),
            ("repository bearer token", self.bearer.clone()),
            ("proxy password", self.proxy_password.clone()),
            ("SSH private key material", self.ssh_raw.clone()),
            ("GitHub App installation token", self.app_token.clone()),
            ("cluster bearer token", self.cluster_token.clone()),
            ("exec plugin token", self.exec_token.clone()),
            ("exec plugin output", self.exec_garbage.clone()),
        ];
        let keys = [
            ("SSH private key", &self.ssh_key),
            ("GitHub App private key", &self.app_key),
        ];
        let tls = self.tls_keys.iter().map(|k| ("TLS client key", k));
        for (name, key) in keys.into_iter().chain(tls) {
            v.extend(
                key.lines()
                    .filter(|l| !l.starts_with("-----") && l.len() >= 24)
                    .map(|l| (name, l.to_string())),
            );
        }
        v
    }
}

/// A repository Secret as an operator writes it.
fn repository_secret(ns: &str, name: &str, data: Value) {
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": ns,
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": data}));
}

/// A cluster Secret as an operator writes it.
fn cluster_secret(ns: &str, name: &str, server: &str, config: Value) {
    kubectl_apply(&json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": format!("cluster-{name}"), "namespace": ns,
                     "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": name, "server": server, "config": config.to_string()}}));
}

/// The Git servers of one CLI mode: Basic, bearer and TLS client certificate.
struct Served {
    _repos: Vec<GitRepo>,
    basic: GitHttpServer,
    bearer: GitHttpServer,
    tls: GitHttpServer,
}

fn served(tag: &str, p: &Plants) -> Served {
    let repo = |n: &str| {
        let r = GitRepo::named(&format!("sweep-{tag}-{n}"));
        r.commit(
            &[(
                "app/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: swept\n",
            )],
            "one",
        );
        r
    };
    let (a, b, c) = (repo("basic"), repo("bearer"), repo("tls"));
    let basic = GitHttpServer::serve(&a, Some(("bot", &p.repo_password)));
    let bearer = GitHttpServer::start(
        &b,
        Options {
            authorization: Some(format!("Bearer {}", p.bearer)),
            tls: true,
            ..Default::default()
        },
    );
    let tls = GitHttpServer::start(
        &c,
        Options {
            tls: true,
            client_certs: true,
            ..Default::default()
        },
    );
    Served {
        _repos: vec![a, b, c],
        basic,
        bearer,
        tls,
    }
}

/// `repo`, `repocreds` and `cert` verbs in one mode, every credential kind.
fn repository_verbs(cli: &Cli, mode: Mode2, s: &Served, p: &Plants, api: &str, seen: &mut Seen) {
    let tag = format!("{mode:?}").to_lowercase();
    let (cert, key) = s.tls.client_identity();
    let cert = file(p.dir.path(), &format!("{tag}-client.crt"), cert);
    let key = file(p.dir.path(), &format!("{tag}-client.key"), key);
    let ssh = file(p.dir.path(), &format!("{tag}-id"), &p.ssh_key);
    let app_key = file(p.dir.path(), &format!("{tag}-app.pem"), &p.app_key);
    let proxy = format!("http://proxyuser:{}@127.0.0.1:9", p.proxy_password);
    let basic = s.basic.url();
    let mut run = |args: &[&str], must: bool| {
        let out = cli.run(mode, args);
        assert!(
            !must || out.status.success(),
            "{mode:?} {args:?}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        seen.output(format!("plumb ({mode:?}) {}", args.join(" ")), &out);
    };
    run(
        &[
            "repo",
            "add",
            &basic,
            "--username",
            "bot",
            "--password",
            &p.wrong_password,
        ],
        false,
    );
    run(
        &[
            "repo",
            "add",
            &basic,
            "--username",
            "bot",
            "--password",
            &p.repo_password,
            "--proxy",
            &proxy,
        ],
        false,
    );
    run(
        &[
            "repo",
            "add",
            &basic,
            "--username",
            "bot",
            "--password",
            &p.repo_password,
        ],
        true,
    );
    run(
        &[
            "repo",
            "add",
            &s.bearer.url(),
            "--bearer-token",
            &p.bearer,
            "--insecure-skip-server-verification",
        ],
        true,
    );
    run(
        &[
            "repo",
            "add",
            &s.tls.url(),
            "--tls-client-cert-path",
            &cert,
            "--tls-client-cert-key-path",
            &key,
            "--insecure-skip-server-verification",
        ],
        true,
    );
    for args in [
        &["repo", "list"][..],
        &["repo", "list", "-o", "json"],
        &["repo", "get", &basic, "-o", "json"],
        &["repo", "get", &s.tls.url(), "-o", "yaml"],
        &["repo", "get", &s.bearer.url(), "-o", "json"],
    ] {
        run(args, true);
    }
    let host = format!("git.{tag}.example");
    let ssh_url = format!("git@{host}:team");
    let app_url = format!("https://{host}/apps");
    let tls_url = format!("https://{host}/tls");
    run(
        &["repocreds", "add", &ssh_url, "--ssh-private-key-path", &ssh],
        true,
    );
    run(
        &[
            "repocreds",
            "add",
            &app_url,
            "--github-app-id",
            "7",
            "--github-app-installation-id",
            "8",
            "--github-app-private-key-path",
            &app_key,
            "--github-app-enterprise-base-url",
            api,
        ],
        true,
    );
    run(
        &[
            "repocreds",
            "add",
            &tls_url,
            "--tls-client-cert-path",
            &cert,
            "--tls-client-cert-key-path",
            &key,
        ],
        true,
    );
    run(&["repocreds", "list"], true);
    run(&["repocreds", "list", "-o", "json"], true);
    // Adding the same template again with another key is refused, naming what differs.
    run(
        &["repocreds", "add", &ssh_url, "--ssh-private-key-path", &key],
        false,
    );
}

/// Cluster Secrets whose connections fail after the credential is sent: a bearer token the API
/// server refuses, an exec plugin printing a token it refuses, one printing garbage.
fn clusters(ns: &str, p: &Plants) -> Vec<(&'static str, String)> {
    let api = api_server();
    let exec = |script: &str| {
        json!({"execProviderConfig": {"command": script, "apiVersion": "client.authentication.k8s.io/v1"},
               "tlsClientConfig": {"insecure": true}})
    };
    let good = plugin(
        p.dir.path(),
        "token.sh",
        &format!(
            "echo '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"{}\"}}}}'",
            p.exec_token
        ),
    );
    let garbage = plugin(
        p.dir.path(),
        "garbage.sh",
        &format!("echo 'token: {} {{{{'", p.exec_garbage),
    );
    let failing = plugin(
        p.dir.path(),
        "failing.sh",
        &format!(
            "echo '{}'; echo '{}' >&2; exit 3",
            p.exec_garbage, p.exec_token
        ),
    );
    let list = [
        (
            "sweep-bearer",
            api.replace("127.0.0.1", "localhost"),
            json!({"bearerToken": p.cluster_token, "tlsClientConfig": {"insecure": true}}),
        ),
        ("sweep-exec", format!("{api}/exec-token"), exec(&good)),
        (
            "sweep-garbage",
            format!("{api}/exec-garbage"),
            exec(&garbage),
        ),
        (
            "sweep-failing",
            format!("{api}/exec-failing"),
            exec(&failing),
        ),
        (
            "sweep-proxy",
            format!("{api}/proxy"),
            json!({"bearerToken": p.cluster_token, "proxyUrl": format!("http://u:{}@127.0.0.1:9", p.proxy_password),
                "tlsClientConfig": {"insecure": true}}),
        ),
    ];
    list.into_iter()
        .map(|(name, server, config)| {
            cluster_secret(ns, name, &server, config);
            (name, server)
        })
        .collect()
}

/// Applications whose connection or render fails with each credential in play.
fn applications(
    ctl: &Running,
    s: &Served,
    p: &Plants,
    gh: &GithubApi,
    clusters: &[(&str, String)],
) -> Vec<String> {
    let ns = ctl.ns.name();
    let dest = |name: &str| json!({"name": name, "namespace": "sweep-target"});
    let in_cluster = json!({"server": "https://kubernetes.default.svc", "namespace": ns});
    // A repository the controller reaches with a wrong password, one by SSH with the planted
    // key (nothing listens), one through the GitHub App whose token the Git server refuses.
    let wrong = GitRepo::named("sweep-wrong");
    wrong.commit(&[("app/cm.yaml", "kind: ConfigMap\n")], "one");
    let wrong_http = GitHttpServer::serve(&wrong, Some(("bot", "the-right-one")));
    repository_secret(
        ns,
        "sweep-wrong",
        json!({"url": wrong_http.url(), "username": "bot", "password": p.wrong_password}),
    );
    let ssh_url = "ssh://git@127.0.0.1:9/sweep.git";
    repository_secret(
        ns,
        "sweep-ssh",
        json!({"url": ssh_url, "sshPrivateKey": p.ssh_key, "insecure": "true"}),
    );
    let app_http = GitHttpServer::serve(&wrong, Some(("x-access-token", "not-the-token")));
    repository_secret(
        ns,
        "sweep-app",
        json!({"url": app_http.url(), "githubAppID": "7",
        "githubAppInstallationID": "8", "githubAppPrivateKey": p.app_key,
        "githubAppEnterpriseBaseUrl": gh.base_url()}),
    );
    let mut apps = vec![
        ("a-basic", s.basic.url(), "missing", in_cluster.clone()),
        ("a-bearer", s.bearer.url(), "missing", in_cluster.clone()),
        ("a-tls", s.tls.url(), "missing", in_cluster.clone()),
        ("a-wrong", wrong_http.url(), "app", in_cluster.clone()),
        ("a-ssh", ssh_url.to_string(), "app", in_cluster.clone()),
        ("a-github", app_http.url(), "app", in_cluster.clone()),
    ];
    for (name, _) in clusters {
        apps.push((name, s.basic.url(), "app", dest(name)));
    }
    let names: Vec<String> = apps
        .into_iter()
        .map(|(name, url, path, destination)| {
            ctl.create_app(
                name,
                json!({"project": "default",
                "source": {"repoURL": url, "path": path}, "destination": destination}),
            );
            name.to_string()
        })
        .collect();
    for name in &names {
        ctl.wait_app(name, "a failure reported", |a| {
            a["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"].as_str().is_some_and(|t| t.ends_with("Error")))
            })
        });
    }
    // Keep the servers up until every Application reported (they are dropped here).
    drop((wrong_http, app_http));
    names
}

/// A project role and its token, created through the server and used; the project has a
/// repository scoped to it, whose password its detailed view must not carry (GHSA-786q-9hcg-v9ff).
fn project_token(
    cli: &Cli,
    server: &SweepServer,
    ns: &str,
    password: &str,
    seen: &mut Seen,
) -> String {
    repository_secret(
        ns,
        "sweep-scoped",
        json!({"url": "https://git.scoped.example/team.git", "username": "bot",
               "password": password, "project": "sweep"}),
    );
    kubectl_apply(
        &json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "sweep", "namespace": ns},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                 "roles": [{"name": "ci", "policies": ["p, proj:sweep:ci, applications, get, sweep/*, allow"]}]}}),
    );
    let out = cli.run(
        Mode2::Server,
        &["proj", "role", "create-token", "sweep", "ci", "-t"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // What create-token prints for its caller is the one place the token belongs.
    seen.add("plumb proj role create-token (stderr)", text(&out.stderr));
    let token = text(&out.stdout).trim().to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    for (method, path, body, code) in [
        ("GET", "/api/v1/applications", "", 200),
        ("GET", "/api/v1/repositories", "", 200),
        ("GET", "/api/v1/clusters", "", 200),
        // Argo gives every role `projects, get` on its project, and its detailed view carried
        // the project's repository credentials (GHSA-786q-9hcg-v9ff); Plumb gives the same
        // right, and the view never carries a credential.
        ("GET", "/api/v1/projects/sweep/detailed", "", 200),
        (
            "GET",
            "/api/v1/repositories/https%3A%2F%2Fgit.scoped.example%2Fteam.git",
            "",
            403,
        ),
        ("POST", "/api/v1/projects/sweep/roles/ci/token", "{}", 403),
        ("DELETE", "/api/v1/repositories/no-such-repo", "", 403),
    ] {
        let answer = server.call(method, path, &token, body);
        assert_eq!(status(&answer), code, "{method} {path}: {answer}");
        seen.add(format!("{method} {path} as the role"), answer);
    }
    let tampered = format!("{token}x");
    seen.add(
        "a tampered role token's answer",
        server.call("GET", "/api/v1/applications", &tampered, ""),
    );
    for mode in [Mode2::Core, Mode2::Server] {
        for args in [
            &["proj", "get", "sweep", "-o", "json"][..],
            &["proj", "role", "get", "sweep", "ci"],
            &["proj", "role", "list-tokens", "sweep", "ci"],
            &["proj", "list", "-o", "yaml"],
        ] {
            seen.output(
                format!("plumb ({mode:?}) {}", args.join(" ")),
                &cli.run(mode, args),
            );
        }
    }
    token
}

/// The admin's session token from `POST /api/v1/session`.
fn session(server: &SweepServer, password: &str) -> String {
    let body = json!({"username": "admin", "password": password}).to_string();
    let answer = server.call("POST", "/api/v1/session", "", &body);
    assert_eq!(status(&answer), 200, "{answer}");
    let json = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: Value = serde_json::from_str(json.trim()).unwrap_or_else(|_| {
        // A chunked body: the JSON object inside it.
        let start = json.find('{').unwrap_or(0);
        let end = json.rfind('}').map_or(json.len(), |e| e + 1);
        serde_json::from_str(&json[start..end]).unwrap()
    });
    v["token"].as_str().unwrap().to_string()
}

#[test]
fn no_credential_reaches_any_output_of_the_cli_the_server_or_the_controller() {
    let ctl = Running::start("hostile-sweep", &[("RUST_LOG", "trace")]);
    let ns = ctl.ns.name().to_string();
    let server = SweepServer::start(&ns);
    let mut p = Plants::new();
    let gh = GithubApi::start(7, 8, &p.app_token, Mode::Documented);
    p.app_key = gh.private_key().to_string();
    let served_core = served("core", &p);
    let served_server = served("server", &p);
    for s in [&served_core, &served_server] {
        p.tls_keys.push(s.tls.client_identity().1.to_string());
    }
    let mut seen = Seen::default();
    let cli = Cli {
        home: tempfile::tempdir().unwrap(),
        ns: ns.clone(),
    };

    let password = initial_admin_password(env(), &ns);
    let addr = server.addr.to_string();
    let login = cli.run(
        Mode2::Server,
        &[
            "login",
            &addr,
            "--username",
            "admin",
            "--password",
            &password,
            "--plaintext",
        ],
    );
    assert!(login.status.success(), "{}", text(&login.stderr));
    seen.output("plumb login", &login);
    let admin = session(&server, &password);

    repository_verbs(
        &cli,
        Mode2::Core,
        &served_core,
        &p,
        &gh.base_url(),
        &mut seen,
    );
    repository_verbs(
        &cli,
        Mode2::Server,
        &served_server,
        &p,
        &gh.base_url(),
        &mut seen,
    );
    let clusters = clusters(&ns, &p);
    let apps = applications(&ctl, &served_core, &p, &gh, &clusters);
    let role_token = project_token(&cli, &server, &ns, &p.repo_password, &mut seen);

    for name in &apps {
        // A sync waits for a destination cluster that cannot be used: only the others end.
        if !name.starts_with("sweep-") {
            let synced = ctl.sync(name, json!({}));
            seen.add(
                format!("Application {name} after a sync"),
                synced.to_string(),
            );
        }
        for mode in [Mode2::Core, Mode2::Server] {
            for args in [
                &["app", "get", name.as_str()][..],
                &[
                    "app",
                    "get",
                    name.as_str(),
                    "-o",
                    "json",
                    "--show-operation",
                ],
            ] {
                seen.output(
                    format!("plumb ({mode:?}) {}", args.join(" ")),
                    &cli.run(mode, args),
                );
            }
        }
    }
    for (name, server_url) in &clusters {
        for mode in [Mode2::Core, Mode2::Server] {
            for args in [
                &["cluster", "get", name, "-o", "json"][..],
                &["cluster", "get", server_url, "-o", "yaml"],
            ] {
                seen.output(
                    format!("plumb ({mode:?}) {}", args.join(" ")),
                    &cli.run(mode, args),
                );
            }
        }
    }
    for mode in [Mode2::Core, Mode2::Server] {
        for args in [
            &["cluster", "list"][..],
            &["cluster", "list", "-o", "json"],
            &["cert", "list"],
            &["app", "list"],
        ] {
            seen.output(
                format!("plumb ({mode:?}) {}", args.join(" ")),
                &cli.run(mode, args),
            );
        }
    }
    for path in [
        "/api/v1/repositories",
        "/api/v1/repocreds",
        "/api/v1/clusters",
        "/api/v1/applications",
        "/api/v1/projects",
        "/api/v1/projects/sweep/detailed",
        "/api/v1/projects/default/detailed",
        "/api/v1/projects/sweep/events",
        "/api/v1/certificates",
        &format!(
            "/api/v1/repositories/{}",
            urlencode(&served_core.basic.url())
        ),
        &format!("/api/v1/clusters/{}", urlencode(&clusters[0].1)),
    ] {
        seen.add(format!("GET {path}"), server.call("GET", path, &admin, ""));
    }
    seen.add("Events", ctl.events());
    for name in &apps {
        seen.add(
            format!("Application {name}"),
            ctl.app(name).map(|a| a.to_string()).unwrap_or_default(),
        );
    }
    // The logs last, so they hold everything the steps above made each process do.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let log = ctl.log();
    assert!(
        log.contains("TRACE") && log.lines().count() > 100,
        "no trace log:\n{log}"
    );
    seen.add("the controller's log", log);
    seen.add("the server's log", server.log.text());

    let mut planted = p.all();
    planted.push(("admin password", password));
    planted.push(("admin session token", admin.clone()));
    planted.push(("project role token", role_token.clone()));
    planted.push((
        "project role token's signature",
        role_token
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string(),
    ));
    let leaks = seen.leaks(&planted);
    assert!(
        leaks.is_empty(),
        "credentials leaked:\n\n{}",
        leaks.join("\n\n")
    );
    // The sweep saw the places it names (a test that cannot fail is a defect).
    assert!(gh.issued() > 0, "the GitHub App key was never used");
    assert!(
        served_core.basic.rejected() > 0 && served_server.basic.rejected() > 0,
        "the wrong password never reached the Git server"
    );
    let all: String = seen.0.iter().map(|(_, t)| t.as_str()).collect();
    for expected in [
        "Successful",
        "ComparisonError",
        "returned an invalid ExecCredential",
        "failed with exit status: 3",
        "401",
        "invalid session",
    ] {
        assert!(all.contains(expected), "no output mentions {expected}");
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The search itself finds a planted value in each form it can take.
#[test]
fn the_sweep_finds_a_value_raw_in_base64_and_inside_a_longer_base64_text() {
    let value = distinctive("probe");
    let planted = [("probe", value.clone())];
    for shown in [
        format!("log line {value} end"),
        b64(&value),
        b64(&format!("prefix {value} suffix")),
        b64(&format!("p {value}")),
        b64(&format!("pp {value} s")),
    ] {
        let mut seen = Seen::default();
        seen.add("a place", shown.clone());
        assert!(!seen.leaks(&planted).is_empty(), "not found in {shown}");
    }
    let mut seen = Seen::default();
    seen.add("clean", "nothing here".into());
    assert!(seen.leaks(&planted).is_empty());
}
