//! The safety rules: out-of-bounds symlinks and paths, size limits, git bombs.

use plumb_model::application::{DirectorySource, JsonnetSource};
use plumb_source::{Error, Limits};
use plumb_testenv::git::GitRepo;

use crate::support::*;

#[test]
fn symlinks_leaving_the_repository_refuse_the_commit() {
    let repo = GitRepo::new();
    repo.commit(&[("deploy/cm.yaml", configmap("a", "k: v"))], "ok");
    repo.commit_symlink(
        "deploy/passwd.yaml",
        "../../../../../../etc/passwd",
        "escape",
    );
    let (r, _d) = renderer();
    let err = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::SymlinkOutOfBounds { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("deploy/passwd.yaml -> ../../../../../../etc/passwd"),
        "{err}"
    );

    let repo = GitRepo::new();
    repo.commit_symlink("deploy/abs.yaml", "/etc/hostname", "absolute");
    let err = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::SymlinkOutOfBounds { .. }), "{err}");
}

#[test]
fn symlinks_inside_the_repository_are_followed() {
    let repo = GitRepo::new();
    repo.commit(&[("shared/cm.yaml", configmap("shared", "k: v"))], "shared");
    repo.commit_symlink("deploy/cm.yaml", "../shared/cm.yaml", "link");
    let (r, _d) = renderer();
    let out = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap();
    assert_eq!(keys(&out), ["/ConfigMap//shared"]);
}

#[test]
fn source_paths_and_jsonnet_imports_must_stay_inside() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "app/escape.jsonnet",
                "import '../../../../../../etc/hostname.jsonnet'\n",
            ),
            ("ok/cm.yaml", &configmap("a", "k: v")),
        ],
        "escape",
    );
    let (r, _d) = renderer();
    let err = r
        .render(&request(vec![source(&repo.url(), "../..", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::PathOutsideRepository { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "spec.source.path: ../.. resolves outside the repository root"
    );

    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("resolves outside the repository root"),
        "{err}"
    );

    let mut s = source(&repo.url(), "ok", "main");
    s.directory = Some(DirectorySource {
        jsonnet: Some(JsonnetSource {
            libs: Some(vec!["../outside".into()]),
            ..Default::default()
        }),
        ..Default::default()
    });
    s.path = Some("app".into());
    let err = r.render(&request(vec![s])).unwrap_err();
    assert!(
        err.to_string()
            .contains("libs: ../outside resolves outside"),
        "{err}"
    );
}

#[test]
fn a_huge_file_and_a_huge_render_hit_their_limits() {
    let repo = GitRepo::new();
    let big = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: {}\n",
        "x".repeat(300_000)
    );
    repo.commit(&[("deploy/big.yaml", big)], "big");
    let (r, _d) = renderer_with(Limits::default().max_file_bytes(100_000));
    let err = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::TooLarge { what: "file", .. }), "{err}");
    assert!(err.to_string().contains("deploy/big.yaml"), "{err}");

    let (r, _d) = renderer_with(Limits::default().max_render_bytes(200_000));
    let err = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("exceeds the limit of 200000 bytes"),
        "{err}"
    );
}

#[test]
fn a_jsonnet_program_that_expands_too_far_hits_the_output_limit() {
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/big.jsonnet",
            "[{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-' + i }, data: { v: std.repeat('x', 1000) } } for i in std.range(1, 1000)]\n",
        )],
        "big",
    );
    let (r, _d) = renderer_with(Limits::default().max_render_bytes(100_000));
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                what: "rendered output",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("app/big.jsonnet"), "{err}");
}

#[test]
fn a_git_bomb_stops_at_the_entry_limit() {
    // Six tree objects that expand to 10^6 files: each level holds the level below ten times.
    let repo = GitRepo::new();
    repo.commit(&[("README", "bomb\n")], "base");
    let blob = repo.git(&["hash-object", "-w", "README"]);
    let mut entries: String = (0..10)
        .map(|i| format!("100644 blob {blob}\tf{i}\n"))
        .collect();
    let mut tree = String::new();
    for _ in 0..6 {
        let tmp = repo.path().join("../mktree-input");
        std::fs::write(&tmp, &entries).unwrap();
        tree = {
            let out = std::process::Command::new("git")
                .args(["mktree"])
                .current_dir(repo.path())
                .stdin(std::fs::File::open(&tmp).unwrap())
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        entries = (0..10)
            .map(|i| format!("040000 tree {tree}\td{i}\n"))
            .collect();
    }
    let commit = repo.git(&["commit-tree", &tree, "-m", "bomb"]);
    repo.git(&["update-ref", "refs/heads/bomb", &commit]);
    let (r, _d) = renderer();
    let err = r
        .render(&request(vec![source(&repo.url(), "", "bomb")]))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::TooLarge {
                what: "repository tree",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("200000 entries"), "{err}");
}

/// Commits the chained-symlink escape of issue #12: `d0/…/d39/up -> ../…` stays inside on
/// paper (40 levels up from 40 levels down), and `link -> d0/…/d39/up/../…/<target>` climbs 41
/// levels from a path 41 levels deep, so each link alone looks inside; on disk `up` is the root
/// and the climb leaves it.
fn commit_chained_escape(repo: &GitRepo, link: &str, outside: &std::path::Path) {
    let depth = 40;
    let dirs: Vec<String> = (0..depth).map(|i| format!("d{i}")).collect();
    let up_dir = dirs.join("/");
    repo.commit_symlink(&format!("{up_dir}/up"), &"../".repeat(depth), "up");
    let link_dir_depth = std::path::Path::new(link).components().count() - 1;
    let target = format!(
        "{}{up_dir}/up/{}{}",
        "../".repeat(link_dir_depth),
        "../".repeat(depth + 1),
        outside.display().to_string().trim_start_matches('/')
    );
    repo.commit_symlink(link, &target, "chained escape");
}

#[test]
fn chained_symlinks_cannot_read_outside_the_checkout_through_a_directory() {
    let outside = tempfile::tempdir().unwrap();
    let stolen = outside.path().join("stolen.yaml");
    std::fs::write(
        &stolen,
        configmap("stolen", "secret: from-the-controller-disk"),
    )
    .unwrap();
    let repo = GitRepo::new();
    repo.commit(&[("deploy/cm.yaml", configmap("a", "k: v"))], "ok");
    commit_chained_escape(&repo, "deploy/evil.yaml", &stolen);
    let (r, _d) = renderer();
    let err = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap_err();
    let msg = chain(&err);
    assert!(!msg.contains("from-the-controller-disk"), "{msg}");
    assert!(matches!(err, Error::SymlinkOutOfBounds { .. }), "{msg}");
    assert!(msg.contains("deploy/evil.yaml -> "), "{msg}");
}

#[test]
fn chained_symlinks_cannot_read_outside_the_checkout_through_jsonnet_importstr() {
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/main.jsonnet",
            "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { p: importstr 'passwd.txt' } }\n",
        )],
        "jsonnet",
    );
    commit_chained_escape(&repo, "app/passwd.txt", std::path::Path::new("/etc/passwd"));
    let (r, _d) = renderer();
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    let msg = chain(&err);
    assert!(!msg.contains("root:"), "{msg}");
    assert!(msg.contains("app/passwd.txt -> "), "{msg}");
}
