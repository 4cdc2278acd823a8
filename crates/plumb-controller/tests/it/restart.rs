//! A controller that finds an operation `Running` that it did not start (it was restarted in the
//! middle of it) fails it with a clear message and never runs it again.

use kube::api::{Patch, PatchParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::json;

use crate::support::Controlled;

#[tokio::test]
async fn an_operation_interrupted_by_a_restart_is_failed_not_rerun() {
    let env = TestEnv::shared();
    let dest = env.namespace("dest-restart");
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: restart\ndata:\n  a: b\n",
        )],
        "cm",
    );
    let name = format!("restart-{}", std::process::id());

    // The state a controller leaves behind when it dies mid-sync: `.operation` still requested
    // and `operationState` Running. Written before any controller watches this namespace.
    let ctl_ns = env.namespace("ctl-restart");
    crate::support::install_crds(env);
    let client = env.client().await;
    let apps: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        client.clone(),
        ctl_ns.name(),
        &plumb_app::application_resource(),
    );
    let app: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}},
        "operation": {"sync": {"prune": true}, "initiatedBy": {"username": "before-restart"}}
    }))
    .expect("app");
    apps.create(&Default::default(), &app)
        .await
        .expect("create");
    let status = json!({"status": {"operationState": {
        "operation": {"sync": {"prune": true}, "initiatedBy": {"username": "before-restart"}},
        "phase": "Running", "message": "one or more tasks are running", "startedAt": "2026-11-29T10:00:00Z"
    }}});
    apps.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");

    let ctl = Controlled::start_in(env, ctl_ns).await;
    let app = ctl
        .wait_app(&name, "interrupted operation failed", |a| {
            a["status"]["operationState"]["phase"] == "Failed"
        })
        .await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["message"], plumb_controller_interrupted());
    assert!(
        app["operation"].is_null(),
        "the request is cleared, so it cannot run again"
    );
    assert!(st["syncResult"].is_null(), "nothing was applied");
    assert_eq!(st["startedAt"], "2026-11-29T10:00:00Z");
    let out = env
        .kubectl()
        .args(["-n", dest.name(), "get", "configmap", "restart"])
        .output()
        .expect("kubectl");
    assert!(
        !out.status.success(),
        "the interrupted sync was not run again"
    );
}

fn plumb_controller_interrupted() -> &'static str {
    "Operation was interrupted by a controller restart before it finished; it was not run again. Request the sync again."
}
