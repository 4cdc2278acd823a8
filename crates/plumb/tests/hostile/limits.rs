//! Attacks: resource exhaustion through inputs. Deeply nested documents (one bound for YAML and
//! JSON), oversized `plumb diff` inputs, and symlink loops in the directories `plumb diff` and
//! `plumb render` read: each ends with an error naming the input, never a crash or a hang.

use plumb_testenv::git::GitRepo;

use super::repo_reads::plumb;

/// The bound of `plumb_yaml::MAX_DEPTH`, as documented in docs/security.md.
const MAX_DEPTH: usize = 64;

fn nested_json(levels: usize) -> String {
    format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {{\"name\": \"deep\"}}, \"data\": {}1{}}}",
        "[".repeat(levels - 1),
        "]".repeat(levels - 1)
    )
}

fn nested_yaml(levels: usize) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: {}1{}\n",
        "[".repeat(levels - 1),
        "]".repeat(levels - 1)
    )
}

#[test]
fn yaml_and_json_nesting_hit_the_same_bound_in_plumb_diff() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.yaml");
    std::fs::write(&live, "").unwrap();
    let live = live.display().to_string();
    for (ext, text) in [
        ("json", nested_json(MAX_DEPTH)),
        ("yaml", nested_yaml(MAX_DEPTH)),
    ] {
        let file = dir.path().join(format!("ok.{ext}"));
        std::fs::write(&file, text).unwrap();
        let run = plumb(&[
            "diff",
            "--desired",
            &file.display().to_string(),
            "--live",
            &live,
        ]);
        // A new object against an empty live set: a difference (1), not an error (2).
        assert_eq!(run.code, Some(1), "{ext}: {}", run.all());
    }
    for levels in [MAX_DEPTH + 1, 5_000, 200_000] {
        for (ext, text) in [("json", nested_json(levels)), ("yaml", nested_yaml(levels))] {
            let file = dir.path().join(format!("deep.{ext}"));
            std::fs::write(&file, text).unwrap();
            let name = file.display().to_string();
            let run = plumb(&["diff", "--desired", &name, "--live", &live]);
            assert_eq!(run.code, Some(2), "{ext} {levels}: {}", run.all());
            assert!(
                run.stderr.contains(&format!(
                    "{name}:1: document nests deeper than {MAX_DEPTH} levels"
                )),
                "{ext} {levels}: {}",
                run.stderr
            );
        }
    }
}

#[test]
fn deep_nesting_in_a_repository_is_refused_by_plumb_render() {
    let repo = GitRepo::new();
    repo.commit(&[("deploy/deep.yaml", nested_yaml(10_000))], "deep");
    let cache = tempfile::tempdir().unwrap();
    let run = plumb(&[
        "render",
        "--repo",
        &repo.url(),
        "--path",
        "deploy",
        "--cache-dir",
        &cache.path().display().to_string(),
    ]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stderr.contains(&format!(
            "deploy/deep.yaml:1: document nests deeper than {MAX_DEPTH} levels"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn an_oversized_diff_input_is_refused_without_reading_it_all() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    // Sparse: 65 MiB of zeros cost no disk; only the limit plus one byte is read.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let small = dir.path().join("small.yaml");
    std::fs::write(&small, "").unwrap();
    let name = big.display().to_string();
    let run = plumb(&[
        "diff",
        "--desired",
        &name,
        "--live",
        &small.display().to_string(),
    ]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(
        run.stderr.contains(&format!(
            "{name}: file exceeds the limit of {} bytes",
            64 << 20
        )),
        "{}",
        run.stderr
    );
    let run = plumb(&[
        "diff",
        "--desired",
        &small.display().to_string(),
        "--live",
        &small.display().to_string(),
        "--settings",
        &name,
    ]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stderr.contains("exceeds the limit"), "{}", run.stderr);
}

#[test]
fn symlink_loops_under_a_diff_directory_end_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let desired = dir.path().join("desired");
    std::fs::create_dir_all(desired.join("apps")).unwrap();
    std::fs::write(
        desired.join("apps/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("..", desired.join("apps/up")).unwrap();
    let live = dir.path().join("live.yaml");
    std::fs::write(&live, "").unwrap();
    let live = live.display().to_string();
    let run = plumb(&[
        "diff",
        "--desired",
        &desired.display().to_string(),
        "--live",
        &live,
    ]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(
        run.stderr
            .contains("apps/up: symlink to .. leads back into a directory being read"),
        "{}",
        run.stderr
    );

    // A file link loop.
    std::fs::remove_file(desired.join("apps/up")).unwrap();
    std::os::unix::fs::symlink("b.yaml", desired.join("apps/a.yaml")).unwrap();
    std::os::unix::fs::symlink("a.yaml", desired.join("apps/b.yaml")).unwrap();
    let run = plumb(&[
        "diff",
        "--desired",
        &desired.display().to_string(),
        "--live",
        &live,
    ]);
    assert_eq!(run.code, Some(2), "{}", run.all());
    assert!(run.stderr.contains("a loop"), "{}", run.stderr);

    // Two links to one directory elsewhere (no loop): read once, no error.
    std::fs::remove_file(desired.join("apps/a.yaml")).unwrap();
    std::fs::remove_file(desired.join("apps/b.yaml")).unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(
        shared.join("s.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&shared, desired.join("one")).unwrap();
    std::os::unix::fs::symlink(&shared, desired.join("two")).unwrap();
    let run = plumb(&[
        "diff",
        "--desired",
        &desired.display().to_string(),
        "--live",
        &live,
    ]);
    assert_eq!(run.code, Some(1), "{}", run.all());
}

#[test]
fn symlink_loops_in_a_repository_end_with_an_error_in_plumb_render() {
    // A file link loop: refused when the commit is checked out, naming the link.
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "deploy/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )],
        "ok",
    );
    repo.commit_symlink("deploy/a.yaml", "b.yaml", "a");
    repo.commit_symlink("deploy/b.yaml", "a.yaml", "b");
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().display().to_string();
    let run = plumb(&[
        "render",
        "--repo",
        &repo.url(),
        "--path",
        "deploy",
        "--cache-dir",
        &cache,
    ]);
    assert_ne!(run.code, Some(0), "{}", run.all());
    assert!(
        run.stderr
            .contains("is part of a loop or of a chain of more than 40 links"),
        "{}",
        run.stderr
    );

    // A directory link back to its parent, read recursively: not descended into, so the render
    // ends (with the one real object).
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "deploy/sub/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )],
        "ok",
    );
    repo.commit_symlink("deploy/sub/up", "..", "loop");
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.yaml");
    std::fs::write(
        &app,
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: loop\nspec:\n  destination:\n    namespace: default\n  source:\n    repoURL: {}\n    path: deploy\n    directory:\n      recurse: true\n",
            repo.url()
        ),
    )
    .unwrap();
    let run = plumb(&[
        "render",
        "--app",
        &app.display().to_string(),
        "--cache-dir",
        &cache,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.all());
    assert_eq!(
        run.stdout.matches("kind: ConfigMap").count(),
        1,
        "{}",
        run.stdout
    );
}
