//! `plumb render` as a user runs it: a real Git repository over file://, rendered offline.

use std::process::{Command, Stdio};

use plumb_testenv::git::GitRepo;

fn render(args: &[&str], cache: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("render")
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--helm")
        .arg(plumb_testenv::tools::helm())
        .arg("--kustomize")
        .arg(plumb_testenv::tools::kustomize())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn renders_a_directory_and_a_kustomization_at_a_tag() {
    let repo = GitRepo::named("render-cli");
    repo.commit(
        &[
            ("plain/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: \"0755\"\n  enabled: yes\n"),
            ("kust/kustomization.yaml", "resources:\n- deploy.yaml\nnamePrefix: prod-\n"),
            ("kust/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: registry.example/api:v1\n"),
        ],
        "v1",
    );
    repo.tag("v1");
    let cache = tempfile::tempdir().unwrap();

    let out = render(
        &[
            "--repo",
            &repo.url(),
            "--revision",
            "v1",
            "--path",
            "plain",
            "-o",
            "json",
        ],
        cache.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let items = v
        .as_array()
        .cloned()
        .or_else(|| v["items"].as_array().cloned())
        .unwrap_or_else(|| vec![v.clone()]);
    let cm = items
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .expect("the ConfigMap");
    // Read as kubectl reads YAML: quoted stays a string, `yes` is a YAML 1.1 boolean.
    assert_eq!(cm["data"]["mode"], "0755");
    assert_eq!(cm["data"]["enabled"], true);

    let out = render(
        &[
            "--repo",
            &repo.url(),
            "--revision",
            "v1",
            "--path",
            "kust",
            "--kustomize-image",
            "registry.example/api:v2",
        ],
        cache.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8_lossy(&out.stdout);
    assert!(yaml.contains("name: prod-api"), "{yaml}");
    assert!(yaml.contains("image: registry.example/api:v2"), "{yaml}");

    let out = render(
        &[
            "--repo",
            &repo.url(),
            "--revision",
            "no-such-tag",
            "--path",
            "plain",
        ],
        cache.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no-such-tag"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
