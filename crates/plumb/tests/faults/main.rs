//! Faults lose nothing: end-to-end tests that break the control plane, the Git server or the
//! controller itself while `plumb controller` runs, and check that no object is pruned or applied
//! that should not be, no operation runs twice, and the status comes back true within a
//! generous deadline.
//!
//! These tests stop and restart control-plane components, so they never use the shared control
//! plane of `PLUMB_TEST_KUBECONFIG`: the binary starts one private control plane
//! ([`TestEnv::private`]) and runs its tests one after another on it (the [`serial`] lock).
//! The controller runs as its own process (the `plumb` binary), so it can be frozen and killed.

// Test helpers outside #[test] functions panic on bad fixtures, which is what a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod apiserver;
mod controller_kill;
mod discovery;
mod etcd;
mod git;
mod server;
mod watch_expiry;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use plumb_testenv::{TestEnv, TestNamespace};
use serde_json::{Value, json};

/// How long a fault may take to heal. A deadline, not a timing assertion: a healthy run takes a
/// fraction of it.
pub(crate) const DEADLINE: Duration = Duration::from_secs(120);

/// The private control plane of this test binary, with Plumb's CRDs installed.
pub(crate) fn env() -> &'static TestEnv {
    static ENV: OnceLock<TestEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let env = TestEnv::private().unwrap_or_else(|e| panic!("no private control plane: {e}"));
        env.install_plumb_crds();
        env
    })
}

/// One fault test at a time: they stop components of the one control plane they share.
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    // A failed test poisons the lock; the next test still runs on a working control plane.
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn kubectl(args: &[&str]) -> Output {
    env()
        .kubectl()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `kubectl` that must succeed; returns stdout.
pub(crate) fn kubectl_ok(args: &[&str]) -> String {
    let out = kubectl(args);
    assert!(
        out.status.success(),
        "kubectl {}: {}",
        args.join(" "),
        text(&out.stderr)
    );
    text(&out.stdout)
}

pub(crate) fn kubectl_apply(obj: &Value) {
    plumb_testenv::process::kubectl_apply(env(), obj);
}

/// A control namespace with the `default` AppProject.
pub(crate) fn control_namespace(prefix: &str) -> TestNamespace {
    let ns = env().namespace(prefix);
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default", "namespace": ns.name()},
        "spec": {"sourceRepos": ["*"], "destinations": [{"namespace": "*", "server": "*"}],
                 "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}
    }));
    ns
}

/// An Application in `ctl` deploying `path` of `repo_url` at `revision` into `dest`.
pub(crate) fn create_app(
    ctl: &str,
    name: &str,
    repo_url: &str,
    path: &str,
    revision: &str,
    dest: &str,
    policy: Value,
) {
    kubectl_apply(&json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": ctl},
        "spec": {"project": "default",
                 "source": {"repoURL": repo_url, "path": path, "targetRevision": revision},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest},
                 "syncPolicy": policy}
    }));
}

/// Automated sync with prune and self-heal: the setting under which a fault that makes the
/// controller misread Git or the cluster would do the most damage.
pub(crate) fn automated() -> Value {
    json!({"automated": {"prune": true, "selfHeal": true}})
}

