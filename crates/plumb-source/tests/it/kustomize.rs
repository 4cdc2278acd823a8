//! Kustomizations rendered by the real kustomize binary (built by `scripts/testenv build`).

use plumb_model::application::{
    ApplicationSource, KustomizePatch, KustomizeReplica, KustomizeSelector, KustomizeSource,
};
use plumb_source::{Error, Limits, SourceType};
use plumb_testenv::git::GitRepo;

use crate::support::*;

fn kustomize_repo() -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("base/deployment.yaml", DEPLOYMENT.to_owned()),
            ("base/service.yaml", SERVICE.to_owned()),
            ("base/kustomization.yaml", "resources:\n- deployment.yaml\n- service.yaml\n".to_owned()),
            (
                "overlays/prod/kustomization.yaml",
                "resources:\n- ../../base\nnamePrefix: prod-\nimages:\n- name: registry.example.com/payments/api\n  newTag: 1.5.0\n".to_owned(),
            ),
            ("components/monitoring/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  monitoring: enabled\n".to_owned()),
        ],
        "kustomize",
    );
    repo
}

#[test]
fn overlay_with_images_and_name_prefix() {
    let repo = kustomize_repo();
    let (r, _d) = renderer_with_tools();
    let out = r
        .render(&request(vec![source(&repo.url(), "overlays/prod", "main")]))
        .unwrap();
    assert_eq!(out.sources[0].source_type, Some(SourceType::Kustomize));
    let mut k = keys(&out);
    k.sort();
    assert_eq!(k, ["/Service//prod-api", "apps/Deployment//prod-api"]);
    let deploy = out
        .manifests
        .iter()
        .find(|m| m.object["kind"] == "Deployment")
        .unwrap();
    assert_eq!(
        deploy.object["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example.com/payments/api:1.5.0"
    );
}

#[test]
fn source_options_are_applied_without_touching_the_shared_tree() {
    let repo = kustomize_repo();
    let (r, d) = renderer_with_tools();
    let opts = KustomizeSource {
        name_prefix: Some("edge-".into()),
        name_suffix: Some("-v2".into()),
        images: Some(vec![
            "registry.example.com/payments/api=registry.example.com/payments/api:2.0.0".into(),
        ]),
        common_labels: Some([("team".to_owned(), "payments".to_owned())].into()),
        common_annotations: Some([("owner".to_owned(), "sre".to_owned())].into()),
        namespace: Some("edge".into()),
        replicas: Some(vec![KustomizeReplica {
            name: "api".into(),
            count: serde_json::json!(5),
        }]),
        patches: Some(vec![KustomizePatch {
            patch: Some(
                "- op: add\n  path: /metadata/annotations/patched\n  value: \"yes\"\n".into(),
            ),
            target: Some(KustomizeSelector {
                kind: Some("Service".into()),
                ..Default::default()
            }),
            ..Default::default()
        }]),
        components: Some(vec!["../../components/monitoring".into()]),
        ..Default::default()
    };
    let s = ApplicationSource {
        kustomize: Some(opts),
        ..source(&repo.url(), "overlays/prod", "main")
    };
    let out = r.render(&request(vec![s])).unwrap();
    let mut k = keys(&out);
    k.sort();
    assert_eq!(
        k,
        [
            "/Service/edge/edge-api-v2",
            "apps/Deployment/edge/edge-api-v2"
        ]
    );
    let deploy = out
        .manifests
        .iter()
        .find(|m| m.object["kind"] == "Deployment")
        .unwrap();
    assert_eq!(deploy.object["spec"]["replicas"], 5);
    assert_eq!(deploy.object["metadata"]["labels"]["team"], "payments");
    assert_eq!(deploy.object["metadata"]["annotations"]["owner"], "sre");
    assert_eq!(
        deploy.object["metadata"]["annotations"]["monitoring"],
        "enabled"
    );
    assert_eq!(
        deploy.object["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example.com/payments/api:2.0.0"
    );
    let svc = out
        .manifests
        .iter()
        .find(|m| m.object["kind"] == "Service")
        .unwrap();
    assert_eq!(svc.object["metadata"]["annotations"]["patched"], "yes");

    // The per-commit tree still holds the kustomization as committed.
    let trees = d.path().join("git/trees");
    let repo_dir = std::fs::read_dir(&trees)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let commit_dir = std::fs::read_dir(&repo_dir)
        .unwrap()
        .flatten()
        .find(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .unwrap()
        .path();
    let k = std::fs::read_to_string(commit_dir.join("overlays/prod/kustomization.yaml")).unwrap();
    assert!(
        k.starts_with("resources:\n- ../../base\nnamePrefix: prod-\n"),
        "{k}"
    );
    // And a plain render of the same overlay is unaffected.
    let plain = r
        .render(&request(vec![source(&repo.url(), "overlays/prod", "main")]))
        .unwrap();
    assert!(keys(&plain).contains(&"apps/Deployment//prod-api".to_owned()));
}

#[test]
fn resources_outside_the_repository_are_refused() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/kustomization.yaml", "resources:\n- ../base\n"),
            (
                "base/kustomization.yaml",
                "resources:\n- ../../../../../../../etc\n",
            ),
        ],
        "escape",
    );
    let (r, _d) = renderer_with_tools();
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::PathOutsideRepository { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "base/kustomization.yaml: resources: ../../../../../../../etc resolves outside the repository root"
    );
}

