//! What the binary is built from (Git commit, tree state, build date, compiler), for
//! `plumb version` and `GET /api/version`. Shared by `build.rs` (which stamps the values as
//! `PLUMB_*` variables for `env!`) and the crate's unit tests (which run it on scratch
//! repositories).
//!
//! A few `git` commands rather than a crate: vergen-gitcl, built and shadow-rs each bring a
//! dozen or more build dependencies (or libgit2) for the same five values, and gix, already in
//! the graph, would be compiled a second time for the build script.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The paths the binary is built from: a change under them makes the tree "dirty" and reruns
/// the build script. Documentation and scripts do not change the binary, and watching them
/// would rebuild it on every edit of a doc.
pub const SCOPE: [&str; 4] = ["crates", "Cargo.toml", "Cargo.lock", "ui"];

/// What `git` says about the checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitStamp {
    /// The full commit hash of `HEAD`.
    pub commit: String,
    /// `clean` or `dirty` (uncommitted changes, or untracked files, under [`SCOPE`]).
    pub tree_state: &'static str,
    /// The committer date of `HEAD`, Unix seconds.
    pub commit_time: i64,
    /// Files whose change must rerun the build script (`HEAD`, the branch, the index, the
    /// packed refs), absolute.
    pub watch: Vec<PathBuf>,
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim_end().to_owned())
}

/// The stamp of the Git checkout whose top level is `root`, or `None`: no `git`, no repository,
/// or `root` is not the top of the repository that holds it (a source tarball unpacked inside
/// some other checkout must not take that checkout's commit).
pub fn git_stamp(root: &Path) -> Option<GitStamp> {
    let top = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != root.canonicalize().ok()? {
        return None;
    }
    let commit = git(root, &["rev-parse", "--verify", "HEAD^{commit}"])?;
    let commit_time = git(root, &["show", "-s", "--format=%ct", "HEAD"])?
        .parse()
        .ok()?;
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(SCOPE);
    let tree_state = if git(root, &status)?.is_empty() {
        "clean"
    } else {
        "dirty"
    };
    let mut paths = vec![
        "HEAD".to_owned(),
        "index".to_owned(),
        "packed-refs".to_owned(),
    ];
    if let Some(branch) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    let watch = paths
        .iter()
        .filter_map(|p| {
            git(
                root,
                &["rev-parse", "--path-format=absolute", "--git-path", p],
            )
        })
        .map(PathBuf::from)
        .collect();
    Some(GitStamp {
        commit,
        tree_state,
        commit_time,
        watch,
    })
}

/// `epoch` (Unix seconds, UTC) as RFC 3339 (`2023-11-14T22:13:20Z`), the layout of Argo's
/// `BuildDate`. Howard Hinnant's days-to-civil algorithm, so the build script needs no crate.
pub fn rfc3339(epoch: i64) -> String {
    let days = epoch.div_euclid(86_400);
    let secs = epoch.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// The build date: `SOURCE_DATE_EPOCH` when set (reproducible builds), else the commit's date,
/// else `unknown`; never the clock, so two builds of one commit stamp the same date.
pub fn build_date(
    source_date_epoch: Option<&str>,
    commit_time: Option<i64>,
) -> Result<String, String> {
    match source_date_epoch.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => s
            .parse::<i64>()
            .ok()
            .filter(|e| *e >= 0)
            .map(rfc3339)
            .ok_or_else(|| {
                format!("SOURCE_DATE_EPOCH={s:?} is not a number of seconds since 1970")
            }),
        None => Ok(commit_time.map_or_else(|| "unknown".to_owned(), rfc3339)),
    }
}

/// The build script: prints the `cargo:` lines.
pub fn run() {
    for line in lines(&|name| std::env::var(name).ok()) {
        println!("{line}");
    }
}

/// The build script's `cargo:` lines, with the build's environment read through `env`
/// (`CARGO_MANIFEST_DIR`, `SOURCE_DATE_EPOCH`, `RUSTC`).
pub fn lines(env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = vec!["cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH".to_owned()];
    let root = PathBuf::from(env("CARGO_MANIFEST_DIR").unwrap_or_default()).join("../..");
    let stamp = git_stamp(&root);
    if let Some(s) = &stamp {
        for path in &s.watch {
            out.push(format!("cargo:rerun-if-changed={}", path.display()));
        }
        // Cargo rescans a watched directory for any newer file: an edit under SCOPE reruns the
        // script, so the tree state is never stale. `ui` holds node_modules (ignored, large, and
        // not an input), so only its tracked files are watched.
        for entry in SCOPE.iter().filter(|p| **p != "ui") {
            out.push(format!(
                "cargo:rerun-if-changed={}",
                root.join(entry).display()
            ));
        }
        let ui = git(&root, &["ls-files", "-z", "--", "ui"]).unwrap_or_default();
        for file in ui.split('\0').filter(|f| !f.is_empty()) {
            out.push(format!(
                "cargo:rerun-if-changed={}",
                root.join(file).display()
            ));
        }
    }
    let sde = env("SOURCE_DATE_EPOCH");
    let date = build_date(sde.as_deref(), stamp.as_ref().map(|s| s.commit_time))
        .unwrap_or_else(|e| panic!("{e}"));
    let rustc_version = Command::new(env("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let (commit, state) = stamp.as_ref().map_or(("unknown", "unknown"), |s| {
        (s.commit.as_str(), s.tree_state)
    });
    out.push(format!("cargo:rustc-env=PLUMB_GIT_COMMIT={commit}"));
    out.push(format!("cargo:rustc-env=PLUMB_GIT_TREE_STATE={state}"));
    out.push(format!("cargo:rustc-env=PLUMB_BUILD_DATE={date}"));
    out.push(format!(
        "cargo:rustc-env=PLUMB_RUSTC_VERSION={rustc_version}"
    ));
    out
}