pub(crate) fn app_json(ctl: &str, name: &str) -> Option<Value> {
    let out = kubectl(&[
        "-n",
        ctl,
        "get",
        "applications.argoproj.io",
        name,
        "-o",
        "json",
    ]);
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// Asks the controller to compare again now (Argo's refresh annotation).
pub(crate) fn refresh(ctl: &str, name: &str) {
    kubectl_ok(&[
        "-n",
        ctl,
        "annotate",
        "--overwrite",
        "applications.argoproj.io",
        name,
        "argocd.argoproj.io/refresh=normal",
    ]);
}

/// Requests a sync the way `plumb app sync --async` does: writes `.operation`.
pub(crate) fn request_sync(ctl: &str, name: &str) {
    kubectl_ok(&[
        "-n",
        ctl,
        "patch",
        "applications.argoproj.io",
        name,
        "--type=merge",
        "-p",
        r#"{"operation":{"sync":{"prune":true},"initiatedBy":{"username":"faults-test"}}}"#,
    ]);
}

pub(crate) fn sync_status(app: &Value) -> &str {
    app["status"]["sync"]["status"].as_str().unwrap_or("")
}

pub(crate) fn health_status(app: &Value) -> &str {
    app["status"]["health"]["status"].as_str().unwrap_or("")
}

pub(crate) fn history_len(app: &Value) -> usize {
    app["status"]["history"].as_array().map_or(0, Vec::len)
}

pub(crate) fn synced_healthy(app: &Value) -> bool {
    sync_status(app) == "Synced" && health_status(app) == "Healthy"
}

/// `uid` and `resourceVersion` of every ConfigMap in a namespace (minus kube-root-ca.crt):
/// equal snapshots mean nothing was deleted, recreated or written.
pub(crate) fn configmaps(ns: &str) -> BTreeMap<String, (String, String)> {
    let out = kubectl_ok(&["-n", ns, "get", "configmaps", "-o", "json"]);
    let list: Value = serde_json::from_str(&out).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["metadata"]["name"] != "kube-root-ca.crt")
        .map(|o| {
            (
                o["metadata"]["name"].as_str().unwrap().to_string(),
                (
                    o["metadata"]["uid"].as_str().unwrap().to_string(),
                    o["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                ),
            )
        })
        .collect()
}

pub(crate) fn configmap_yaml(name: &str, data: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: \"{data}\"\n"
    )
}

/// `plumb controller` in its own process, watching one control namespace; killed when dropped.
pub(crate) struct Controller {
    child: Option<Child>,
    log: PathBuf,
    ctl: String,
    cache: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Controller {
    pub(crate) fn start(ctl: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let log = tmp.path().join("controller.log");
        let mut c = Self {
            child: None,
            log,
            ctl: ctl.to_string(),
            cache,
            _tmp: tmp,
        };
        c.spawn();
        c
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_plumb"))
            .args(["controller", "-n", &self.ctl, "--metrics-addr", "off"])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(["--sync-wave-delay", "0.5", "--discovery-interval", "3"])
            .env(
                "PLUMB_LOG",
                std::env::var("PLUMB_LOG").unwrap_or_else(|_| "warn,plumb_controller=info".into()),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
    }

    /// Panics when the process exited: a fault must never stop the controller.
    pub(crate) fn assert_running(&mut self) {
        let status = self.child.as_mut().map(|c| c.try_wait());
        if let Some(Ok(Some(status))) = status {
            panic!(
                "the controller exited ({status}) during a fault:\n{}",
                self.log_tail()
            );
        }
    }

    /// The controller's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap()
    }

    /// SIGKILL, as the OOM killer or a node failure would; reaped.
    pub(crate) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// A new process after [`Controller::kill`], with the same cache directory (as a restarted
    /// pod keeps its volume).
    pub(crate) fn restart(&mut self) {
        self.kill();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&self.log)
            .and_then(|mut f| f.write_all(b"---- faults test: controller started again ----\n"))
            .unwrap();
        self.spawn();
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the process, as a long GC pause or a network
    /// partition would look from the API server.
    pub(crate) fn signal(&self, sig: &str) {
        let st = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(st.success(), "kill -{sig} {}", self.pid());
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Polls the Application until `pred` holds; panics after [`DEADLINE`] with the last status
    /// and the controller's log.
    pub(crate) fn wait_app(&self, name: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + DEADLINE;
        let mut last = Value::Null;
        loop {
            if let Some(app) = app_json(&self.ctl, name) {
                if pred(&app) {
                    return app;
                }
                last = app;
            }
            if Instant::now() > deadline {
                panic!(
                    "{name}: not {what} within {DEADLINE:?}\nlast status: {}\ncontroller log:\n{}",
                    serde_json::to_string_pretty(&last["status"]).unwrap_or_default(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("controller log ({}):\n{}", self.ctl, self.log_tail());
        }
        self.kill();
    }
}

/// An application whose sync stops in wave 0 until the test opens a gate: a Deployment whose pod
/// only schedules on a node labelled `faults.plumb.dev/gate=<gate>`. Wave -1 is a ConfigMap
/// (`before`), wave 1 another (`after`): a sync interrupted in wave 0 has applied `before` and
/// not `after`.
pub(crate) fn gated_files(gate: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "app/before.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: before\n  annotations:\n    argocd.argoproj.io/sync-wave: \"-1\"\ndata:\n  value: \"1\"\n".to_string(),
        ),
        (
            "app/gated.yaml",
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gated\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: gated}}\n  template:\n    metadata:\n      labels: {{app: gated}}\n    spec:\n      nodeSelector:\n        faults.plumb.dev/gate: {gate}\n      containers:\n      - name: app\n        image: registry.invalid/gated:1\n"
            ),
        ),
        (
            "app/after.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after\n  annotations:\n    argocd.argoproj.io/sync-wave: \"1\"\ndata:\n  value: \"1\"\n".to_string(),
        ),
    ]
}

/// A gate name unique to this process and test.
pub(crate) fn gate_name(test: &str) -> String {
    format!("{test}-{}", std::process::id())
}

/// Lets the gated Deployment's pod schedule.
pub(crate) fn open_gate(gate: &str) {
    kubectl_ok(&[
        "label",
        "--overwrite",
        "node",
        "kwok-node-0",
        &format!("faults.plumb.dev/gate={gate}"),
    ]);
}

pub(crate) fn exists(ns: &str, kind: &str, name: &str) -> bool {
    kubectl(&["-n", ns, "get", kind, name]).status.success()
}

pub(crate) fn uid(ns: &str, kind: &str, name: &str) -> String {
    kubectl_ok(&[
        "-n",
        ns,
        "get",
        kind,
        name,
        "-o",
        "jsonpath={.metadata.uid}",
    ])
}

/// Waits until the sync of a gated application is in wave 0: `before` applied, the Deployment
/// created and waited for.
pub(crate) fn wait_in_wave_zero(ctl: &Controller, name: &str, dest: &str) -> Value {
    let app = ctl.wait_app(name, "waiting in wave 0", |a| {
        a["status"]["operationState"]["phase"] == "Running"
            && a["status"]["operationState"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("waiting for healthy state of apps/Deployment/gated"))
    });
    assert!(exists(dest, "configmap", "before"), "wave -1 was applied");
    assert!(exists(dest, "deployment", "gated"), "wave 0 was applied");
    assert!(
        !exists(dest, "configmap", "after"),
        "wave 1 waits for wave 0"
    );
    app
}

/// A repository with three ConfigMaps under `app/`, an automated Application (prune, self-heal)
/// deploying it, and a controller that synced it. The fault tests' steady state.
pub(crate) struct Steady {
    pub(crate) ctl: Controller,
    pub(crate) ctl_ns: TestNamespace,
    pub(crate) dest: TestNamespace,
    pub(crate) repo: plumb_testenv::git::GitRepo,
    pub(crate) name: &'static str,
}

impl Steady {
    pub(crate) fn new(prefix: &str, name: &'static str) -> Self {
        let repo = plumb_testenv::git::GitRepo::named(name);
        Self::with_repo(prefix, name, repo, |r| r.url(), "main")
    }

    /// With a repository URL of the caller's (a Git server in front of `repo`) and a revision;
    /// `repo` must be empty (this commits the three ConfigMaps; `url` is called after).
    pub(crate) fn with_repo(
        prefix: &str,
        name: &'static str,
        repo: plumb_testenv::git::GitRepo,
        url: impl FnOnce(&plumb_testenv::git::GitRepo) -> String,
        revision: &str,
    ) -> Self {
        let ctl_ns = control_namespace(&format!("ctl-{prefix}"));
        let dest = env().namespace(&format!("dest-{prefix}"));
        let (a, b, c) = (
            configmap_yaml("cm-a", "a"),
            configmap_yaml("cm-b", "b"),
            configmap_yaml("cm-c", "c"),
        );
        repo.commit(
            &[("app/a.yaml", a), ("app/b.yaml", b), ("app/c.yaml", c)],
            "three ConfigMaps",
        );
        let url = url(&repo);
        create_app(
            ctl_ns.name(),
            name,
            &url,
            "app",
            revision,
            dest.name(),
            automated(),
        );
        let ctl = Controller::start(ctl_ns.name());
        let app = ctl.wait_app(name, "synced and healthy", |a| {
            synced_healthy(a) && history_len(a) == 1
        });
        assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
        Self {
            ctl,
            ctl_ns,
            dest,
            repo,
            name,
        }
    }

    pub(crate) fn app(&self) -> Value {
        app_json(self.ctl_ns.name(), self.name).expect("the Application exists")
    }

    pub(crate) fn refresh(&self, hard: bool) {
        kubectl_ok(&[
            "-n",
            self.ctl_ns.name(),
            "annotate",
            "--overwrite",
            "applications.argoproj.io",
            self.name,
            if hard {
                "argocd.argoproj.io/refresh=hard"
            } else {
                "argocd.argoproj.io/refresh=normal"
            },
        ]);
    }

    /// Commits a fourth ConfigMap and waits until automation synced it: proof that the
    /// controller watches, compares and syncs again after the fault.
    pub(crate) fn add_and_sync(&self, cm: &str) -> Value {
        let before = history_len(&self.app());
        self.repo.commit(
            &[(format!("app/{cm}.yaml").as_str(), configmap_yaml(cm, "new"))],
            &format!("add {cm}"),
        );
        self.refresh(false);
        let app = self
            .ctl
            .wait_app(self.name, "synced with the new commit", |a| {
                synced_healthy(a) && history_len(a) == before + 1
            });
        assert!(exists(self.dest.name(), "configmap", cm));
        app
    }

    pub(crate) fn assert_running(&mut self) {
        self.ctl.assert_running();
    }
}
