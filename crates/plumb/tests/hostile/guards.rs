//! Guards on ignore rules judge what a rule selects, not how it is spelled: every way to
//! name a container image (or another sensitive field) is refused when the rule is loaded,
//! and whatever a rule selects on a real object is checked again before it is ignored.

use std::path::Path;
use std::process::{Command, Output};

fn plumb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .output()
        .expect("run plumb")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.to_string_lossy().into_owned()
}

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments-api
  namespace: payments
spec:
  replicas: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: payments-api
  template:
    metadata:
      labels:
        app.kubernetes.io/name: payments-api
    spec:
      containers:
      - name: api
        image: registry.example.com/payments/api:1.4.2
        securityContext:
          runAsNonRoot: true
          allowPrivilegeEscalation: false
"#;

const CLUSTER_ROLE: &str = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: payments-reader
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch"]
"#;

/// An Application whose one ignore rule is `rule` (YAML flow mapping body).
fn app(rule: &str) -> String {
    format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: payments
  namespace: argocd
spec:
  project: default
  destination:
    server: https://kubernetes.default.svc
    namespace: payments
  source:
    repoURL: https://git.example.com/payments.git
    path: deploy
  ignoreDifferences:
  - {rule}
"#
    )
}

/// `plumb diff` of `desired` against a live object changed by `change`, with one rule.
fn diff(desired: &str, change: (&str, &str), rule: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let d = write(dir.path(), "desired.yaml", desired);
    let live = desired.replace(change.0, change.1);
    assert_ne!(live, desired, "the change applies");
    let l = write(dir.path(), "live.yaml", &live);
    let a = write(dir.path(), "app.yaml", &app(rule));
    plumb(&[
        "diff",
        "--desired",
        &d,
        "--live",
        &l,
        "--ignore-differences",
        &a,
    ])
}

/// The rule is refused when loaded, naming the sensitive field.
fn assert_refused(out: &Output, field: &str) {
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}\nstderr: {err}",
        text(&out.stdout)
    );
    assert!(err.contains("would hide") && err.contains(field), "{err}");
}

const IMAGE_CHANGE: (&str, &str) = (
    "image: registry.example.com/payments/api:1.4.2",
    "image: evil.example.net/payments/api:1.4.2",
);

#[test]
fn image_spelled_by_string_concatenation() {
    let out = diff(
        DEPLOYMENT,
        IMAGE_CHANGE,
        r#"{group: apps, kind: Deployment, jqPathExpressions: ['.spec.template.spec.containers[] | .["ima" + "ge"]']}"#,
    );
    assert_refused(&out, "containers.*.image");
}

#[test]
fn image_through_getpath() {
    let out = diff(
        DEPLOYMENT,
        IMAGE_CHANGE,
        r#"{group: apps, kind: Deployment, jqPathExpressions: ['getpath(["spec","template","spec","containers",0,"image"])']}"#,
    );
    assert_refused(&out, "containers.*.image");
}

#[test]
fn image_through_to_entries() {
    let out = diff(
        DEPLOYMENT,
        IMAGE_CHANGE,
        r#"{group: apps, kind: Deployment, jqPathExpressions: ['.spec.template.spec.containers[] | .[(to_entries | map(select(.key | startswith("im"))) | .[0].key)]']}"#,
    );
    assert_refused(&out, "containers.*.image");
}

#[test]
fn image_through_recursive_descent() {
    let out = diff(
        DEPLOYMENT,
        IMAGE_CHANGE,
        r#"{group: apps, kind: Deployment, jqPathExpressions: ['.. | objects | select(has("name")) | .image']}"#,
    );
    assert_refused(&out, "containers.*.image");
}

#[test]
fn del_of_recursive_descent_hides_nothing() {
    // `del(..)` is no path expression: it would fail at run time (a no-op, as in Argo); its text
    // names `image`, so the cautious check refuses it first. Either way the change is not hidden.
    let out = diff(
        DEPLOYMENT,
        IMAGE_CHANGE,
        r#"{group: apps, kind: Deployment, jqPathExpressions: ['del(.. | .image?)']}"#,
    );
    let stdout = text(&out.stdout);
    match out.status.code() {
        Some(2) => assert_refused(&out, "image"),
        _ => {
            assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
            assert!(stdout.contains("evil.example.net"), "{stdout}");
        }
    }
}

