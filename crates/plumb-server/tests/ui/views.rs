//! The views an Argo CD user works in every day, checked by geometry in a real browser
//! (`ui/e2e/views.mjs`, issue #32's defects 6, 7, 9, 10 and 12): the resource tree's edges
//! never cross a box they do not connect and its ReplicaSets and Pods tell apart; the
//! Applications list fits 1440, 1280 and 1024 px; the side-by-side diff fits its panel and has
//! a compact mode; an Application with an unreachable repository is refused at create (REST,
//! form) and a project's refusals stand under the field they concern; the label filter reads
//! Kubernetes selectors; contrast, focus and messages. The controller runs in this process
//! and syncs the payments-api example from a real Git repository.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_app::{application_resource, appproject_resource};
use plumb_controller::ControllerConfig;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use super::browser::SettingsServer;
use super::support::{DEADLINE, env};

/// The synced Application (a name no other test uses), labelled `team=risk`.
const APP: &str = "ui-views";
/// Applications besides it, each in a destination namespace of its own, labelled
/// `team=payments`: enough namespaces to overflow an unbounded namespace filter.
const OTHERS: usize = 14;
/// A project that permits one repository and one destination namespace only.
const NARROW: &str = "ui-views-narrow";

fn application(name: &str, team: &str, repo: &str, dest_ns: &str, automated: bool) -> Value {
    let mut spec = json!({"project": "default",
        "source": {"repoURL": repo, "path": "k8s", "targetRevision": "main"},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": dest_ns}});
    if automated {
        spec["syncPolicy"] = json!({"automated": {"prune": true}});
    }
    json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
           "metadata": {"name": name, "labels": {"team": team}}, "spec": spec})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_tree_list_diff_filters_and_create_validation() {
    let stack = SettingsServer::start("ui-views").await;
    let ns = stack.ns.name().to_string();
    let client = stack.client.clone();
    let dest = env().namespace("ui-views-dest");

    let mut cc = ControllerConfig::new(tempfile::tempdir().expect("tempdir").keep());
    cc.control_namespace = ns.clone();
    cc.metrics_addr = None;
    let c = client.clone();
    let controller = tokio::spawn(async move {
        if let Err(e) = plumb_controller::run(c, cc).await {
            eprintln!("CONTROLLER STOPPED: {}", plumb_app::chain(&e));
        }
    });

    let repo = GitRepo::new();
    repo.commit(&super::files("v1.3.2"), "payments-api v1.3.2");
    let apps: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &application_resource());
    let mut all = vec![application(APP, "risk", &repo.url(), dest.name(), true)];
    for i in 0..OTHERS {
        let name = format!("{APP}-{i:02}");
        all.push(application(
            &name,
            "payments",
            &repo.url(),
            &format!("{name}-ns"),
            false,
        ));
    }
    for a in all {
        let obj: DynamicObject = serde_json::from_value(a).expect("Application");
        apps.create(&PostParams::default(), &obj)
            .await
            .expect("create Application");
    }
    let start = std::time::Instant::now();
    loop {
        let a = apps.get(APP).await.expect("read Application");
        let status = &a.data["status"];
        if status["sync"]["status"] == "Synced" && status["health"]["status"] == "Healthy" {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{APP} not Synced and Healthy: {status}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Drift with a long line, so the diff has something wide to show side by side.
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), dest.name());
    let long = format!(
        "--feature-flags={}",
        "payments-ledger-reconciliation,".repeat(8)
    );
    cms.patch(
        "payments-api",
        &PatchParams::default(),
        &Patch::Merge(&json!({"data": {"LOG_LEVEL": "debug", "JAVA_OPTS": long}})),
    )
    .await
    .expect("drift the ConfigMap");

    let projects: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &appproject_resource());
    let narrow: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": NARROW},
        "spec": {"sourceRepos": [repo.url()],
                 "destinations": [{"server": "https://kubernetes.default.svc", "namespace": dest.name()}]}
    }))
    .expect("project");
    projects
        .create(&PostParams::default(), &narrow)
        .await
        .expect("create the narrow project");

    // A reachable repository the narrow project does not list: refused for the project, not
    // for its reachability (Argo checks that first).
    let other = GitRepo::new();
    other.commit(&super::files("v1.3.2"), "another repository");
    let repo_url = repo.url();
    let other_url = other.url();
    stack
        .run(
            "views.mjs",
            &[
                ("PLUMB_APP", APP),
                ("PLUMB_REPO_URL", repo_url.as_str()),
                ("PLUMB_OTHER_REPO_URL", other_url.as_str()),
                ("PLUMB_DEST_NAMESPACE", dest.name()),
                ("PLUMB_NARROW_PROJECT", NARROW),
            ],
        )
        .await;
    // What the form and the REST refusals left: no Application was created.
    for refused in [
        "ui-views-unreachable",
        "ui-views-narrow-repo",
        "ui-views-narrow-dest",
    ] {
        assert!(
            apps.get_opt(refused).await.expect("read").is_none(),
            "{refused} was created although refused"
        );
    }
    controller.abort();
    stack.shutdown().await;
}
