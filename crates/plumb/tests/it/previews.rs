//! Pull-request previews against the real control plane: `plumb app diff --revision` for a
//! branch (or a commit) not merged yet, `app diff --local` / `app manifests --local` for a
//! working tree on this machine (directory, Helm and Kustomize sources, rendered with the
//! Application's settings), `app sync --local` refused on an automated Application as Argo
//! refuses it, and an Application rendered by a config management plugin through `app
//! manifests`. `sync --local` itself: `local_sync`.

use std::process::{Command, Output, Stdio};

use plumb_testenv::git::GitRepo;
use serde_json::json;

use crate::app::{control_namespace, env, kubectl_apply, text};

const CONFIGMAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: payments-api\ndata:\n  LOG_LEVEL: @@\n";

fn configmap(level: &str) -> String {
    CONFIGMAP.replace("@@", level)
}

fn plumb(
    ns: &str,
    cache: &std::path::Path,
    args: &[&str],
    plugins: Option<&std::path::Path>,
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_plumb"));
    cmd.arg("app")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("PLUMB_CACHE_DIR", cache)
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("KUBECTL_EXTERNAL_DIFF")
        .env_remove("PLUMB_PLUGIN_DIR")
        .stdin(Stdio::null());
    if let Some(dir) = plugins {
        cmd.env("PLUMB_PLUGIN_DIR", dir);
    }
    cmd.output().unwrap()
}

fn application(ns: &str, dest: &str, name: &str, source: serde_json::Value) {
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"project": "default", "source": source,
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}}
    }));
}

#[test]
fn diff_previews_an_unmerged_branch_a_commit_and_a_local_tree() {
    let ns = control_namespace("previews");
    let ns = ns.name();
    let dest = env().namespace("previews-dest");
    let cache = tempfile::tempdir().unwrap();
    let repo = GitRepo::named("payments");
    repo.commit(&[("k8s/configmap.yaml", configmap("info"))], "main");
    let main = repo.git(&["rev-parse", "--abbrev-ref", "HEAD"]);
    repo.branch("feature/debug");
    let feature = repo.commit(&[("k8s/configmap.yaml", configmap("debug"))], "debug logs");
    repo.checkout(&main);
    application(
        ns,
        dest.name(),
        "payments-preview",
        json!({"repoURL": repo.url(), "path": "k8s", "targetRevision": main}),
    );
    let run = |args: &[&str]| plumb(ns, cache.path(), args, None);

    let merged = run(&["diff", "payments-preview"]);
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged.stderr));
    assert!(
        text(&merged.stdout).contains("LOG_LEVEL: info"),
        "{}",
        text(&merged.stdout)
    );

    // The branch is not merged: only --revision shows its change, by name and by commit.
    for rev in ["feature/debug", feature.as_str()] {
        let out = run(&["diff", "payments-preview", "--revision", rev]);
        assert_eq!(out.status.code(), Some(1), "{rev}: {}", text(&out.stderr));
        let shown = text(&out.stdout);
        assert!(shown.contains("LOG_LEVEL: debug"), "{rev}: {shown}");
        assert!(!shown.contains("LOG_LEVEL: info"), "{rev}: {shown}");
        assert!(
            shown.contains(&format!(
                "===== /ConfigMap {}/payments-api ======",
                dest.name()
            )),
            "{shown}"
        );
    }
    let out = run(&["diff", "payments-preview", "--revision", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));

    // A working tree on this machine, with the Application's path inside a repository root.
    let local = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(local.path().join("k8s")).unwrap();
    std::fs::write(local.path().join("k8s/configmap.yaml"), configmap("trace")).unwrap();
    let dir = local.path().join("k8s");
    let dir = dir.to_str().unwrap();
    let root = local.path().to_str().unwrap();
    let out = run(&[
        "diff",
        "payments-preview",
        "--local",
        dir,
        "--local-repo-root",
        root,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("LOG_LEVEL: trace"),
        "{}",
        text(&out.stdout)
    );
    let out = run(&["manifests", "payments-preview", "--local", dir]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("LOG_LEVEL: trace"),
        "{}",
        text(&out.stdout)
    );
    // Once live matches the local tree, the diff is empty and exits 0.
    let applied = plumb_yaml::read_documents(&configmap("trace"), "cm").unwrap();
    let mut live = applied[0].value.clone();
    live["metadata"]["namespace"] = json!(dest.name());
    live["metadata"]["annotations"] = json!({
        "argocd.argoproj.io/tracking-id": format!("payments-preview:/ConfigMap:{}/payments-api", dest.name())
    });
    kubectl_apply(&live);
    let out = run(&["diff", "payments-preview", "--local", dir]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), String::new()),
        "{}",
        text(&out.stderr)
    );

    // Links out of the local tree and a --local outside --local-repo-root: the hostile suite
    // (repo_reads::local_trees_cannot_reach_outside_themselves).

    // Argo's rule: no local sync of an automated Application (except a dry run).
    let out = crate::app::kubectl(&[
        "-n",
        ns,
        "patch",
        "applications.argoproj.io",
        "payments-preview",
        "--type=merge",
        "-p",
        r#"{"spec":{"syncPolicy":{"automated":{}}}}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(&["sync", "payments-preview", "--local", dir]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "Cannot use local sync when Automatic Sync Policy is enabled except with --dry-run"
        ),
        "{}",
        text(&out.stderr)
    );
    assert!(crate::app::app_json(ns, "payments-preview").unwrap()["operation"].is_null());
}

