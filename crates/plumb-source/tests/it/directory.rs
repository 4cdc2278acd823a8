//! Plain directories: YAML and JSON as kubectl reads them, recurse/include/exclude, Lists.

use plumb_model::application::DirectorySource;
use plumb_source::{Error, SourceType};
use plumb_testenv::git::GitRepo;

use crate::support::*;

#[test]
fn reads_yaml_json_and_lists_in_path_order_with_origins() {
    let repo = GitRepo::new();
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: from-list\n  data:\n    enabled: yes\n    mode: 0755\n";
    let json = r#"{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "api"}}"#;
    repo.commit(
        &[
            ("deploy/a-deployment.yaml", DEPLOYMENT.to_owned()),
            ("deploy/b-list.yml", list.to_owned()),
            ("deploy/c-sa.json", json.to_owned()),
            (
                "deploy/d-multi.yaml",
                format!(
                    "---\n{SERVICE}---\n# only a comment\n---\n{}",
                    configmap("second", "k: v")
                ),
            ),
            ("deploy/README.md", "not a manifest".to_owned()),
            ("deploy/nested/ignored.yaml", configmap("nested", "k: v")),
        ],
        "app",
    );
    let (r, _d) = renderer();
    let out = r
        .render(&request(vec![source(&repo.url(), "deploy", "HEAD")]))
        .unwrap();
    assert_eq!(
        keys(&out),
        [
            "apps/Deployment//api",
            "/ConfigMap//from-list",
            "/ServiceAccount//api",
            "/Service//api",
            "/ConfigMap//second"
        ]
    );
    assert_eq!(out.sources[0].source_type, Some(SourceType::Directory));
    // YAML 1.1 as kubectl: `yes` is a boolean, `0755` is octal.
    assert_eq!(out.manifests[1].object["data"]["enabled"], true);
    assert_eq!(out.manifests[1].object["data"]["mode"], 493);
    // Origins: file relative to the repository root, document index, first content line.
    assert_eq!(out.manifests[0].origin(), "deploy/a-deployment.yaml:1");
    assert_eq!(out.manifests[3].file, "deploy/d-multi.yaml");
    assert_eq!((out.manifests[3].index, out.manifests[3].line), (1, 2));
    assert_eq!(out.manifests[4].index, 3);
}

#[test]
fn recurse_include_and_exclude_follow_argo_globs() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("apps/base/a.yaml", configmap("a", "k: v")),
            ("apps/base/b.yaml", configmap("b", "k: v")),
            ("apps/prod/c.yaml", configmap("c", "k: v")),
            ("apps/prod/secret-d.yaml", configmap("d", "k: v")),
            ("apps/top.yaml", configmap("top", "k: v")),
        ],
        "tree",
    );
    let (r, _d) = renderer();
    let render = |dir: DirectorySource| {
        let mut s = source(&repo.url(), "apps", "main");
        s.directory = Some(dir);
        keys(&r.render(&request(vec![s])).unwrap())
    };
    assert_eq!(render(DirectorySource::default()), ["/ConfigMap//top"]);
    assert_eq!(
        render(DirectorySource {
            recurse: Some(true),
            ..Default::default()
        }),
        [
            "/ConfigMap//a",
            "/ConfigMap//b",
            "/ConfigMap//c",
            "/ConfigMap//d",
            "/ConfigMap//top"
        ]
    );
    assert_eq!(
        render(DirectorySource {
            recurse: Some(true),
            exclude: Some("*secret-*".into()),
            ..Default::default()
        }),
        [
            "/ConfigMap//a",
            "/ConfigMap//b",
            "/ConfigMap//c",
            "/ConfigMap//top"
        ]
    );
    assert_eq!(
        render(DirectorySource {
            recurse: Some(true),
            include: Some("{base/a.yaml,prod/*}".into()),
            ..Default::default()
        }),
        ["/ConfigMap//a", "/ConfigMap//c", "/ConfigMap//d"]
    );
}

#[test]
fn invalid_manifests_fail_with_file_and_line_and_never_render_empty() {
    let repo = GitRepo::new();
    let c1 = repo.commit(
        &[
            ("deploy/ok.yaml", configmap("ok", "k: v")),
            (
                "deploy/dup.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: a\n  k: b\n"
                    .into(),
            ),
        ],
        "dup",
    );
    let (r, _d) = renderer();
    // A duplicate key is read as Argo CD (sigs.k8s.io/yaml) and kubectl read it: the last value
    // wins (plumb-yaml logs a warning naming deploy/dup.yaml:7 and the key).
    let out = r
        .render(&request(vec![source(&repo.url(), "deploy", &c1)]))
        .unwrap();
    let dup = out
        .manifests
        .iter()
        .find(|m| m.file == "deploy/dup.yaml")
        .expect("deploy/dup.yaml rendered");
    assert_eq!(dup.object["data"]["k"], "b");

    repo.commit(
        &[(
            "deploy/dup.yaml",
            "apiVersion: v1\nmetadata:\n  name: nokind\n",
        )],
        "nokind",
    );
    let err = r
        .render(&request(vec![source(&repo.url(), "deploy", "main")]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid manifest deploy/dup.yaml:1: Object 'Kind' is missing"
    );

    let err = r
        .render(&request(vec![source(&repo.url(), "missing", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::PathNotFound { .. }), "{err}");
}
