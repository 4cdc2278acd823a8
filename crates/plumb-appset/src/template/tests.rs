//! Argo CD's documented examples (docs/operator-manual/applicationset/*.md,
//! applicationset/examples/) rendered in both template modes.

use plumb_model::applicationset::ApplicationSet;
use serde_json::{Value, json};

use super::*;

fn set(yaml: &str) -> ApplicationSet {
    let docs = plumb_yaml::read_documents(yaml, "test").expect("yaml");
    serde_json::from_value(docs[0].value.clone()).expect("an ApplicationSet")
}

fn params(v: Value) -> ParamSet {
    ParamSet {
        params: v.as_object().cloned().unwrap_or_default(),
        template: None,
    }
}

fn render(set: &ApplicationSet, p: Value) -> Value {
    let app = render_application(set, &params(p)).expect("renders");
    serde_json::to_value(app).expect("json")
}

const LIST: &str = r#"
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: guestbook
  namespace: argocd
spec:
  generators:
  - list:
      elements:
      - cluster: engineering-dev
        url: https://1.2.3.4
  template:
    metadata:
      name: '{{cluster}}-guestbook'
      annotations:
        '{{cluster}}.example.com/owner': 'team-{{ cluster }}'
    spec:
      project: "my-project"
      source:
        repoURL: https://github.com/infra-team/cluster-deployments.git
        targetRevision: HEAD
        path: guestbook/{{cluster}}
        helm:
          valuesObject:
            cluster: '{{cluster}}'
            '{{cluster}}': 1
      destination:
        server: '{{url}}'
        namespace: guestbook
"#;

#[test]
fn list_example_renders_every_string_and_map_key() {
    let app = render(
        &set(LIST),
        json!({"cluster": "engineering-dev", "url": "https://1.2.3.4"}),
    );
    assert_eq!(
        app,
        json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "engineering-dev-guestbook", "namespace": "argocd",
                         "annotations": {"engineering-dev.example.com/owner": "team-engineering-dev"},
                         "finalizers": [RESOURCES_FINALIZER]},
            "spec": {"project": "my-project",
                     "source": {"repoURL": "https://github.com/infra-team/cluster-deployments.git",
                                "targetRevision": "HEAD", "path": "guestbook/engineering-dev",
                                "helm": {"valuesObject": {"cluster": "engineering-dev", "engineering-dev": 1}}},
                     "destination": {"server": "https://1.2.3.4", "namespace": "guestbook"}}
        })
    );
}

#[test]
fn the_namespace_is_always_the_sets() {
    let mut s = set(LIST);
    s.spec.template.metadata.namespace = Some("elsewhere".to_string());
    let app = render(&s, json!({"cluster": "a", "url": "https://x"}));
    assert_eq!(app["metadata"]["namespace"], "argocd");
}

#[test]
fn the_generators_override_is_merged_over_the_template() {
    // applicationset/examples/template-override/template-overrides-example.yaml
    let s = set(LIST);
    let over: plumb_model::applicationset::ApplicationSetTemplate = serde_json::from_value(json!({
        "metadata": {},
        "spec": {"project": "default", "source": {"path": "{{cluster}}-override", "targetRevision": "HEAD",
                  "repoURL": "https://github.com/infra-team/cluster-deployments.git"},
                 "destination": {}}
    }))
    .expect("template");
    let mut p = params(json!({"cluster": "engineering-dev", "url": "https://1.2.3.4"}));
    p.template = Some(over);
    let app = serde_json::to_value(render_application(&s, &p).expect("renders")).expect("json");
    assert_eq!(app["spec"]["source"]["path"], "engineering-dev-override");
    assert_eq!(app["spec"]["project"], "default");
    assert_eq!(app["spec"]["destination"]["server"], "https://1.2.3.4");
    assert_eq!(
        app["spec"]["source"]["helm"]["valuesObject"]["cluster"],
        "engineering-dev"
    );
}

#[test]
fn finalizer_rules_follow_preserve_resources_on_deletion_and_the_templates_own() {
    let p = json!({"cluster": "a", "url": "https://x"});
    let mut s = set(LIST);
    s.spec.sync_policy = serde_json::from_value(json!({"preserveResourcesOnDeletion": true})).ok();
    assert_eq!(render(&s, p.clone())["metadata"].get("finalizers"), None);
    let mut s = set(LIST);
    s.spec.template.metadata.finalizers = Some(vec!["example.com/{{cluster}}".to_string()]);
    assert_eq!(
        render(&s, p)["metadata"]["finalizers"],
        json!(["example.com/a"])
    );
}

