//! Helm charts rendered by the real helm binary (built by `scripts/testenv build`).

use plumb_model::application::{ApplicationSource, HelmFileParameter, HelmParameter, HelmSource};
use plumb_source::{Config, Error, Limits, Renderer, SourceType, Tools};
use plumb_testenv::git::GitRepo;

use crate::support::*;

const CHART: &str = "apiVersion: v2\nname: api\nversion: 0.3.0\nappVersion: \"1.4.2\"\ndependencies:\n- name: cache\n  version: 0.1.0\n  repository: file://./charts/cache\n  condition: cache.enabled\n";
const VALUES: &str = "env: dev\nreplicas: 1\nimage:\n  repository: registry.example.com/payments/api\n  tag: \"1.0.0\"\nversion: \"0\"\ncache:\n  enabled: true\n";
const DEPLOYMENT_TPL: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-api
  namespace: {{ .Release.Namespace }}
  labels:
    env: {{ .Values.env | quote }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: api
        image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
"#;
const CONFIGMAP_TPL: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  version: {{ .Values.version | quote }}\n  versionType: {{ kindOf .Values.version | quote }}\n  {{- with .Values.motd }}\n  motd: {{ . | quote }}\n  {{- end }}\n";
const HOOK_TPL: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}-migrate\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade\n    helm.sh/hook-delete-policy: before-hook-creation\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: migrate\n        image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n";
const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: limits.payments.example.com\nspec:\n  group: payments.example.com\n  names:\n    kind: Limit\n    plural: limits\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n";

fn chart_repo() -> GitRepo {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("charts/api/Chart.yaml", CHART),
            ("charts/api/values.yaml", VALUES),
            ("charts/api/values-prod.yaml", "env: prod\nreplicas: 3\n"),
            ("charts/api/templates/deployment.yaml", DEPLOYMENT_TPL),
            ("charts/api/templates/configmap.yaml", CONFIGMAP_TPL),
            ("charts/api/templates/migrate-job.yaml", HOOK_TPL),
            ("charts/api/crds/limits.yaml", CRD),
            (
                "charts/api/charts/cache/Chart.yaml",
                "apiVersion: v2\nname: cache\nversion: 0.1.0\n",
            ),
            (
                "charts/api/charts/cache/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cache\n",
            ),
            ("envs/prod/image.yaml", "image:\n  tag: \"1.4.2\"\n"),
            ("envs/prod/motd.txt", "welcome to prod"),
        ],
        "chart",
    );
    repo
}

fn helm_source(url: &str, helm: HelmSource) -> ApplicationSource {
    ApplicationSource {
        helm: Some(helm),
        ..source(url, "charts/api", "main")
    }
}

