//! argocd-cm's `kustomize.buildOptions` (issue #27: applied since then), written by whoever can
//! edit argocd-cm, met through `plumb render --settings` (the controller's renderer): options
//! that would run programs (`--enable-exec`, `--enable-helm --helm-command`), reach the host or
//! the network (`--mount`, `--network`, `--env`), write files (`--output`), a value kustomize
//! does not know, and shell syntax are each refused naming the setting, before kustomize runs.
//! `--load-restrictor LoadRestrictionsNone`, which Plumb takes, still reaches nothing outside
//! the checkout: Plumb's own path check refuses the kustomization first.
//!
//! The option parser's unit test is `plumb-source/src/render/kustomize_options.rs`; the options
//! applied, `plumb-source/tests/it/kustomize.rs::build_options_from_argocd_cm_are_applied_and_bounded`.

use plumb_testenv::git::GitRepo;

use crate::repo_reads::plumb;

fn settings(dir: &std::path::Path, options: &str) -> String {
    let path = dir.join("argocd-cm.yaml");
    let value = serde_json::to_string(options).unwrap();
    std::fs::write(
        &path,
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  kustomize.buildOptions: {value}\n"),
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn hostile_kustomize_build_options_are_refused_before_kustomize_runs() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("ran");
    let stolen = outside.path().join("stolen.yaml");
    std::fs::write(
        &stolen,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\ndata:\n  k: controller-disk-secret\n",
    )
    .unwrap();
    let repo = GitRepo::new();
    repo.commit(
        &[
            (
                "k/kustomization.yaml",
                "resources:\n- cm.yaml\n".to_string(),
            ),
            (
                "k/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n".to_string(),
            ),
            (
                "far/kustomization.yaml",
                format!(
                    "resources:\n- ../../../../../../../..{}\n",
                    stolen.display()
                ),
            ),
        ],
        "kustomize",
    );
    let url = repo.url();
    let dir = tempfile::tempdir().unwrap();
    let touch = format!("--helm-command /bin/sh -c 'touch {}'", marker.display());
    let cases = [
        "--enable-exec".to_string(),
        "--enable-alpha-plugins".to_string(),
        format!("--enable-helm {touch}"),
        "--mount type=bind,src=/etc,dst=/etc".to_string(),
        "--network".to_string(),
        "--env SECRET".to_string(),
        format!("--output {}", marker.display()),
        "--load-restrictor LoadRestrictionsBogus".to_string(),
        format!("--stack-trace; touch {}", marker.display()),
        "--load-restrictor".to_string(),
    ];
    for options in &cases {
        let cache = tempfile::tempdir().unwrap();
        let file = settings(dir.path(), options);
        let run = plumb(&[
            "render",
            "--repo",
            &url,
            "--path",
            "k",
            "--settings",
            &file,
            "--cache-dir",
            &cache.path().display().to_string(),
        ]);
        assert_ne!(run.code, Some(0), "{options}: {}", run.all());
        assert!(
            run.stderr.contains("kustomize.buildOptions"),
            "{options}: {}",
            run.stderr
        );
        assert!(
            run.stderr.len() < 4096,
            "{options}: bounded: {}",
            run.stderr
        );
    }
    assert!(!marker.exists(), "an option ran a program or wrote a file");

    // What Plumb takes keeps the boundary: the kustomization that climbs out is refused.
    let cache = tempfile::tempdir().unwrap();
    let file = settings(
        dir.path(),
        "--load-restrictor LoadRestrictionsNone --stack-trace",
    );
    let cache_dir = cache.path().display().to_string();
    let render = |path: &str| {
        plumb(&[
            "render",
            "--repo",
            &url,
            "--path",
            path,
            "--settings",
            &file,
            "--cache-dir",
            &cache_dir,
        ])
    };
    let ok = render("k");
    assert_eq!(ok.code, Some(0), "{}", ok.all());
    let far = render("far");
    assert_ne!(far.code, Some(0), "{}", far.all());
    assert!(
        far.stderr.contains("resolves outside the repository root"),
        "{}",
        far.stderr
    );
    assert!(
        !far.all().contains("controller-disk-secret"),
        "{}",
        far.all()
    );
}
