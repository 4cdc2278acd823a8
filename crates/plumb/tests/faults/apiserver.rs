//! kube-apiserver restarted while a sync waits between waves: the sync goes on when the API server
//! is back, applies each object once, finishes once, and the status is true again.

use crate::*;
use plumb_testenv::Component;

#[test]
fn a_sync_survives_a_kube_apiserver_restart() {
    let _serial = serial();
    let ctl_ns = control_namespace("ctl-apiserver");
    let dest = env().namespace("dest-apiserver");
    let gate = gate_name("apiserver");
    let repo = plumb_testenv::git::GitRepo::new();
    let files = gated_files(&gate);
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    repo.commit(&files, "gated app");
    let name = "through-restart";
    create_app(
        ctl_ns.name(),
        name,
        &repo.url(),
        "app",
        "main",
        dest.name(),
        json!({}),
    );

    let ctl = Controller::start(ctl_ns.name());
    ctl.wait_app(name, "compared", |a| sync_status(a) == "OutOfSync");
    request_sync(ctl_ns.name(), name);
    let running = wait_in_wave_zero(&ctl, name, dest.name());
    let started_at = running["status"]["operationState"]["startedAt"].clone();
    let deployment = uid(dest.name(), "deployment", "gated");
    let before = uid(dest.name(), "configmap", "before");

    env()
        .restart(Component::KubeApiserver)
        .unwrap_or_else(|e| panic!("{e}"));
    open_gate(&gate);

    let app = ctl.wait_app(name, "synced to the end", |a| {
        a["status"]["operationState"]["phase"] == "Succeeded" && synced_healthy(a)
    });
    assert_eq!(
        app["status"]["operationState"]["startedAt"], started_at,
        "the operation that was running finished; no second one started"
    );
    assert_eq!(history_len(&app), 1, "one sync, recorded once");
    assert!(exists(dest.name(), "configmap", "after"), "wave 1 applied");
    assert_eq!(
        uid(dest.name(), "deployment", "gated"),
        deployment,
        "not recreated"
    );
    assert_eq!(
        uid(dest.name(), "configmap", "before"),
        before,
        "not recreated"
    );
    let results = app["status"]["operationState"]["syncResult"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for r in &results {
        assert_eq!(r["status"], "Synced", "{r}");
    }
    assert_eq!(results.len(), 3, "each object once: {results:?}");
}
