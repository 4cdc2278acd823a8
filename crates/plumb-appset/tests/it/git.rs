//! The git generators on real repositories: Argo's documented layouts and hostile trees.

use plumb_appset::Limits;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::agen_support::{appset, context, params};

/// Argo's Generators-Git.md example repository (`applicationset/examples/git-generator-*`).
fn argo_examples() -> GitRepo {
    let repo = GitRepo::new();
    let cluster = |name: &str, address: &str| {
        json!({"aws_account": "123456", "asset_id": "11223344",
               "cluster": {"owner": "cluster-admin@company.com", "name": name, "address": address}})
        .to_string()
    };
    repo.commit(
        &[
            (
                "cluster-addons/argo-workflows/kustomization.yaml",
                "resources: []\n".to_owned(),
            ),
            (
                "cluster-addons/prometheus-operator/Chart.yaml",
                "name: p\n".to_owned(),
            ),
            ("cluster-addons/exclude-this/x.yaml", "a: b\n".to_owned()),
            ("cluster-addons/.hidden/x.yaml", "a: b\n".to_owned()),
            (
                "cluster-config/engineering/dev/config.json",
                cluster("engineering-dev", "https://1.2.3.4"),
            ),
            (
                "cluster-config/engineering/prod/config.json",
                cluster("engineering-prod", "https://2.4.6.8"),
            ),
            (
                "cluster-config/engineering/prod/extra/config.json",
                cluster("nested", "https://9.9.9.9"),
            ),
        ],
        "argo examples",
    );
    repo
}

fn names(out: &[Value], key: &str) -> Vec<String> {
    out.iter()
        .map(|p| p[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn directories_as_argo_docs() {
    let repo = argo_examples();
    let cache = tempfile::tempdir().unwrap();
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    let generator = json!([{"git": {"repoURL": repo.url(), "revision": "HEAD", "directories": [
        {"path": "cluster-addons/*"}, {"path": "cluster-addons/exclude-this", "exclude": true}
    ]}}]);
    let out = params(&appset("argocd", false, generator.clone()), &ctx)
        .await
        .unwrap();
    assert_eq!(
        names(&out, "path"),
        [
            "cluster-addons/argo-workflows",
            "cluster-addons/prometheus-operator"
        ]
    );
    assert_eq!(out[0]["path.basename"], "argo-workflows");
    assert_eq!(out[0]["path.basenameNormalized"], "argo-workflows");
    assert_eq!(out[0]["path[0]"], "cluster-addons");
    assert_eq!(out[0]["path[1]"], "argo-workflows");

    let go = params(&appset("argocd", true, generator), &ctx)
        .await
        .unwrap();
    assert_eq!(
        go[1]["path"]["segments"],
        json!(["cluster-addons", "prometheus-operator"])
    );
    assert_eq!(go[1]["path"]["basename"], "prometheus-operator");

    let prefixed = json!([{"git": {"repoURL": repo.url(), "pathParamPrefix": "addon", "values": {"b": "{{addon.path.basename}}-x"}, "directories": [{"path": "cluster-addons/argo-*"}]}}]);
    let out = params(&appset("argocd", false, prefixed), &ctx)
        .await
        .unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["addon.path"], "cluster-addons/argo-workflows");
    assert_eq!(out[0]["values.b"], "argo-workflows-x");
}

#[tokio::test]
async fn files_as_argo_docs_both_globbings() {
    let repo = argo_examples();
    let cache = tempfile::tempdir().unwrap();
    let generator = json!([{"git": {"repoURL": repo.url(), "revision": "main", "files": [
        {"path": "cluster-config/**/config.json"}
    ]}}]);
    // Argo's default: git ls-files pathspecs, `*` crossing `/`.
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    let out = params(&appset("argocd", false, generator.clone()), &ctx)
        .await
        .unwrap();
    assert_eq!(
        names(&out, "cluster.name"),
        ["engineering-dev", "engineering-prod", "nested"]
    );
    assert_eq!(out[0]["cluster.address"], "https://1.2.3.4");
    assert_eq!(out[0]["path"], "cluster-config/engineering/dev");
    assert_eq!(out[0]["path.basename"], "dev");
    assert_eq!(out[0]["path.filename"], "config.json");
    assert_eq!(out[0]["path[1]"], "engineering");

    let excluded = json!([{"git": {"repoURL": repo.url(), "files": [
        {"path": "cluster-config/**/config.json"}, {"path": "cluster-config/*/prod/extra/*", "exclude": true}
    ]}}]);
    let out = params(&appset("argocd", true, excluded), &ctx)
        .await
        .unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[1]["cluster"]["name"], "engineering-prod");
    assert_eq!(out[1]["path"]["filenameNormalized"], "config.json");

    // doublestar: `*` stays in one directory.
    let limits = Limits {
        new_git_file_globbing: true,
        ..Limits::default()
    };
    let ctx = context("agen-unused", &cache, limits).await;
    let one_level = json!([{"git": {"repoURL": repo.url(), "files": [{"path": "cluster-config/*/*/config.json"}]}}]);
    let out = params(&appset("argocd", false, one_level), &ctx)
        .await
        .unwrap();
    assert_eq!(
        names(&out, "cluster.name"),
        ["engineering-dev", "engineering-prod"]
    );
}

#[tokio::test]
async fn matrix_git_directories_times_list_and_git_in_matrix() {
    let repo = argo_examples();
    let cache = tempfile::tempdir().unwrap();
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    let generator = json!([{"matrix": {"generators": [
        {"git": {"repoURL": repo.url(), "directories": [{"path": "cluster-config/engineering/*"}]}},
        {"git": {"repoURL": repo.url(), "files": [{"path": "{{path}}/config.json"}]}}
    ]}}]);
    let out = params(&appset("argocd", false, generator), &ctx)
        .await
        .unwrap();
    // Both sides define `path`: equal values combine, different ones are Argo's error.
    assert_eq!(
        names(&out, "cluster.name"),
        ["engineering-dev", "engineering-prod"]
    );

    let three = json!([{"matrix": {"generators": [{"list": {"elements": []}}, {"list": {"elements": []}}, {"list": {"elements": []}}]}}]);
    let err = params(&appset("argocd", false, three), &ctx)
        .await
        .unwrap_err();
    assert!(
        err.contains("found more than two generators, Matrix support only two"),
        "{err}"
    );

    let merge = json!([{"merge": {"mergeKeys": ["path.basename"], "generators": [
        {"git": {"repoURL": repo.url(), "directories": [{"path": "cluster-addons/*"}]}},
        {"list": {"elements": [{"path.basename": "prometheus-operator", "extra": "yes"}]}}
    ]}}]);
    let out = params(&appset("argocd", false, merge), &ctx).await.unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[2]["extra"], "yes");
    assert!(out[0].get("extra").is_none());
}

