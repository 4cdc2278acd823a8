//! A real `plumb controller` process on the shared control plane, for the attacks that need the
//! controller end to end: its own control namespace (with a permissive `default` AppProject),
//! its log captured to a file at the level asked, and helpers to drive Applications through
//! kubectl and the `plumb app` CLI as a user would.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use plumb_testenv::{TestEnv, TestNamespace};
use serde_json::{Value, json};

/// Generous deadline for what the controller does in the background.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// The shared control plane with the Application CRDs installed (once per process).
pub fn env() -> &'static TestEnv {
    static CRDS: OnceLock<()> = OnceLock::new();
    let env = TestEnv::shared();
    CRDS.get_or_init(|| env.install_plumb_crds());
    env
}

/// A name unique in this test process.
pub fn unique(prefix: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A running `plumb controller`; killed when dropped.
pub struct Running {
    pub ns: TestNamespace,
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Starts a controller over a fresh control namespace; `env` adds environment variables
    /// (`RUST_LOG=trace`).
    pub fn start(prefix: &str, vars: &[(&str, &str)]) -> Self {
        Self::start_with(prefix, vars, &[])
    }

    /// [`Running::start`] with extra `plumb controller` flags (`--sync-wave-delay` among them
    /// replaces the default of 0).
    pub fn start_with(prefix: &str, vars: &[(&str, &str)], args: &[&str]) -> Self {
        let ns = env().namespace(prefix);
        kubectl_apply(&json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "default", "namespace": ns.name()},
            "spec": {"sourceRepos": ["*"], "destinations": [{"namespace": "*", "server": "*"}],
                     "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}
        }));
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("controller.log");
        let file = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_plumb"));
        cmd.arg("controller")
            .args(["-n", ns.name()])
            .arg("--kubeconfig")
            .arg(env().kubeconfig())
            .arg("--cache-dir")
            .arg(dir.path().join("cache"))
            .args(["--metrics-addr", "off"])
            .args(if args.contains(&"--sync-wave-delay") {
                &[][..]
            } else {
                &["--sync-wave-delay", "0"][..]
            })
            .args(args)
            .arg("--helm")
            .arg(plumb_testenv::tools::helm())
            .arg("--kustomize")
            .arg(plumb_testenv::tools::kustomize())
            .env_remove("PLUMB_LOG")
            .env_remove("RUST_LOG")
            .env_remove("PLUMB_NAMESPACE")
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let child = cmd.spawn().unwrap();
        Self {
            ns,
            child,
            log,
            _dir: dir,
        }
    }

    /// The controller's process id (to read its memory use from `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the controller process is still running (it did not crash).
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Everything the controller wrote so far.
    pub fn log(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(&self.log).unwrap_or_default()).into_owned()
    }

    /// Creates an Application of this control namespace from its spec.
    pub fn create_app(&self, name: &str, spec: Value) {
        kubectl_apply(&json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": self.ns.name()},
            "spec": spec
        }));
    }

    /// Creates an AppProject of this control namespace.
    pub fn create_project(&self, name: &str, spec: Value) {
        kubectl_apply(&json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": name, "namespace": self.ns.name()},
            "spec": spec
        }));
    }

    /// The Application as JSON, if it exists.
    pub fn app(&self, name: &str) -> Option<Value> {
        get_json(self.ns.name(), "applications.argoproj.io", name)
    }

    /// Merge-patches the Application.
    pub fn patch_app(&self, name: &str, patch: &Value) {
        let out = kubectl(&[
            "-n",
            self.ns.name(),
            "patch",
            "applications.argoproj.io",
            name,
            "--type=merge",
            "-p",
            &patch.to_string(),
        ]);
        assert!(out.status.success(), "patch: {}", text(&out.stderr));
    }

    /// Polls the Application until `cond` holds; returns it.
    pub fn wait_app(&self, name: &str, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        let mut last = Value::Null;
        while start.elapsed() < DEADLINE {
            if let Some(a) = self.app(name) {
                if cond(&a) {
                    return a;
                }
                last = a;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        panic!(
            "Application {name}: {what} not reached within {DEADLINE:?}; last seen:\n{}\ncontroller log (tail):\n{}",
            serde_json::to_string_pretty(&last["status"]).unwrap_or_default(),
            tail(&self.log(), 40)
        );
    }

    /// Requests a sync by writing `.operation` (as `plumb app sync --async` does) and waits for
    /// its end; returns the Application.
    pub fn sync(&self, name: &str, sync: Value) -> Value {
        let who = unique("hostile");
        self.patch_app(
            name,
            &json!({"operation": {"sync": sync, "initiatedBy": {"username": who}}}),
        );
        self.wait_app(name, "operation finished", |a| {
            let st = &a["status"]["operationState"];
            a["operation"].is_null()
                && st["operation"]["initiatedBy"]["username"] == who.as_str()
                && matches!(st["phase"].as_str(), Some("Succeeded" | "Failed" | "Error"))
        })
    }

    /// `plumb app ARGS -N <control namespace>` with `stdin` (none: a closed stdin).
    pub fn plumb_app(&self, args: &[&str], stdin: Option<&str>) -> Output {
        // A closed stdin reads as an empty one.
        plumb_testenv::process::output_with_stdin(
            Command::new(env!("CARGO_BIN_EXE_plumb"))
                .arg("app")
                .args(args)
                .arg("--kubeconfig")
                .arg(env().kubeconfig())
                .args(["-N", self.ns.name()])
                .env("TZ", "UTC")
                .env_remove("PLUMB_NAMESPACE")
                .env_remove("PLUMB_LOG")
                .env_remove("RUST_LOG"),
            stdin.unwrap_or_default(),
        )
    }

    /// Events recorded in the control namespace, as JSON text.
    pub fn events(&self) -> String {
        text(&kubectl(&["-n", self.ns.name(), "get", "events", "-o", "json"]).stdout)
    }
}

pub fn kubectl(args: &[&str]) -> Output {
    env().kubectl().args(args).output().unwrap()
}

pub fn kubectl_apply(obj: &Value) {
    plumb_testenv::process::kubectl_apply(env(), obj);
}

/// An object as JSON, if it exists (`ns` empty: cluster-scoped).
pub fn get_json(ns: &str, kind: &str, name: &str) -> Option<Value> {
    let mut args = vec!["get", kind, name, "-o", "json", "--ignore-not-found"];
    if !ns.is_empty() {
        args.extend(["-n", ns]);
    }
    let out = kubectl(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    (!t.trim().is_empty()).then(|| serde_json::from_str(&t).unwrap())
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The condition of `kind` on an Application, if any.
pub fn condition<'a>(app: &'a Value, kind: &str) -> Option<&'a Value> {
    app["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == kind))
}
