//! An app of apps with sync waves, on the real control plane: a child Application in an earlier
//! wave holds the later waves exactly when Argo CD's would. Argo CD has given an Application no
//! health of its own since 1.8, so by default it holds nothing; with the health override Argo CD
//! documents (`resource.customizations.health.argoproj.io_Application`) the later waves wait
//! until the child reports Healthy.

use std::time::Duration;

use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::missing_status::{kubectl, kubectl_apply};
use crate::support::Controlled;

/// Argo CD's documented health check for Applications (operator manual, "Argo CD App").
const APP_HEALTH: &str = r#"hs = {}
hs.status = "Progressing"
hs.message = ""
if obj.status ~= nil then
  if obj.status.health ~= nil then
    hs.status = obj.status.health.status
    if obj.status.health.message ~= nil then
      hs.message = obj.status.health.message
    end
  end
end
return hs
"#;

/// A repository with a parent (`parent/`: a child Application `child` in `child_ns` in wave 0,
/// a ConfigMap in wave 1) and the child's own source (`child/`: a ConfigMap); the parent
/// Application (no automated sync, neither has the child), compared. Keep the repository.
async fn app_of_apps(ctl: &Controlled, child_ns: &str, child: &str, dest: &str) -> GitRepo {
    let repo = GitRepo::new();
    let child_app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": child, "namespace": child_ns,
                     "annotations": {"argocd.argoproj.io/sync-wave": "0"}},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "child"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}}
    });
    let after = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "after", "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
        "data": {"k": "v"}});
    let child_cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "from-child"}, "data": {"k": "v"}});
    repo.commit(
        &[
            ("parent/child.yaml", child_app.to_string()),
            ("parent/after.yaml", after.to_string()),
            ("child/cm.yaml", child_cm.to_string()),
        ],
        "app of apps",
    );
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "parent"},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "parent"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest}}
    }))
    .await;
    ctl.wait_app("parent", "compared", |a| {
        !a["status"]["sync"]["status"].is_null()
    })
    .await;
    repo
}

fn exists(env: &TestEnv, ns: &str, kind: &str, name: &str) -> bool {
    env.kubectl()
        .args(["-n", ns, "get", kind, name])
        .output()
        .expect("kubectl")
        .status
        .success()
}

#[tokio::test]
async fn a_child_application_holds_no_wave_by_default_as_in_argo_cd() {
    let env = TestEnv::shared();
    let ctl = Controlled::start(env, "ctl-aoa-default").await;
    let dest = env.namespace("dest-aoa-default");
    // The child lives where no controller looks: it never gets a status. Argo CD lets it
    // through at once (no health), and so does Plumb.
    let _repo = app_of_apps(&ctl, dest.name(), "unwatched-child", dest.name()).await;
    let app = ctl.sync("parent", json!({})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    assert!(exists(env, dest.name(), "configmap", "after"));
    let child: Value = serde_json::from_str(&kubectl(
        env,
        &[
            "-n",
            dest.name(),
            "get",
            "applications.argoproj.io",
            "unwatched-child",
            "-o",
            "json",
        ],
    ))
    .expect("child json");
    assert!(child["status"].is_null(), "{child:#}");
}

#[tokio::test]
async fn with_argo_cds_health_override_a_child_application_holds_later_waves_until_healthy() {
    let env = TestEnv::shared();
    crate::support::install_crds(env);
    let ns = env.namespace("ctl-aoa-override");
    kubectl_apply(
        env,
        ns.name(),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
                "data": {"resource.customizations.health.argoproj.io_Application": APP_HEALTH}}),
    );
    let control = ns.name().to_string();
    let ctl = Controlled::start_in(env, ns).await;
    let dest = env.namespace("dest-aoa-override");
    let _repo = app_of_apps(&ctl, &control, "child", dest.name()).await;
    let who = ctl.request_op("parent", json!({"sync": {}})).await;
    let waiting = "waiting for healthy state of argoproj.io/Application/child";
    ctl.wait_app("parent", "the sync waits for the child", |a| {
        a["status"]["operationState"]["message"] == waiting
    })
    .await;
    // The child is compared (its controller is this one) but not synced: its health is Missing,
    // and the parent keeps waiting.
    ctl.wait_app("child", "compared", |a| {
        a["status"]["health"]["status"] == "Missing"
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let app = ctl
        .wait_app("parent", "the operation state", |_| true)
        .await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Running", "{st:#}");
    assert_eq!(st["message"], waiting, "{st:#}");
    assert!(
        !exists(env, dest.name(), "configmap", "after"),
        "wave 1 went before the child was healthy"
    );

    // The child is synced and turns Healthy: the parent's next wave goes.
    let child = ctl.sync("child", json!({})).await;
    assert_eq!(child["status"]["operationState"]["phase"], "Succeeded");
    let app = ctl.wait_op("parent", &who).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    assert!(exists(env, dest.name(), "configmap", "after"));
}
