//! A Git LFS server for tests: git-lfs's reference server (`lfs-test-server`, built by
//! `scripts/testenv build` from `tools/lfs-test-server`) on 127.0.0.1 at a free port, public or
//! with one Basic user; and [`commit_lfs`], which commits files through the real `git lfs`
//! client (Debian's `git-lfs`; `scripts/test` installs it) and pushes their objects there.
//!
//! ```no_run
//! use plumb_testenv::git::GitRepo;
//! use plumb_testenv::git_lfs::{LfsServer, commit_lfs};
//! let lfs = LfsServer::start(None);
//! let repo = GitRepo::named("app");
//! commit_lfs(&repo, &lfs, &[("deploy/cm.yaml", b"kind: ConfigMap\n".as_slice())], "first");
//! ```

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::git::GitRepo;

/// The running server; stopped when dropped.
pub struct LfsServer {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    auth: Option<(&'static str, &'static str)>,
}

impl std::fmt::Debug for LfsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LfsServer")
            .field("port", &self.port)
            .finish()
    }
}

const ADMIN: (&str, &str) = ("lfs-admin", "lfs-admin-pw");

impl LfsServer {
    /// Starts the server: public without `auth`, else accepting only that user.
    pub fn start(auth: Option<(&'static str, &'static str)>) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("lfs.log")).expect("log file");
        let child = Command::new(crate::tools::lfs_test_server())
            .current_dir(dir.path())
            .env_clear()
            .env("LFS_LISTEN", format!("tcp://127.0.0.1:{port}"))
            .env("LFS_HOST", format!("127.0.0.1:{port}"))
            .env("LFS_METADB", dir.path().join("lfs.db"))
            .env("LFS_CONTENTPATH", dir.path().join("content"))
            .env("LFS_ADMINUSER", ADMIN.0)
            .env("LFS_ADMINPASS", ADMIN.1)
            .env("LFS_PUBLIC", if auth.is_some() { "false" } else { "true" })
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .expect("starting lfs-test-server");
        let mut server = Self {
            child,
            dir,
            port,
            auth,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline || matches!(server.child.try_wait(), Ok(Some(_))) {
                panic!("lfs-test-server did not start; its log:\n{}", server.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some((user, password)) = auth {
            server.add_user(user, password);
        }
        server
    }

    /// `http://127.0.0.1:PORT/<owner>/<repo>`, as `lfs.url`.
    pub fn url(&self, repo: &str) -> String {
        format!("http://127.0.0.1:{}/plumb/{repo}", self.port)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("lfs.log")).unwrap_or_default()
    }

    fn add_user(&mut self, user: &str, password: &str) {
        let out = Command::new("curl")
            .args(["-sS", "-f", "-u", &format!("{}:{}", ADMIN.0, ADMIN.1)])
            .args(["--data-urlencode", &format!("name={user}")])
            .args(["--data-urlencode", &format!("password={password}")])
            .arg(format!("http://127.0.0.1:{}/mgmt/add", self.port))
            .output()
            .expect("running curl");
        assert!(
            out.status.success(),
            "adding the LFS user failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
    }
}

impl Drop for LfsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Commits `files` into `repo` as Git LFS objects (tracked by `.gitattributes`, the endpoint
/// in `.lfsconfig`) with the real `git lfs`, and pushes the objects to `lfs`. Returns the
/// commit.
pub fn commit_lfs(
    repo: &GitRepo,
    lfs: &LfsServer,
    files: &[(&str, &[u8])],
    message: &str,
) -> String {
    let name = repo
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let url = lfs.url(&name);
    git_lfs(repo.path(), None, &["install", "--local"]);
    let mut attributes = String::new();
    for (rel, contents) in files {
        let p = repo.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("creating fixture directories");
        }
        std::fs::write(&p, contents).expect("writing an LFS file");
        attributes.push_str(&format!("{rel} filter=lfs diff=lfs merge=lfs -text\n"));
    }
    std::fs::write(repo.path().join(".gitattributes"), attributes).expect(".gitattributes");
    std::fs::write(
        repo.path().join(".lfsconfig"),
        format!("[lfs]\n\turl = {url}\n"),
    )
    .expect(".lfsconfig");
    let commit = repo.commit_all(message);
    git_lfs(repo.path(), lfs.auth, &["push", "--all", &url]);
    commit
}

/// Runs `git lfs ARGS` in `dir`, with the server's user (if any) given by a credential helper.
fn git_lfs(dir: &Path, auth: Option<(&str, &str)>, args: &[&str]) {
    let mut cmd = Command::new("git");
    if let Some((user, password)) = auth {
        cmd.arg("-c").arg(format!(
            "credential.helper=!f() {{ echo username={user}; echo password={password}; }}; f"
        ));
    }
    let out = cmd
        .arg("lfs")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir.parent().unwrap_or(dir))
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .expect("running git lfs (Debian: apt-get install git-lfs)");
    assert!(
        out.status.success(),
        "git lfs {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}
