//! A real Gitea on loopback for the scmProvider and pullRequest generator tests, built by
//! `scripts/gitea build` (from the Go module proxy) and started per test process by
//! `scripts/gitea up` (sqlite, no mailer, no SSH, pages of at most [`TEST_PAGE_SIZE`] items so
//! that listings page), or the one named by `PLUMB_TEST_GITEA_URL` and `PLUMB_TEST_GITEA_TOKEN`
//! (an admin's token). There is no fake: a test that needs Gitea and cannot get one fails.
//!
//! Fixtures go through Gitea's API (organisations, repositories, labels, pull requests,
//! archiving) and real `git push` over HTTP (files and branches).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::cluster::repo_root;

/// `[api] MAX_RESPONSE_ITEMS` of the Gitea this module starts.
pub const TEST_PAGE_SIZE: usize = 3;

/// A running Gitea (the process's own one stops when the process exits).
#[derive(Debug)]
pub struct Gitea {
    url: String,
    token: String,
    user: String,
    _state: Option<tempfile::TempDir>,
}

static SHARED: OnceLock<Gitea> = OnceLock::new();

impl Gitea {
    /// The Gitea of this test process, started on first use.
    ///
    /// # Panics
    /// When no Gitea can be had (not built: run `scripts/gitea build`).
    pub fn shared() -> &'static Gitea {
        SHARED.get_or_init(|| Self::start().unwrap_or_else(|e| panic!("no test Gitea: {e}")))
    }

    /// `PLUMB_TEST_GITEA_URL`/`PLUMB_TEST_GITEA_TOKEN` when set, else a Gitea of its own started
    /// with `scripts/gitea up` (stopped when this process exits).
    pub fn start() -> Result<Self, String> {
        if let (Ok(url), Ok(token)) = (
            std::env::var("PLUMB_TEST_GITEA_URL"),
            std::env::var("PLUMB_TEST_GITEA_TOKEN"),
        ) {
            let mut g = Self {
                url: url.trim_end_matches('/').to_owned(),
                token,
                user: String::new(),
                _state: None,
            };
            g.user = g.get("/user")?["login"]
                .as_str()
                .ok_or("GET /user: no login")?
                .to_owned();
            return Ok(g);
        }
        let state = tempfile::Builder::new()
            .prefix("plumb-gitea-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let dir = state.path().join("gitea");
        let out = Command::new(repo_root().join("scripts/gitea"))
            .arg("up")
            .arg("--state")
            .arg(&dir)
            .arg("--owner-pid")
            .arg(std::process::id().to_string())
            .arg("--page-size")
            .arg(TEST_PAGE_SIZE.to_string())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("scripts/gitea up: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "scripts/gitea up failed (run scripts/gitea build first): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let env = std::fs::read_to_string(dir.join("env")).map_err(|e| e.to_string())?;
        let var = |k: &str| {
            env.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .map(str::to_owned)
                .ok_or_else(|| format!("{k} missing from {}", dir.join("env").display()))
        };
        Ok(Self {
            url: var("GITEA_URL")?,
            token: var("GITEA_TOKEN")?,
            user: var("GITEA_USER")?,
            _state: Some(state),
        })
    }

    /// The base URL, e.g. `http://127.0.0.1:3456` (what a generator's `api` names).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// An admin's API token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The admin's user name.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// A name unique to this process and call, for organisations of one test.
    pub fn unique(prefix: &str) -> String {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        format!(
            "{prefix}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// One API call. reqwest's blocking client runs on a thread of its own, so that fixtures
    /// work from async tests too (its runtime may not be dropped inside another).
    fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let url = format!("{}/api/v1{path}", self.url);
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let http = Client::builder()
                        .timeout(std::time::Duration::from_secs(60))
                        .build()
                        .map_err(|e| e.to_string())?;
                    let mut req = http
                        .request(method.clone(), &url)
                        .header("Authorization", format!("token {}", self.token));
                    if let Some(body) = body {
                        req = req
                            .header("Content-Type", "application/json")
                            .body(body.to_string());
                    }
                    let resp = req.send().map_err(|e| format!("{method} {url}: {e}"))?;
                    let status = resp.status();
                    let text = resp.text().map_err(|e| format!("{method} {url}: {e}"))?;
                    if !status.is_success() {
                        return Err(format!("{method} {url}: HTTP {status}: {text}"));
                    }
                    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
                })
                .join()
                .unwrap_or_else(|_| Err(format!("{method} {url}: the request thread panicked")))
        })
    }

    fn get(&self, path: &str) -> Result<Value, String> {
        self.call(reqwest::Method::GET, path, None)
    }

    fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Creates organisation `org`.
    pub fn create_org(&self, org: &str) {
        self.post("/orgs", json!({"username": org, "visibility": "public"}));
    }

    /// Creates `org/repo` with default branch `main` holding `files` (path, content), pushed with
    /// git over HTTP. Returns the repository's id.
    pub fn create_repo(&self, org: &str, repo: &str, files: &[(&str, &str)]) -> i64 {
        let created = self.post(
            &format!("/orgs/{org}/repos"),
            json!({"name": repo, "default_branch": "main", "auto_init": false}),
        );
        self.push_branch(org, repo, "main", None, files);
        created["id"].as_i64().expect("repository id")
    }

    /// Pushes branch `branch` of `org/repo`: a commit on top of `from` (or a first commit) that
    /// adds `files`. Returns the new commit's SHA.
    pub fn push_branch(
        &self,
        org: &str,
        repo: &str,
        branch: &str,
        from: Option<&str>,
        files: &[(&str, &str)],
    ) -> String {
        let work = tempfile::tempdir().expect("temporary directory");
        let dir = work.path();
        let remote = self.git_url(org, repo);
        match from {
            Some(base) => git(dir, &["clone", "-q", "--branch", base, &remote, "."]),
            None => git(dir, &["init", "-q", "-b", branch]),
        };
        if from.is_some_and(|base| base != branch) {
            git(dir, &["checkout", "-q", "-b", branch]);
        }
        for (path, content) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(&file, content).expect("write fixture file");
        }
        git(dir, &["add", "-A"]);
        git(
            dir,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("{branch}: fixture"),
            ],
        );
        git(
            dir,
            &["push", "-q", &remote, &format!("HEAD:refs/heads/{branch}")],
        );
        let sha = git(dir, &["rev-parse", "HEAD"]).trim().to_owned();
        self.wait_for_branch(org, repo, branch, &sha);
        sha
    }

    /// Gitea records a push (the repository no longer empty, the branch and its commit) after
    /// answering it; its API shows the branch only then.
    fn wait_for_branch(&self, org: &str, repo: &str, branch: &str, sha: &str) {
        let path = format!("/repos/{org}/{repo}/branches/{branch}");
        for _ in 0..300 {
            let empty = self
                .get(&format!("/repos/{org}/{repo}"))
                .map(|r| r["empty"] == true);
            if let (Ok(false), Ok(b)) = (empty, self.get(&path))
                && b["commit"]["id"] == sha
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("Gitea did not show {org}/{repo} branch {branch} at {sha} within 30 s");
    }

    fn git_url(&self, org: &str, repo: &str) -> String {
        let host = self.url.trim_start_matches("http://");
        format!(
            "http://{}:{}@{host}/{org}/{repo}.git",
            self.user, self.token
        )
    }

    /// Creates label `name` in `org/repo`; returns its id.
    pub fn create_label(&self, org: &str, repo: &str, name: &str) -> i64 {
        self.post(
            &format!("/repos/{org}/{repo}/labels"),
            json!({"name": name, "color": "#00aabb"}),
        )["id"]
            .as_i64()
            .expect("label id")
    }

    /// Opens a pull request of `head` into `base`, with labels (ids); returns its number.
    pub fn create_pull(
        &self,
        org: &str,
        repo: &str,
        head: &str,
        base: &str,
        title: &str,
        labels: &[i64],
    ) -> i64 {
        self.post(
            &format!("/repos/{org}/{repo}/pulls"),
            json!({"head": head, "base": base, "title": title, "labels": labels}),
        )["number"]
            .as_i64()
            .expect("pull request number")
    }

    /// Closes pull request `number`.
    pub fn close_pull(&self, org: &str, repo: &str, number: i64) {
        self.call(
            reqwest::Method::PATCH,
            &format!("/repos/{org}/{repo}/pulls/{number}"),
            Some(json!({"state": "closed"})),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Archives `org/repo`.
    pub fn archive_repo(&self, org: &str, repo: &str) {
        self.call(
            reqwest::Method::PATCH,
            &format!("/repos/{org}/{repo}"),
            Some(json!({"archived": true})),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=plumb-test",
            "-c",
            "user.email=test@plumb.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("git {}: {e}", args.join(" ")));
    assert!(
        out.status.success(),
        "git {} failed: {}",
        args.first().copied().unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where `scripts/gitea build` puts the binary (for tests that want to say so).
pub fn bin_dir() -> Option<PathBuf> {
    let out = Command::new(repo_root().join("scripts/gitea"))
        .arg("bin-dir")
        .output()
        .ok()?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !dir.is_empty()).then(|| PathBuf::from(dir))
}