#[test]
fn a_failing_build_reports_kustomize_stderr() {
    let repo = GitRepo::new();
    repo.commit(
        &[("app/kustomization.yaml", "resources:\n- missing.yaml\n")],
        "broken",
    );
    let (r, _d) = renderer_with_tools();
    let err = r
        .render(&request(vec![source(&repo.url(), "app", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::RenderFailed { .. }), "{err}");
    assert!(err.to_string().contains("missing.yaml"), "{err}");
}

#[test]
fn a_render_over_the_time_limit_is_stopped() {
    let repo = kustomize_repo();
    // No kustomize process starts, reads a tree and prints in a millisecond.
    let limits = Limits::default().render_timeout(std::time::Duration::from_millis(1));
    let (r, _d) = renderer_with_tools_and(limits);
    let err = r
        .render(&request(vec![source(&repo.url(), "overlays/prod", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::RenderTimeout { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("kustomize build overlays/prod did not finish within"),
        "{err}"
    );
}

/// `ignoreMissingComponents`: a component that is not in the repository is skipped (and when
/// none is left, `kustomize edit add component` is not run at all); without it the render is
/// refused, naming the field.
#[test]
fn missing_components_are_skipped_only_when_asked() {
    let repo = kustomize_repo();
    let (r, _d) = renderer_with_tools();
    let with = |ignore: bool| ApplicationSource {
        kustomize: Some(KustomizeSource {
            components: Some(vec!["../../components/absent".into()]),
            ignore_missing_components: Some(ignore),
            ..Default::default()
        }),
        ..source(&repo.url(), "overlays/prod", "main")
    };
    let out = r.render(&request(vec![with(true)])).unwrap();
    let mut k = keys(&out);
    k.sort();
    assert_eq!(k, ["/Service//prod-api", "apps/Deployment//prod-api"]);
    let err = r.render(&request(vec![with(false)])).unwrap_err();
    assert!(
        matches!(&err, Error::PathNotFound { field, .. } if field == "spec.source.kustomize.components"),
        "{err:?}"
    );
}

/// argocd-cm's `kustomize.buildOptions` reach `kustomize build` (they were passed through to the
/// API but never applied): `--load-restrictor LoadRestrictionsNone` lets a kustomization read a
/// file of the repository above its own directory, and a change of options renders again (part
/// of the cache key). Options that would run programs are refused naming the key.
#[test]
fn build_options_from_argocd_cm_are_applied_and_bounded() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("shared/cm.yaml", configmap("shared", "k: v")),
            (
                "app/kustomization.yaml",
                "resources:\n- ../shared/cm.yaml\n".to_owned(),
            ),
        ],
        "a file above the kustomization",
    );
    let (r, _d) = renderer_with_tools();
    let req = request(vec![source(&repo.url(), "app", "main")]);
    let err = chain(&r.render(&req).unwrap_err());
    assert!(
        err.contains("security") || err.contains("not in or below"),
        "{err}"
    );

    r.set_kustomize_build_options(Some("--load-restrictor LoadRestrictionsNone"));
    let out = r.render(&req).unwrap();
    assert_eq!(keys(&out), ["/ConfigMap//shared"]);

    r.set_kustomize_build_options(Some("--enable-helm --enable-exec"));
    let err = r.render(&req).unwrap_err().to_string();
    assert!(err.contains("setting kustomize.buildOptions"), "{err}");
}