#[test]
fn empty_parameters_render_nothing_as_in_argo() {
    let err = render_application(&set(LIST), &params(json!({}))).expect_err("unrendered name");
    assert_eq!(err.field, "metadata.name");
    assert!(err.to_string().contains("{{cluster}}-guestbook"), "{err}");
}

#[test]
fn unknown_and_non_string_parameters_stay_as_they_are() {
    let mut s = set(LIST);
    s.spec.template.metadata.labels =
        Some([("n".to_string(), "{{count}}-{{nope}}".to_string())].into());
    let app = render(&s, json!({"cluster": "a", "url": "https://x", "count": 3}));
    assert_eq!(app["metadata"]["labels"]["n"], "{{count}}-{{nope}}");
}

#[test]
fn errors_name_the_set_the_parameter_set_and_the_field() {
    let cases = [
        (
            json!({"cluster": "Bad_Name", "url": "https://x"}),
            "metadata.name",
            "DNS subdomain",
        ),
        (
            json!({"cluster": "a", "url": ""}),
            "spec.destination",
            "neither server nor name",
        ),
        (
            json!({"cluster": "a}} {{b", "url": "https://x"}),
            "metadata.name",
            "DNS subdomain",
        ),
    ];
    for (p, field, message) in cases {
        let err = render_application(&set(LIST), &params(p))
            .expect_err("invalid")
            .at(4);
        assert_eq!(err.field, field);
        let text = err.to_string();
        assert!(
            text.starts_with("ApplicationSet \"guestbook\", parameter set 4, "),
            "{text}"
        );
        assert!(text.contains(message), "{text}");
    }
    let mut s = set(LIST);
    s.spec.template.spec["project"] = json!("{{project}}");
    let err = render_application(
        &s,
        &params(json!({"cluster": "a", "url": "https://x", "project": ""})),
    )
    .expect_err("no project");
    assert_eq!(err.field, "spec.project");
}

#[test]
fn an_unclosed_tag_names_its_field() {
    let mut s = set(LIST);
    s.spec.template.spec["source"]["path"] = json!("{{cluster}}/{{oops");
    let err = render_application(&s, &params(json!({"cluster": "a", "url": "https://x"})))
        .expect_err("unclosed");
    assert_eq!(err.field, "spec.source.path");
    assert!(err.to_string().contains("Cannot find end tag"), "{err}");
}

#[test]
fn a_parameter_fanning_out_past_the_bound_is_refused() {
    let mut s = set(LIST);
    s.spec.template.spec["info"] = Value::Array(
        (0..40)
            .map(|_| json!({"name": "x", "value": "{{big}}"}))
            .collect(),
    );
    let big = "x".repeat(100 * 1024);
    let err = render_application(
        &s,
        &params(json!({"cluster": "a", "url": "https://x", "big": big})),
    )
    .expect_err("too large");
    assert!(matches!(err.kind, TemplateErrorKind::TooLarge), "{err}");
}

#[test]
fn template_patch_in_fasttemplate_mode_is_substituted_too() {
    // Argo renders templatePatch with the set's mode (its docs say Go templates only; the code
    // does not check).
    let mut s = set(LIST);
    s.spec.template_patch = Some(
        "spec:\n  project: evil\n  source:\n    helm: {valueFiles: ['values-{{cluster}}.yaml']}\n  info: [{name: a, value: b}]\nmetadata:\n  annotations: null\n".to_string(),
    );
    let app = render(&s, json!({"cluster": "dev", "url": "https://x"}));
    assert_eq!(
        app["spec"]["project"], "my-project",
        "a patch cannot change the project"
    );
    assert_eq!(
        app["spec"]["source"]["helm"],
        json!({"valueFiles": ["values-dev.yaml"],
        "valuesObject": {"cluster": "dev", "dev": 1}})
    );
    assert_eq!(app["spec"]["info"], json!([{"name": "a", "value": "b"}]));
    assert_eq!(app["metadata"].get("annotations"), None);
}

#[test]
fn template_patch_must_be_an_application_object() {
    for (patch, message) in [
        ("- a\n- b\n", "expected an object"),
        ("spec:\n  destination: 5\n", "invalid templatePatch"),
        ("{not json", "invalid templatePatch"),
        ("spec: [unclosed", "invalid templatePatch"),
    ] {
        let mut s = set(LIST);
        s.spec.template_patch = Some(patch.to_string());
        let err = render_application(&s, &params(json!({"cluster": "a", "url": "https://x"})))
            .expect_err(patch);
        assert_eq!(err.field, "templatePatch");
        assert!(err.to_string().contains(message), "{patch}: {err}");
    }
}

