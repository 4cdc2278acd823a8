//! A control namespace with the `default` AppProject and the ApplicationSet controller running
//! on it in this process (no Application controller: generated Applications only exist).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use plumb_appset::controller::{self as appset, AppSetMetrics};
use plumb_testenv::{TestEnv, TestNamespace};
use serde_json::{Value, json};

pub const DEADLINE: Duration = Duration::from_secs(90);

pub struct Running {
    pub ns: TestNamespace,
    pub client: kube::Client,
    pub registry: Registry,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Running {
    /// The controller on a fresh namespace, its configuration adjusted by `tweak`.
    pub async fn start(prefix: &str, tweak: impl FnOnce(&mut appset::Config)) -> Self {
        Self::start_on(TestEnv::shared(), prefix, tweak, Arc::new(|| true)).await
    }

    /// [`Running::start`] on the control plane `env`, reconciling while `gate` says so.
    pub async fn start_on(
        env: &TestEnv,
        prefix: &str,
        tweak: impl FnOnce(&mut appset::Config),
        gate: appset::Gate,
    ) -> Self {
        if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("PLUMB_LOG") {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_test_writer()
                .try_init();
        }
        env.install_plumb_crds();
        let ns = env.namespace(prefix);
        let client = env.client().await;
        let projects: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            ns.name(),
            &kube::api::ApiResource {
                group: "argoproj.io".into(),
                version: "v1alpha1".into(),
                api_version: "argoproj.io/v1alpha1".into(),
                kind: "AppProject".into(),
                plural: "appprojects".into(),
            },
        );
        let project: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "default"},
            "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}
        }))
        .expect("project");
        projects
            .create(&PostParams::default(), &project)
            .await
            .expect("default project");
        let (task, registry) = spawn_controller(&client, ns.name(), tweak, gate);
        Self {
            ns,
            client,
            registry,
            task,
        }
    }

    /// Stops this controller's reconciles (as a replica that died).
    pub fn stop(&self) {
        self.task.abort();
    }

    /// Another controller on this namespace (a second replica), reconciling while `gate` says
    /// so; stopped when the returned handle is aborted.
    pub fn another(&self, gate: appset::Gate) -> (tokio::task::JoinHandle<()>, Registry) {
        spawn_controller(&self.client, self.ns.name(), |_| {}, gate)
    }

    pub fn sets(&self) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            self.ns.name(),
            &appset::applicationset_resource(),
        )
    }

    pub fn apps(&self) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            self.ns.name(),
            &appset::application_resource(),
        )
    }

    pub async fn create_set(&self, set: Value) {
        let obj: DynamicObject = serde_json::from_value(set).expect("set");
        self.sets()
            .create(&PostParams::default(), &obj)
            .await
            .expect("create ApplicationSet");
    }

    pub async fn patch_set(&self, name: &str, patch: Value) {
        self.sets()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch ApplicationSet");
    }

    pub async fn set(&self, name: &str) -> Value {
        serde_json::to_value(self.sets().get(name).await.expect("get set")).expect("json")
    }

    /// The Applications of the namespace by name.
    pub async fn app_list(&self) -> Vec<Value> {
        let mut list: Vec<Value> = self
            .apps()
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .into_iter()
            .map(|o| serde_json::to_value(o).expect("json"))
            .collect();
        list.sort_by_key(|a| {
            a["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        });
        list
    }

    pub async fn app_names(&self) -> Vec<String> {
        self.app_list()
            .await
            .iter()
            .map(|a| {
                a["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    /// The condition `kind` of the set, if any.
    pub async fn condition(&self, set: &str, kind: &str) -> Option<Value> {
        let s = self.set(set).await;
        s["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == kind)
            .cloned()
    }

    /// The reasons of the Events on the set.
    pub async fn event_notes(&self) -> Vec<(String, String)> {
        let api: Api<k8s_openapi::api::events::v1::Event> =
            Api::namespaced(self.client.clone(), self.ns.name());
        let mut out: Vec<(String, String)> = api
            .list(&ListParams::default())
            .await
            .expect("events")
            .items
            .into_iter()
            .filter(|e| {
                e.regarding.as_ref().and_then(|r| r.kind.as_deref()) == Some("ApplicationSet")
            })
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect();
        out.sort();
        out
    }

    pub fn metrics_text(&self) -> String {
        metrics_of(&self.registry)
    }
}

/// A controller's metrics registry.
pub type Registry = Arc<std::sync::Mutex<prometheus_client::registry::Registry>>;

/// The text of the metrics in `registry`.
pub fn metrics_of(registry: &Registry) -> String {
    let mut out = String::new();
    let registry = registry.lock().expect("registry");
    prometheus_client::encoding::text::encode(&mut out, &registry).expect("encode");
    out
}

/// The ApplicationSet controller on `ns` in this process, its configuration adjusted by `tweak`.
fn spawn_controller(
    client: &kube::Client,
    ns: &str,
    tweak: impl FnOnce(&mut appset::Config),
    gate: appset::Gate,
) -> (tokio::task::JoinHandle<()>, Registry) {
    let mut config = appset::Config::new(ns);
    tweak(&mut config);
    let cache = tempfile::tempdir().expect("tempdir").keep();
    let ctx = appset::context(
        client.clone(),
        ns,
        Arc::new(
            plumb_source::GitCache::new(cache.join("git"), plumb_source::Limits::default())
                .expect("git cache"),
        ),
        config.scm.clone(),
    )
    .expect("context");
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = AppSetMetrics::register(&mut registry);
    let task = tokio::spawn(async move {
        if let Err(e) = appset::run(ctx, config, metrics, gate).await {
            eprintln!("APPSET CONTROLLER STOPPED: {e}");
        }
    });
    (task, Arc::new(std::sync::Mutex::new(registry)))
}

/// Polls `check` until it returns `Some`, failing with `what` after [`DEADLINE`].
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A list-generator set named `name` generating one Application per element `{name, path}`.
pub fn list_set(name: &str, elements: &[(&str, &str)], extra_spec: Value) -> Value {
    let elements: Vec<Value> = elements
        .iter()
        .map(|(n, p)| json!({"name": n, "path": p}))
        .collect();
    let mut set = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": name},
        "spec": {
            "generators": [{"list": {"elements": elements}}],
            "template": {
                "metadata": {"name": "{{name}}", "labels": {"fleet": name}},
                "spec": {"project": "default",
                         "source": {"repoURL": "https://example.com/apps.git", "path": "{{path}}", "targetRevision": "main"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "{{name}}"}}
            }
        }
    });
    if let (Some(spec), Some(extra)) = (set["spec"].as_object_mut(), extra_spec.as_object()) {
        spec.extend(extra.clone());
    }
    set
}

/// The resourceVersions of the Applications, by name.
pub async fn versions(r: &Running) -> Vec<(String, String)> {
    r.app_list()
        .await
        .iter()
        .map(|a| {
            (
                a["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                a["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// Asks for a reconcile of `set` with Argo's refresh annotation and waits until the
/// controller removed it (the reconcile ran to its end).
pub async fn refresh(r: &Running, set: &str) {
    r.patch_set(
        set,
        json!({"metadata": {"annotations": {"argocd.argoproj.io/application-set-refresh": "true"}}}),
    )
    .await;
    eventually("the refresh annotation to be removed", || async {
        let s = r.set(set).await;
        s["metadata"]["annotations"]["argocd.argoproj.io/application-set-refresh"]
            .is_null()
            .then_some(())
    })
    .await;
}
