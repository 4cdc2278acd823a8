//! Shared setup: CRDs, a control namespace with the default AppProject, a running controller.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_app::{application_resource, appproject_resource};
use plumb_controller::ControllerConfig;
use plumb_testenv::{TestEnv, TestNamespace};
use serde_json::{Value, json};

pub const DEADLINE: Duration = Duration::from_secs(90);

/// Installs the CRDs from deploy/crds (idempotent).
pub fn install_crds(env: &TestEnv) {
    env.install_plumb_crds();
}

pub fn plumb_testenv_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A control namespace with the `default` AppProject and a controller watching it.
pub struct Controlled {
    pub ns: TestNamespace,
    pub client: kube::Client,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Controlled {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Controlled {
    pub async fn start(env: &'static TestEnv, prefix: &str) -> Self {
        install_crds(env);
        let ns = env.namespace(prefix);
        Self::start_in(env, ns).await
    }

    /// A controller watching `ns` (which gets the default AppProject).
    pub async fn start_in(env: &'static TestEnv, ns: TestNamespace) -> Self {
        Self::start_in_with(env, ns, |_| {}).await
    }

    /// A controller whose configuration `tweak` adjusts (e.g. a short `sync_wave_delay`).
    pub async fn start_with(
        env: &'static TestEnv,
        prefix: &str,
        tweak: impl FnOnce(&mut ControllerConfig),
    ) -> Self {
        install_crds(env);
        let ns = env.namespace(prefix);
        Self::start_in_with(env, ns, tweak).await
    }

    /// [`Controlled::start_in`] with a configuration tweak.
    pub async fn start_in_with(
        env: &'static TestEnv,
        ns: TestNamespace,
        tweak: impl FnOnce(&mut ControllerConfig),
    ) -> Self {
        // PLUMB_LOG=plumb_controller=debug shows what the controller does during a test.
        if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("PLUMB_LOG") {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_test_writer()
                .try_init();
        }
        let client = env.client().await;
        Self::start_as(env, ns, client.clone(), client, tweak).await
    }

    /// A controller that reaches the API server with `controller_client` (its own RBAC, e.g.
    /// a ServiceAccount token), while the test reads and writes with `client`.
    pub async fn start_as(
        env: &'static TestEnv,
        ns: TestNamespace,
        client: kube::Client,
        controller_client: kube::Client,
        tweak: impl FnOnce(&mut ControllerConfig),
    ) -> Self {
        install_crds(env);
        let projects: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), ns.name(), &appproject_resource());
        let project: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "default"},
            "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                     "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]}
        }))
        .expect("project");
        projects
            .create(&PostParams::default(), &project)
            .await
            .expect("create default project");
        let cache = tempfile::tempdir().expect("tempdir").keep();
        let mut config = ControllerConfig::new(cache);
        config.control_namespace = ns.name().to_string();
        config.metrics_addr = None;
        config.source.tools.helm = plumb_testenv::tools::helm();
        config.source.tools.kustomize = plumb_testenv::tools::kustomize();
        tweak(&mut config);
        let c = controller_client;
        let task = tokio::spawn(async move {
            match plumb_controller::run(c, config).await {
                Err(e) => eprintln!("CONTROLLER STOPPED: {}", plumb_app::chain(&e)),
                Ok(()) => eprintln!("CONTROLLER STOPPED"),
            }
        });
        Self { ns, client, task }
    }

    pub fn apps(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), self.ns.name(), &application_resource())
    }

    pub async fn create_app(&self, app: Value) {
        let obj: DynamicObject = serde_json::from_value(app).expect("application");
        self.apps()
            .create(&PostParams::default(), &obj)
            .await
            .expect("create application");
    }

    /// An Application of the `app` directory of `repo` (its default branch), deploying to `dest`
    /// on the controller's own cluster.
    pub async fn create_dir_app(&self, name: &str, repo: &plumb_testenv::git::GitRepo, dest: &str) {
        self.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": "app"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}}
        }))
        .await;
    }

    pub async fn patch_app(&self, name: &str, patch: Value) {
        self.apps()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch application");
    }

    /// Polls the Application until `cond` holds on its JSON, returning it.
    pub async fn wait_app(&self, name: &str, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        let mut last = Value::Null;
        while start.elapsed() < DEADLINE {
            if let Ok(obj) = self.apps().get(name).await {
                last = serde_json::to_value(&obj).expect("json");
                if cond(&last) {
                    return last;
                }
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!(
            "Application {name}: {what} not reached within {DEADLINE:?}; last seen:\n{}",
            serde_json::to_string_pretty(&last["status"]).unwrap_or_default()
        );
    }

    /// Requests a sync and waits for it to finish; returns the Application afterwards.
    pub async fn sync(&self, name: &str, sync: Value) -> Value {
        let who = self.request_op(name, json!({"sync": sync})).await;
        self.wait_op(name, &who).await
    }

    /// Writes `operation` (a unique `initiatedBy` added) and returns the initiator, which tells
    /// this operation's result from the previous one's.
    pub async fn request_op(&self, name: &str, mut operation: Value) -> String {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let who = format!(
            "test-{}",
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        operation["initiatedBy"] = json!({"username": who});
        self.patch_app(name, json!({"operation": operation})).await;
        who
    }

    /// Waits until the operation initiated by `who` finished; returns the Application.
    pub async fn wait_op(&self, name: &str, who: &str) -> Value {
        self.wait_app(name, "operation finished", |a| {
            let st = &a["status"]["operationState"];
            a["operation"].is_null()
                && st["operation"]["initiatedBy"]["username"] == who
                && matches!(st["phase"].as_str(), Some("Succeeded" | "Failed" | "Error"))
        })
        .await
    }
}

pub fn resource<'a>(app: &'a Value, kind: &str) -> &'a Value {
    app["status"]["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["kind"] == kind))
        .unwrap_or(&Value::Null)
}
