//! The comparison against the real API server: server defaults never show as drift, a field
//! changed with `kubectl patch` shows with the manager that wrote it, an ignore rule naming
//! that manager (`managedFieldsManagers`) hides it again, and a field Git stops declaring shows
//! the default the apply will give it.

use std::sync::Arc;

use plumb_app::{
    Cluster, CompareOptions, Comparison, Engines, IN_CLUSTER_NAME, IN_CLUSTER_SERVER, compare,
};
use plumb_model::Settings;
use plumb_model::application::Application;
use plumb_source::Renderer;
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: api\n  template:\n    metadata:\n      labels:\n        app: api\n    spec:\n      containers:\n      - name: api\n        image: registry.example/api:v1\n        ports:\n        - containerPort: 8080\n";
const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: api\nspec:\n  selector:\n    app: api\n  ports:\n  - port: 80\n    targetPort: 8080\n";

fn application(repo: &GitRepo, dest: &str, ignore: Value) -> Application {
    serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "api", "namespace": "argocd"},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": IN_CLUSTER_SERVER, "namespace": dest},
                 "ignoreDifferences": ignore}
    }))
    .expect("application")
}

/// Compares Applications against the shared control plane as the controller does, reading live
/// objects from the API server (no live cache here).
struct Comparer {
    cluster: Cluster,
    engines: Engines,
    renderer: Arc<Renderer>,
    opts: CompareOptions,
    _cache: tempfile::TempDir,
}

impl Comparer {
    async fn new(env: &TestEnv) -> Self {
        let cluster = Cluster::connect(IN_CLUSTER_SERVER, IN_CLUSTER_NAME, env.client().await)
            .await
            .expect("cluster");
        let engines = Engines::new(Settings::default(), "argocd", &[]).expect("engines");
        let cache = tempfile::tempdir().expect("tempdir");
        let renderer =
            Arc::new(Renderer::new(plumb_source::Config::new(cache.path())).expect("renderer"));
        let opts = CompareOptions {
            refs_asked_at: None,
            attribution: true,
            fresh_reads: true,
            ..CompareOptions::default()
        };
        Self {
            cluster,
            engines,
            renderer,
            opts,
            _cache: cache,
        }
    }

    async fn compare(&self, app: &Application) -> Comparison {
        compare(
            app,
            &self.engines,
            &self.cluster,
            &self.renderer,
            &self.opts,
        )
        .await
        .expect("compare")
    }

    /// Applies what Git declares, as a sync would.
    async fn apply_all(&self, cmp: &Comparison) {
        for r in &cmp.resources {
            self.cluster
                .applier
                .apply(r.desired.as_ref().expect("desired"), None)
                .await
                .expect("apply");
        }
    }
}

