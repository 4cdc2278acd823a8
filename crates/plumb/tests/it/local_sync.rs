//! `plumb app sync NAME --local DIR` end to end: the real control plane, `plumb controller` as a
//! process, a Git repository for the Application and a working tree on this machine. The CLI
//! renders the working tree with the Application's settings into `operation.sync.manifests`;
//! the controller syncs exactly those (prune against them), records the sync in the history
//! without a revision (as Argo CD does: local manifests have none) and then compares with Git
//! again.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::app::{app_json, control_namespace, env, kubectl, kubectl_apply, text};

struct Controller(Child);

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn controller(ns: &str, cache: &std::path::Path) -> Controller {
    Controller(
        Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", ns, "--metrics-addr", "off"])
            .args(["--sync-wave-delay", "0"])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(cache)
            .arg("--helm")
            .arg(plumb_testenv::tools::helm())
            .arg("--kustomize")
            .arg(plumb_testenv::tools::kustomize())
            .env_remove("PLUMB_NAMESPACE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn plumb(ns: &str, cache: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .arg("app")
        .args(args)
        .arg("--kubeconfig")
        .arg(env().kubeconfig())
        .args(["-N", ns])
        .env("PLUMB_CACHE_DIR", cache)
        .env("PLUMB_HELM", plumb_testenv::tools::helm())
        .env("PLUMB_KUSTOMIZE", plumb_testenv::tools::kustomize())
        .env_remove("PLUMB_NAMESPACE")
        .env_remove("KUBECTL_EXTERNAL_DIFF")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn configmap(name: &str, level: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  LOG_LEVEL: {level}\n"
    )
}

fn live(ns: &str, name: &str) -> Option<Value> {
    let out = kubectl(&["-n", ns, "get", "configmap", name, "-o", "json"]);
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// Polls until `cond` holds for the Application (generous deadline, no timing assertion).
fn wait_app(ns: &str, name: &str, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    let mut last = Value::Null;
    while start.elapsed() < Duration::from_secs(180) {
        if let Some(a) = app_json(ns, name) {
            if cond(&a) {
                return a;
            }
            last = a;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!(
        "{name}: {what} not reached; last status:\n{:#}",
        last["status"]
    );
}

#[test]
fn sync_local_applies_the_working_tree_and_prunes_against_it() {
    let ns = control_namespace("local-sync");
    let ns = ns.name();
    let dest = env().namespace("local-sync-dest");
    let dest = dest.name();
    let cache = tempfile::tempdir().unwrap();
    let repo = GitRepo::named("local-sync");
    repo.commit(
        &[
            ("k8s/web.yaml", configmap("web", "info")),
            ("k8s/worker.yaml", configmap("worker", "info")),
        ],
        "web and worker",
    );
    let name = "local-sync-web";
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "k8s", "targetRevision": "HEAD"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}}
    }));
    let _ctl = controller(ns, &cache.path().join("controller"));
    let cli_cache = cache.path().join("cli");

    let out = plumb(ns, &cli_cache, &["sync", name, "--timeout", "150"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(live(dest, "worker").unwrap()["data"]["LOG_LEVEL"], "info");
    let git_revision = repo.head();

    // The working tree changes web, drops worker and adds jobs.
    let local = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(local.path().join("k8s")).unwrap();
    std::fs::write(local.path().join("k8s/web.yaml"), configmap("web", "debug")).unwrap();
    std::fs::write(
        local.path().join("k8s/jobs.yaml"),
        configmap("jobs", "trace"),
    )
    .unwrap();
    let dir = local.path().join("k8s");
    let out = plumb(
        ns,
        &cli_cache,
        &[
            "sync",
            name,
            "--local",
            dir.to_str().unwrap(),
            "--prune",
            "--timeout",
            "150",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // Exactly the local objects were synced, and what they no longer declare was pruned.
    assert_eq!(live(dest, "web").unwrap()["data"]["LOG_LEVEL"], "debug");
    let jobs = live(dest, "jobs").expect("jobs ConfigMap created from the local tree");
    assert_eq!(jobs["data"]["LOG_LEVEL"], "trace");
    assert_eq!(
        jobs["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
        format!("{name}:/ConfigMap:{dest}/jobs")
    );
    assert!(live(dest, "worker").is_none(), "worker was not pruned");

    let app = wait_app(ns, name, "local sync recorded", |a| {
        a["status"]["history"]
            .as_array()
            .is_some_and(|h| h.len() == 2)
    });
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    let manifests = st["operation"]["sync"]["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 2, "{st:#}");
    // Local manifests have no revision: Argo CD records none, in the result and the history.
    assert_eq!(
        st["syncResult"]["revision"].as_str().unwrap_or_default(),
        ""
    );
    let history = app["status"]["history"].as_array().unwrap();
    assert_eq!(history[0]["revision"], git_revision.as_str());
    assert!(
        history[1]["revision"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{:#}",
        history[1]
    );
    assert_eq!(history[1]["source"]["path"], "k8s");
    let pruned: Vec<&Value> = st["syncResult"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "Pruned")
        .collect();
    assert_eq!(pruned.len(), 1, "{st:#}");
    assert_eq!(pruned[0]["name"], "worker");

    // The next comparison is with Git again: the cluster now differs from it.
    let app = wait_app(ns, name, "compared with Git", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    });
    assert_eq!(app["status"]["sync"]["revision"], git_revision.as_str());
}
