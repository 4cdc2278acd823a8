//! Real Git repositories for tests, made with the `git` binary in a temporary directory.
//!
//! ```no_run
//! let repo = plumb_testenv::git::GitRepo::new();
//! let first = repo.commit(&[("apps/cm.yaml", "apiVersion: v1\nkind: ConfigMap\n")], "first");
//! repo.tag("v1");
//! repo.annotated_tag("v1.0.0", "release");
//! repo.branch("feature");
//! assert_eq!(repo.head(), first);
//! let url = repo.url(); // file:///tmp/.../repo
//! # let _ = url;
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

/// A non-bare repository with `main` checked out, deleted when dropped.
#[derive(Debug)]
pub struct GitRepo {
    _tmp: tempfile::TempDir,
    path: PathBuf,
}

impl Default for GitRepo {
    fn default() -> Self {
        Self::new()
    }
}

impl GitRepo {
    /// An empty repository named `repo` on branch `main`.
    pub fn new() -> Self {
        Self::named("repo")
    }

    /// An empty repository whose directory is called `name` (the last URL segment over HTTP).
    pub fn named(name: &str) -> Self {
        let tmp = tempfile::tempdir().expect("creating a temporary directory");
        let path = tmp.path().join(name);
        std::fs::create_dir_all(&path).expect("creating the repository directory");
        let repo = Self { _tmp: tmp, path };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "user.name", "Plumb Test"]);
        repo.git(&["config", "user.email", "test@plumb.invalid"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.git(&["config", "tag.gpgsign", "false"]);
        repo
    }

    /// The working directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `file://` URL of the repository.
    pub fn url(&self) -> String {
        format!("file://{}", self.path.display())
    }

    /// Writes `files` (path relative to the repository, contents), stages everything and commits;
    /// returns the new commit SHA.
    pub fn commit<C: AsRef<[u8]>>(&self, files: &[(&str, C)], message: &str) -> String {
        for (rel, contents) in files {
            let p = self.path.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).expect("creating fixture directories");
            }
            std::fs::write(&p, contents.as_ref()).expect("writing a fixture file");
        }
        self.commit_all(message)
    }

    /// Creates a symbolic link `link` → `target` (target written as given) and commits it.
    pub fn commit_symlink(&self, link: &str, target: &str, message: &str) -> String {
        let p = self.path.join(link);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("creating fixture directories");
        }
        std::os::unix::fs::symlink(target, &p).expect("creating a symlink");
        self.commit_all(message)
    }

    /// Removes `paths` and commits.
    pub fn remove(&self, paths: &[&str], message: &str) -> String {
        let mut args = vec!["rm", "-q", "-r"];
        args.extend_from_slice(paths);
        self.git(&args);
        self.commit_all(message)
    }

    /// Stages everything and commits (allowing an empty commit).
    pub fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.head()
    }

    /// Creates branch `name` at HEAD and checks it out.
    pub fn branch(&self, name: &str) {
        self.git(&["checkout", "-q", "-b", name]);
    }

    /// Checks out an existing branch.
    pub fn checkout(&self, name: &str) {
        self.git(&["checkout", "-q", name]);
    }

    /// Lightweight tag at HEAD.
    pub fn tag(&self, name: &str) {
        self.git(&["tag", name]);
    }

    /// Annotated tag at HEAD; returns the tag object's SHA (not the commit's).
    pub fn annotated_tag(&self, name: &str, message: &str) -> String {
        self.git(&["tag", "-a", name, "-m", message]);
        self.git(&["rev-parse", &format!("refs/tags/{name}")])
    }

    /// Creates an arbitrary ref (`refs/pull/1/head`) at HEAD.
    pub fn update_ref(&self, name: &str) {
        self.git(&["update-ref", name, "HEAD"]);
    }

    /// The commit SHA HEAD points to.
    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"])
    }

    /// Runs `git` in the repository and returns its trimmed stdout; panics with stderr on failure.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.path.parent().unwrap_or(&self.path))
            .output()
            .expect("running git (is it installed?)");
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}