#[test]
fn template_patch_directives_replace_and_delete_maps() {
    let mut s = set(LIST);
    s.spec.template_patch = Some(
        r#"{"spec": {"source": {"helm": {"$patch": "replace", "releaseName": "r"}}, "syncPolicy": {"$patch": "delete"}}}"#
            .to_string(),
    );
    let app = render(&s, json!({"cluster": "a", "url": "https://x"}));
    assert_eq!(app["spec"]["source"]["helm"], json!({"releaseName": "r"}));
}

const GO: &str = r#"
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: cluster-addons
  namespace: argocd
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators: []
  template:
    metadata:
      name: '{{.path.basename}}-{{ .name | normalize }}'
      labels:
        '{{ index .path.segments 0 }}': '{{ upper .env }}'
    spec:
      project: '{{ default "default" .project }}'
      source:
        repoURL: https://github.com/argoproj/argo-cd.git
        targetRevision: HEAD
        path: '{{.path.path}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{.path.basename}}'
"#;

fn go_params() -> Value {
    json!({
        "name": "In_Cluster",
        "env": "dev",
        "project": "",
        "path": {"path": "applicationset/examples/git-generator-directory/cluster-addons/argo-workflows",
                 "basename": "argo-workflows",
                 "segments": ["applicationset", "examples", "git-generator-directory", "cluster-addons", "argo-workflows"]}
    })
}

#[test]
fn go_templates_read_nested_parameters_and_sprig() {
    let app = render(&set(GO), go_params());
    assert_eq!(app["metadata"]["name"], "argo-workflows-in-cluster");
    assert_eq!(app["metadata"]["labels"], json!({"applicationset": "DEV"}));
    assert_eq!(app["spec"]["project"], "default");
    assert_eq!(app["spec"]["destination"]["namespace"], "argo-workflows");
}

#[test]
fn missingkey_error_names_the_field() {
    let mut s = set(GO);
    s.spec.template.spec["source"]["targetRevision"] = json!("{{.revision}}");
    let err = render_application(&s, &params(go_params())).expect_err("missing key");
    assert_eq!(err.field, "spec.source.targetRevision");
    assert!(
        err.to_string()
            .contains("failed to execute go template {{.revision}}"),
        "{err}"
    );
    // Without the option Go prints "<no value>" and the Application still renders.
    s.spec.go_template_options = None;
    let app = render(&s, go_params());
    assert_eq!(app["spec"]["source"]["targetRevision"], "<no value>");
}

#[test]
fn functions_that_read_the_environment_or_network_are_not_there() {
    for f in [
        "env \"HOME\"",
        "expandenv \"$HOME\"",
        "getHostByName \"localhost\"",
    ] {
        let mut s = set(GO);
        s.spec.template.spec["source"]["targetRevision"] = json!(format!("{{{{ {f} }}}}"));
        let err = render_application(&s, &params(go_params())).expect_err(f);
        assert!(
            err.to_string().contains("failed to parse template"),
            "{f}: {err}"
        );
    }
}

#[test]
fn a_template_that_loops_is_stopped() {
    let mut s = set(GO);
    s.spec.template.spec["source"]["targetRevision"] =
        json!("{{ range until 100000 }}{{ range until 100000 }}x{{ end }}{{ end }}");
    let err = render_application(&s, &params(go_params())).expect_err("bounded");
    assert_eq!(err.field, "spec.source.targetRevision");
}

#[test]
fn go_template_patch_from_the_docs() {
    // docs/operator-manual/applicationset/Template.md, "Template Patch".
    let mut s = set(GO);
    s.spec.template_patch = Some(
        "spec:\n  source:\n    helm:\n      valueFiles:\n      {{- range $valueFile := .valueFiles }}\n        - {{ $valueFile }}\n      {{- end }}\n{{- if .autoSync }}\n  syncPolicy:\n    automated:\n      prune: {{ .prune }}\n{{- end }}\n"
            .to_string(),
    );
    let mut p = go_params();
    p["autoSync"] = json!(true);
    p["prune"] = json!(true);
    p["valueFiles"] = json!(["values.large.yaml", "values.debug.yaml"]);
    let app = render(&s, p.clone());
    assert_eq!(
        app["spec"]["source"]["helm"],
        json!({"valueFiles": ["values.large.yaml", "values.debug.yaml"]})
    );
    assert_eq!(
        app["spec"]["syncPolicy"],
        json!({"automated": {"prune": true}})
    );
    p["autoSync"] = json!(false);
    assert_eq!(render(&s, p)["spec"].get("syncPolicy"), None);
}