#[tokio::test]
async fn server_defaults_are_not_drift_and_patched_fields_name_their_manager() {
    let env = TestEnv::shared();
    let dest = env.namespace("diff-e2e");
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("app/deployment.yaml", DEPLOYMENT),
            ("app/service.yaml", SERVICE),
        ],
        "api v1",
    );
    let c = Comparer::new(env).await;
    let app = application(&repo, dest.name(), json!([]));

    // Apply what Git declares, as a sync would.
    let cmp = c.compare(&app).await;
    c.apply_all(&cmp).await;

    // Everything the API server defaulted (strategy, revisionHistoryLimit, clusterIP, protocol,
    // terminationMessagePath...) is not drift.
    let cmp = c.compare(&app).await;
    for r in &cmp.resources {
        let d = r.diff.as_ref().expect("diff");
        assert!(
            !d.modified,
            "{} shows drift after apply: {:#?}",
            r.key, d.changes
        );
    }
    assert_eq!(cmp.sync.as_str(), "Synced");

    // A field changed with kubectl patch shows, attributed to kubectl-patch (Update).
    let out = env
        .kubectl()
        .args(["-n", dest.name(), "patch", "deployment", "api", "--type=json", "-p",
               r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/api:hotfix"},{"op":"replace","path":"/spec/replicas","value":5}]"#])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmp = c.compare(&app).await;
    assert_eq!(cmp.sync.as_str(), "OutOfSync");
    let dep = cmp
        .resources
        .iter()
        .find(|r| r.key.kind == "Deployment")
        .expect("deployment");
    let d = dep.diff.as_ref().expect("diff");
    assert!(d.modified);
    let paths: Vec<String> = d.changes.iter().map(|c| c.path.to_string()).collect();
    assert_eq!(
        paths,
        [
            "spec.replicas",
            "spec.template.spec.containers[name=api].image"
        ],
        "{:#?}",
        d.changes
    );
    let image = &d.changes[1];
    assert_eq!(image.live, Some(json!("registry.example/api:hotfix")));
    assert_eq!(image.predicted, Some(json!("registry.example/api:v1")));
    for change in &d.changes {
        let who = change.attribution.as_ref().expect("attribution");
        assert_eq!(
            (who.manager.as_str(), who.operation.as_str(), who.exact),
            ("kubectl-patch", "Update", true)
        );
        assert!(!who.time.is_empty());
    }

    // An ignore rule for the fields kubectl-patch owns hides the replica count (what an HPA
    // setup needs), but the guard rail keeps the image compared and says so.
    let ignoring = application(
        &repo,
        dest.name(),
        json!([{"group": "apps", "kind": "Deployment", "managedFieldsManagers": ["kubectl-patch"]}]),
    );
    let cmp = c.compare(&ignoring).await;
    let dep = cmp
        .resources
        .iter()
        .find(|r| r.key.kind == "Deployment")
        .expect("deployment");
    let d = dep.diff.as_ref().expect("diff");
    let paths: Vec<String> = d.changes.iter().map(|c| c.path.to_string()).collect();
    assert_eq!(
        paths,
        ["spec.template.spec.containers[name=api].image"],
        "{:#?}",
        d.changes
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("managedFieldsManagers") && n.contains("sensitive")),
        "{:?}",
        d.notes
    );

    // Once the image is back to what Git says, the rule leaves nothing to report.
    let out = env
        .kubectl()
        .args(["-n", dest.name(), "patch", "deployment", "api", "--type=json", "-p",
               r#"[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/api:v1"}]"#])
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmp = c.compare(&ignoring).await;
    let dep = cmp
        .resources
        .iter()
        .find(|r| r.key.kind == "Deployment")
        .expect("deployment");
    let d = dep.diff.as_ref().expect("diff");
    assert!(!d.modified, "{:#?}", d.changes);
    assert_eq!(cmp.sync.as_str(), "Synced");
    let cmp = c.compare(&app).await;
    assert_eq!(
        cmp.sync.as_str(),
        "OutOfSync",
        "without the rule, replicas 5 is drift"
    );
}

/// A field Git stops declaring goes back to its default when Plumb applies: the comparison
/// shows that change (Argo CD's server-side diff reverts it to live and shows none), and the
/// apply does what it predicted.
#[tokio::test]
async fn a_field_git_stops_declaring_shows_the_default_it_returns_to() {
    let env = TestEnv::shared();
    let dest = env.namespace("diff-e2e-undeclared");
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/deployment.yaml",
            DEPLOYMENT.replace("replicas: 2", "replicas: 3"),
        )],
        "api v1",
    );
    let c = Comparer::new(env).await;
    let app = application(&repo, dest.name(), json!([]));
    let cmp = c.compare(&app).await;
    c.apply_all(&cmp).await;

    repo.commit(
        &[(
            "app/deployment.yaml",
            DEPLOYMENT.replace("  replicas: 2\n", ""),
        )],
        "replicas left to the cluster",
    );
    let cmp = c.compare(&app).await;
    assert_eq!(cmp.sync.as_str(), "OutOfSync");
    let d = cmp.resources[0].diff.as_ref().expect("diff");
    let changes: Vec<(String, Option<Value>, Option<Value>)> = d
        .changes
        .iter()
        .map(|c| (c.path.to_string(), c.live.clone(), c.predicted.clone()))
        .collect();
    assert_eq!(
        changes,
        [("spec.replicas".to_string(), Some(json!(3)), Some(json!(1)))]
    );

    c.apply_all(&cmp).await;
    let live = c
        .cluster
        .applier
        .get(&cmp.resources[0].key)
        .await
        .expect("get")
        .expect("deployment");
    assert_eq!(live["spec"]["replicas"], 1);
    let cmp = c.compare(&app).await;
    assert_eq!(cmp.sync.as_str(), "Synced");
}