/// `--local` renders the working tree with the Application's own tool settings: Helm's release
/// name and values, Kustomize's name prefix and images, as they would render from Git.
#[test]
fn local_helm_and_kustomize_trees_render_with_the_applications_settings() {
    let ns = control_namespace("previews-tools");
    let ns = ns.name();
    let dest = env().namespace("previews-tools-dest");
    let cache = tempfile::tempdir().unwrap();
    let repo = GitRepo::named("previews-tools");
    repo.commit(
        &[
            ("chart/Chart.yaml", "apiVersion: v2\nname: web\nversion: 1.0.0\n".to_string()),
            ("chart/values.yaml", "level: info\n".to_string()),
            (
                "chart/templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  from: git\n".to_string(),
            ),
            ("kust/kustomization.yaml", "resources:\n- cm.yaml\n".to_string()),
            ("kust/cm.yaml", configmap("git")),
        ],
        "chart and kustomization",
    );
    application(
        ns,
        dest.name(),
        "previews-helm-local",
        json!({"repoURL": repo.url(), "path": "chart",
               "helm": {"releaseName": "checkout", "valuesObject": {"level": "warn"}}}),
    );
    application(
        ns,
        dest.name(),
        "previews-kustomize-local",
        json!({"repoURL": repo.url(), "path": "kust",
               "kustomize": {"namePrefix": "edge-", "commonLabels": {"tier": "front"}}}),
    );
    let run = |args: &[&str]| plumb(ns, cache.path(), args, None);

    let local = tempfile::tempdir().unwrap();
    let chart = local.path().join("chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 1.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "level: info\n").unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  from: local\n  LOG_LEVEL: {{ .Values.level }}\n",
    )
    .unwrap();
    let out = run(&[
        "manifests",
        "previews-helm-local",
        "--local",
        chart.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("name: checkout-cm"), "{shown}");
    assert!(shown.contains("from: local"), "{shown}");
    assert!(shown.contains("LOG_LEVEL: warn"), "{shown}");
    assert!(!shown.contains("from: git"), "{shown}");
    let out = run(&[
        "diff",
        "previews-helm-local",
        "--local",
        chart.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!(
            "===== /ConfigMap {}/checkout-cm ======",
            dest.name()
        )),
        "{}",
        text(&out.stdout)
    );

    let kust = local.path().join("kust");
    std::fs::create_dir_all(&kust).unwrap();
    std::fs::write(kust.join("kustomization.yaml"), "resources:\n- cm.yaml\n").unwrap();
    std::fs::write(kust.join("cm.yaml"), configmap("local")).unwrap();
    let out = run(&[
        "manifests",
        "previews-kustomize-local",
        "--local",
        kust.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("name: edge-payments-api"), "{shown}");
    assert!(shown.contains("tier: front"), "{shown}");
    assert!(shown.contains("LOG_LEVEL: local"), "{shown}");
    assert!(!shown.contains("LOG_LEVEL: git"), "{shown}");
}

#[test]
fn an_application_rendered_by_a_plugin_shows_in_app_manifests() {
    let ns = control_namespace("plugin-app");
    let ns = ns.name();
    let dest = env().namespace("plugin-app-dest");
    let cache = tempfile::tempdir().unwrap();
    let plugins = tempfile::tempdir().unwrap();
    std::fs::write(
        plugins.path().join("cm-gen.yaml"),
        r#"apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: cm-gen
spec:
  version: v1.0
  generate:
    command: [sh, -c]
    args:
    - |
      echo "apiVersion: v1"
      echo "kind: ConfigMap"
      echo "metadata: {name: ${ARGOCD_APP_NAME}-${PARAM_SUFFIX}}"
      echo "data: {color: '$(cat color.properties)', ns: '${ARGOCD_APP_NAMESPACE}'}"
  discover:
    fileName: "*.properties"
"#,
    )
    .unwrap();
    let repo = GitRepo::named("plugin-app");
    repo.commit(&[("app/color.properties", "blue")], "app");
    application(
        ns,
        dest.name(),
        "colors",
        json!({"repoURL": repo.url(), "path": "app",
               "plugin": {"name": "cm-gen-v1.0",
                          "parameters": [{"name": "suffix", "string": "config"}]}}),
    );
    let out = plumb(
        ns,
        cache.path(),
        &["manifests", "colors"],
        Some(plugins.path()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("name: colors-config"), "{shown}");
    assert!(shown.contains("color: blue"), "{shown}");
    assert!(shown.contains(&format!("ns: {}", dest.name())), "{shown}");
    // Without the plugin directory the error names what is missing.
    let out = plumb(ns, cache.path(), &["manifests", "colors"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("config management plugin cm-gen-v1.0"),
        "{}",
        text(&out.stderr)
    );
}
