//! The build script's stamp (`stamp.rs`) on scratch Git repositories, and the stamp this
//! binary was built with against the checkout it was built from.

use std::path::Path;
use std::process::Command;

use crate::stamp;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_DATE", "1700000000 +0000")
        .env("GIT_COMMITTER_DATE", "1700000000 +0000")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

#[test]
fn dates() {
    assert_eq!(stamp::rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(stamp::rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    assert_eq!(stamp::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(stamp::rfc3339(4_107_542_399), "2100-02-28T23:59:59Z");
    // SOURCE_DATE_EPOCH wins over the commit's date; without either, no clock: `unknown`.
    assert_eq!(
        stamp::build_date(Some("1700000000"), Some(5)).as_deref(),
        Ok("2023-11-14T22:13:20Z")
    );
    assert_eq!(
        stamp::build_date(None, Some(0)).as_deref(),
        Ok("1970-01-01T00:00:00Z")
    );
    assert_eq!(stamp::build_date(Some(" "), None).as_deref(), Ok("unknown"));
    for bad in ["yesterday", "-1", "1e9"] {
        let err = stamp::build_date(Some(bad), Some(0)).expect_err(bad);
        assert!(err.contains("SOURCE_DATE_EPOCH"), "{err}");
    }
}

#[test]
fn scratch_repositories() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join("crates")).expect("mkdir");
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("crates/lib.rs"), "// one\n").expect("write");
    std::fs::write(root.join("README.md"), "one\n").expect("write");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "one"]);
    let s = stamp::git_stamp(&root).expect("a stamp");
    assert_eq!(s.commit, git(&root, &["rev-parse", "HEAD"]));
    assert_eq!((s.tree_state, s.commit_time), ("clean", 1_700_000_000));
    let gitdir = root.join(".git").canonicalize().expect("canonical");
    for f in ["HEAD", "index", "refs/heads/main"] {
        assert!(s.watch.contains(&gitdir.join(f)), "{f} in {:?}", s.watch);
    }
    // Outside the binary's inputs: still clean.
    std::fs::write(root.join("README.md"), "two\n").expect("write");
    assert_eq!(stamp::git_stamp(&root).expect("stamp").tree_state, "clean");
    // An edit, or a new file, among them: dirty.
    std::fs::write(root.join("crates/lib.rs"), "// two\n").expect("write");
    assert_eq!(stamp::git_stamp(&root).expect("stamp").tree_state, "dirty");
    git(&root, &["checkout", "-q", "--", "crates"]);
    std::fs::write(root.join("crates/new.rs"), "").expect("write");
    assert_eq!(stamp::git_stamp(&root).expect("stamp").tree_state, "dirty");
    // A source tree unpacked inside another checkout is not that checkout.
    let unpacked = root.join("vendor/plumb");
    std::fs::create_dir_all(&unpacked).expect("mkdir");
    assert_eq!(stamp::git_stamp(&unpacked), None);
    // No repository at all.
    let bare = tmp.path().join("tarball");
    std::fs::create_dir_all(&bare).expect("mkdir");
    assert_eq!(stamp::git_stamp(&bare), None);
}

/// The stamp compiled into this binary names the checkout it was built from.
#[test]
fn this_build() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let b = crate::cmd::version::build_info();
    assert_eq!(b.git_commit, git(&root, &["rev-parse", "HEAD"]));
    let expected = match option_env!("SOURCE_DATE_EPOCH") {
        Some(sde) => stamp::build_date(Some(sde), None).expect("valid"),
        None => stamp::rfc3339(
            git(&root, &["show", "-s", "--format=%ct", "HEAD"])
                .parse()
                .expect("seconds"),
        ),
    };
    assert_eq!(b.build_date, expected);
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(stamp::SCOPE);
    let state = if git(&root, &status).is_empty() {
        "clean"
    } else {
        "dirty"
    };
    assert_eq!(b.git_tree_state, state);
    assert!(b.rustc_version.starts_with("rustc "), "{}", b.rustc_version);
}

/// The build script's own lines: `SOURCE_DATE_EPOCH` gives the date, the checkout the commit; a
/// tree without Git is `unknown`, and a bad `SOURCE_DATE_EPOCH` stops the build naming it.
#[test]
fn build_script_lines() {
    let manifest = env!("CARGO_MANIFEST_DIR").to_owned();
    let build = |dir: String, sde: &'static str| {
        stamp::lines(&move |name| match name {
            "CARGO_MANIFEST_DIR" => Some(dir.clone()),
            "SOURCE_DATE_EPOCH" => Some(sde.to_owned()),
            _ => None,
        })
    };
    let lines = build(manifest.clone(), "1700000000");
    let root = Path::new(&manifest).join("../..");
    let head = git(&root, &["rev-parse", "HEAD"]);
    for want in [
        "cargo:rustc-env=PLUMB_BUILD_DATE=2023-11-14T22:13:20Z".to_owned(),
        format!("cargo:rustc-env=PLUMB_GIT_COMMIT={head}"),
        "cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH".to_owned(),
    ] {
        assert!(lines.contains(&want), "{want} in {lines:?}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cargo:rustc-env=PLUMB_RUSTC_VERSION=rustc ")),
        "{lines:?}"
    );
    let tarball = tempfile::tempdir().expect("tempdir");
    let inner = tarball.path().join("crates/plumb");
    std::fs::create_dir_all(&inner).expect("mkdir");
    let lines = build(inner.display().to_string(), "");
    for want in [
        "cargo:rustc-env=PLUMB_GIT_COMMIT=unknown",
        "cargo:rustc-env=PLUMB_GIT_TREE_STATE=unknown",
        "cargo:rustc-env=PLUMB_BUILD_DATE=unknown",
    ] {
        assert!(lines.iter().any(|l| l == want), "{want} in {lines:?}");
    }
    let bad = std::panic::catch_unwind(|| build(manifest.clone(), "tomorrow"))
        .expect_err("a bad SOURCE_DATE_EPOCH stops the build");
    let message = bad.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("SOURCE_DATE_EPOCH=\"tomorrow\""),
        "{message}"
    );
}