#[test]
fn image_through_json_pointer_escapes_and_index_spellings() {
    for pointer in [
        "/spec/template/spec/containers/0/image",
        "/spec/template/spec/containers/00/image",
        "/spec/template/spec/containers/+0/image",
        "/spec/template/spec/containers/0",
        "/spec/template",
    ] {
        let out = diff(
            DEPLOYMENT,
            IMAGE_CHANGE,
            &format!("{{group: apps, kind: Deployment, jsonPointers: ['{pointer}']}}"),
        );
        assert_refused(&out, "image");
    }
    // `~1` and `~0` decode to `/` and `~`: these name other fields, which hide nothing.
    for pointer in [
        "/spec/template/spec/containers/0/ima~1ge",
        "/spec/template/spec/containers~10/image",
        "/spec/template/spec/containers/0/image~0",
    ] {
        let out = diff(
            DEPLOYMENT,
            IMAGE_CHANGE,
            &format!("{{group: apps, kind: Deployment, jsonPointers: ['{pointer}']}}"),
        );
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{pointer}: {stdout}{}",
            text(&out.stderr)
        );
        assert!(stdout.contains("evil.example.net"), "{pointer}: {stdout}");
    }
}

#[test]
fn security_context_variants() {
    for expr in [
        ".spec.template.spec.containers[0].securityContext",
        r#".spec.template.spec.containers[] | .securityContext | .["allowPrivilege" + "Escalation"]"#,
        r#".spec.template.spec | .["hostNet" + "work"]"#,
    ] {
        let out = diff(
            DEPLOYMENT,
            (
                "allowPrivilegeEscalation: false",
                "allowPrivilegeEscalation: true",
            ),
            &format!(
                "{{group: apps, kind: Deployment, jqPathExpressions: [{}]}}",
                serde_json::to_string(expr).unwrap()
            ),
        );
        assert_eq!(out.status.code(), Some(2), "{expr}: {}", text(&out.stdout));
        assert!(
            text(&out.stderr).contains("would hide"),
            "{expr}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn rbac_rules_variants() {
    for rule in [
        "{group: rbac.authorization.k8s.io, kind: ClusterRole, jsonPointers: ['/rules']}",
        "{group: rbac.authorization.k8s.io, kind: ClusterRole, jsonPointers: ['/rules/0/verbs']}",
        r#"{group: rbac.authorization.k8s.io, kind: ClusterRole, jqPathExpressions: ['.["ru" + "les"][]']}"#,
        r#"{group: "*", kind: "*", jqPathExpressions: ['.rules']}"#,
    ] {
        let out = diff(
            CLUSTER_ROLE,
            (r#"verbs: ["get", "list", "watch"]"#, r#"verbs: ["*"]"#),
            rule,
        );
        assert_eq!(out.status.code(), Some(2), "{rule}: {}", text(&out.stdout));
        assert!(
            text(&out.stderr).contains("would hide"),
            "{rule}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn lint_ignores_finds_every_refused_or_endless_rule() {
    let dir = tempfile::tempdir().unwrap();
    let settings = write(
        dir.path(),
        "argocd-cm.yaml",
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jqPathExpressions:
    - '.spec.template.spec.containers[] | .["ima" + "ge"]'
  resource.customizations.ignoreDifferences.batch_Job: |
    jqPathExpressions:
    - '.spec | select(def f: 1 + f; f)'
  resource.customizations.ignoreDifferences.apps_StatefulSet: |
    jsonPointers:
    - /spec/replicas
"#,
    );
    let out = plumb(&["admin", "lint-ignores", "--settings", &settings]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("sensitive:") && stdout.contains("containers.*.image"),
        "{stdout}"
    );
    assert!(
        stdout.contains("invalid:") && stdout.contains("recursed too deeply"),
        "{stdout}"
    );
}