#[test]
fn chart_with_vendored_dependency_value_files_and_parameters() {
    let repo = chart_repo();
    let (r, _d) = renderer_with_tools();
    let helm = HelmSource {
        value_files: Some(vec![
            "values-prod.yaml".into(),
            "/envs/prod/image.yaml".into(),
        ]),
        parameters: Some(vec![
            HelmParameter {
                name: Some("version".into()),
                value: Some("1.10".into()),
                force_string: Some(true),
            },
            HelmParameter {
                name: Some("replicas".into()),
                value: Some("4".into()),
                force_string: None,
            },
        ]),
        file_parameters: Some(vec![HelmFileParameter {
            name: Some("motd".into()),
            path: Some("../../envs/prod/motd.txt".into()),
        }]),
        ..Default::default()
    };
    let out = r
        .render(&request(vec![helm_source(&repo.url(), helm)]))
        .unwrap();
    assert_eq!(out.sources[0].source_type, Some(SourceType::Helm));
    let mut k = keys(&out);
    k.sort();
    assert_eq!(
        k,
        [
            "/ConfigMap//payments-cache",
            "/ConfigMap//payments-settings",
            "apiextensions.k8s.io/CustomResourceDefinition//limits.payments.example.com",
            "apps/Deployment/payments/payments-api",
            "batch/Job//payments-migrate",
        ]
    );
    let find = |kind: &str, name: &str| {
        out.manifests
            .iter()
            .find(|m| m.object["kind"] == kind && m.object["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{kind} {name} missing"))
    };
    let deploy = find("Deployment", "payments-api");
    assert_eq!(
        deploy.object["spec"]["replicas"], 4,
        "--set beats value files"
    );
    assert_eq!(deploy.object["metadata"]["labels"]["env"], "prod");
    assert_eq!(
        deploy.object["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example.com/payments/api:1.4.2"
    );
    assert_eq!(deploy.file, "charts/api/templates/deployment.yaml");
    let cm = find("ConfigMap", "payments-settings");
    assert_eq!(cm.object["data"]["version"], "1.10");
    assert_eq!(cm.object["data"]["versionType"], "string");
    assert_eq!(cm.object["data"]["motd"], "welcome to prod");
    let hook = find("Job", "payments-migrate");
    assert_eq!(
        hook.object["metadata"]["annotations"]["helm.sh/hook"],
        "pre-install,pre-upgrade"
    );
    assert_eq!(
        find("ConfigMap", "payments-cache").file,
        "charts/api/charts/cache/templates/cm.yaml"
    );
}

#[test]
fn inline_values_release_name_and_skip_crds() {
    let repo = chart_repo();
    let (r, _d) = renderer_with_tools();
    let helm = HelmSource {
        values: Some("replicas: 2\n".into()),
        values_object: Some(serde_json::json!({"replicas": 7, "cache": {"enabled": false}})),
        release_name: Some("checkout".into()),
        namespace: Some("shop".into()),
        skip_crds: Some(true),
        ..Default::default()
    };
    let out = r
        .render(&request(vec![helm_source(&repo.url(), helm)]))
        .unwrap();
    let mut k = keys(&out);
    k.sort();
    assert_eq!(
        k,
        [
            "/ConfigMap//checkout-settings",
            "apps/Deployment/shop/checkout-api",
            "batch/Job//checkout-migrate"
        ]
    );
    let deploy = out
        .manifests
        .iter()
        .find(|m| m.object["kind"] == "Deployment")
        .unwrap();
    assert_eq!(
        deploy.object["spec"]["replicas"], 7,
        "valuesObject wins over values"
    );
}

#[test]
fn value_files_missing_outside_and_from_another_source() {
    let repo = chart_repo();
    let values_repo = GitRepo::named("values");
    values_repo.commit(
        &[("payments/prod.yaml", "replicas: 9\nenv: from-ref\n")],
        "values",
    );
    let (r, _d) = renderer_with_tools();

    let missing = HelmSource {
        value_files: Some(vec!["nope.yaml".into()]),
        ..Default::default()
    };
    let err = r
        .render(&request(vec![helm_source(&repo.url(), missing.clone())]))
        .unwrap_err();
    assert!(matches!(err, Error::PathNotFound { .. }), "{err}");
    let ignored = HelmSource {
        ignore_missing_value_files: Some(true),
        ..missing
    };
    r.render(&request(vec![helm_source(&repo.url(), ignored)]))
        .unwrap();

    let outside = HelmSource {
        value_files: Some(vec!["../../../../../../etc/passwd".into()]),
        ..Default::default()
    };
    let err = r
        .render(&request(vec![helm_source(&repo.url(), outside)]))
        .unwrap_err();
    assert!(matches!(err, Error::PathOutsideRepository { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("spec.source.helm.valueFiles: ../../../../../../etc/passwd"),
        "{err}"
    );

    // Multi-source: the chart takes a value file from the `values` ref source.
    let chart = helm_source(
        &repo.url(),
        HelmSource {
            value_files: Some(vec!["$values/payments/prod.yaml".into()]),
            ..Default::default()
        },
    );
    let values_src = ApplicationSource {
        reference: Some("values".into()),
        ..source(&values_repo.url(), "", "main")
    };
    let out = r
        .render(&request(vec![chart.clone(), values_src.clone()]))
        .unwrap();
    assert_eq!(out.sources[1].source_type, None);
    let deploy = out
        .manifests
        .iter()
        .find(|m| m.object["kind"] == "Deployment")
        .unwrap();
    assert_eq!(deploy.object["spec"]["replicas"], 9);
    assert_eq!(deploy.object["metadata"]["labels"]["env"], "from-ref");
    // A change in the ref source re-renders even though the chart's commit is the same.
    values_repo.commit(&[("payments/prod.yaml", "replicas: 5\n")], "scale down");
    let again = r.render(&request(vec![chart.clone(), values_src])).unwrap();
    assert!(!again.sources[0].cache_hit);
    let escape = helm_source(
        &repo.url(),
        HelmSource {
            value_files: Some(vec!["$values/../../x.yaml".into()]),
            ..Default::default()
        },
    );
    let values_src = ApplicationSource {
        reference: Some("values".into()),
        ..source(&values_repo.url(), "", "main")
    };
    let err = r.render(&request(vec![escape, values_src])).unwrap_err();
    assert!(matches!(err, Error::PathOutsideRepository { .. }), "{err}");
}

#[test]
fn a_failing_template_reports_helm_stderr() {
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("chart/Chart.yaml", "apiVersion: v2\nname: broken\nversion: 0.1.0\n"),
            ("chart/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ required \"a name is required\" .Values.name }}\n"),
        ],
        "broken",
    );
    let (r, _d) = renderer_with_tools();
    let err = r
        .render(&request(vec![source(&repo.url(), "chart", "main")]))
        .unwrap_err();
    assert!(matches!(err, Error::RenderFailed { .. }), "{err}");
    assert!(err.to_string().contains("a name is required"), "{err}");
}

#[test]
fn a_missing_binary_and_a_huge_output_are_clear_errors() {
    let repo = chart_repo();
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools {
        helm: "/nonexistent/bin/helm".into(),
        kustomize: "kustomize".into(),
        worker: worker(),
    };
    let r = Renderer::new(Config::new(dir.path()).tools(tools)).unwrap();
    let err = r
        .render(&request(vec![source(&repo.url(), "charts/api", "main")]))
        .unwrap_err();
    assert!(
        matches!(err, Error::ToolMissing { tool: "helm", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("/nonexistent/bin/helm"), "{err}");

    let (r, _d) = renderer_with_tools_and(Limits::default().max_render_bytes(500));
    let err = r
        .render(&request(vec![source(&repo.url(), "charts/api", "main")]))
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
    assert!(
        err.to_string().contains("helm template charts/api"),
        "{err}"
    );
}