#[tokio::test]
async fn hostile_trees_and_patterns() {
    let repo = GitRepo::new();
    repo.commit(&[("apps/good/config.yaml", "name: good\n")], "good");
    repo.commit_symlink("apps/alias", "good", "a link inside");
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    repo.commit(&[("deep/config.yaml", deep.as_bytes())], "deep");
    repo.commit(&[("big/config.yaml", vec![b'#'; 5 << 20])], "big");
    let cache = tempfile::tempdir().unwrap();
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    let run = |path: &str| {
        appset(
            "argocd",
            false,
            json!([{"git": {"repoURL": repo.url(), "files": [{"path": path}]}}]),
        )
    };
    for path in ["../*", "apps/../../x", "/etc/passwd"] {
        let err = params(&run(path), &ctx).await.unwrap_err();
        assert!(
            err.contains("leads outside the repository"),
            "{path}: {err}"
        );
    }
    let err = params(&run("deep/config.yaml"), &ctx).await.unwrap_err();
    assert!(err.contains("deep/config.yaml"), "{err}");
    let err = params(&run("big/config.yaml"), &ctx).await.unwrap_err();
    assert!(
        err.contains("big/config.yaml") && err.contains("4194304"),
        "{err}"
    );
    let out = params(&run("apps/good/*"), &ctx).await.unwrap();
    assert_eq!(out[0]["name"], "good");
    let dirs = appset(
        "argocd",
        false,
        json!([{"git": {"repoURL": repo.url(), "directories": [{"path": "apps/*"}]}}]),
    );
    // A link to a directory is not walked into nor listed, as Go's WalkDir.
    assert_eq!(
        names(&params(&dirs, &ctx).await.unwrap(), "path"),
        ["apps/good"]
    );
}

#[tokio::test]
async fn a_symlink_out_of_the_repository_fails_the_generator_by_name() {
    let repo = GitRepo::new();
    repo.commit(&[("apps/good/config.yaml", "name: good\n")], "good");
    repo.commit_symlink("apps/evil/config.yaml", "/etc/passwd", "link out");
    let cache = tempfile::tempdir().unwrap();
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    for generator in [
        json!({"git": {"repoURL": repo.url(), "files": [{"path": "apps/*/config.yaml"}]}}),
        json!({"git": {"repoURL": repo.url(), "directories": [{"path": "apps/*"}]}}),
    ] {
        let err = params(&appset("argocd", false, json!([generator])), &ctx)
            .await
            .unwrap_err();
        assert!(
            err.contains("apps/evil/config.yaml") && !err.contains("root:"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_sparse_gigabyte_file_is_refused_by_name() {
    let repo = GitRepo::new();
    let file = std::fs::File::create(repo.path().join("huge.yaml")).unwrap();
    file.set_len(1 << 30).unwrap();
    repo.commit_all("a sparse gigabyte");
    let cache = tempfile::tempdir().unwrap();
    let ctx = context("agen-unused", &cache, Limits::default()).await;
    let set = appset(
        "argocd",
        false,
        json!([{"git": {"repoURL": repo.url(), "files": [{"path": "*.yaml"}]}}]),
    );
    let err = params(&set, &ctx).await.unwrap_err();
    assert!(err.contains("huge.yaml"), "{err}");
}
