//! The controller killed with SIGKILL in the middle of a sync and started again: the operation it
//! found Running is failed with a message, never resumed or run a second time, and the status is
//! true again; a new sync request then runs once.

use crate::*;

#[test]
fn a_controller_killed_mid_sync_fails_the_operation_and_never_runs_it_twice() {
    let _serial = serial();
    let ctl_ns = control_namespace("ctl-kill");
    let dest = env().namespace("dest-kill");
    let gate = gate_name("kill");
    let repo = plumb_testenv::git::GitRepo::new();
    let files = gated_files(&gate);
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
    repo.commit(&files, "gated app");
    let name = "killed";
    create_app(
        ctl_ns.name(),
        name,
        &repo.url(),
        "app",
        "main",
        dest.name(),
        json!({}),
    );

    let mut ctl = Controller::start(ctl_ns.name());
    ctl.wait_app(name, "compared", |a| sync_status(a) == "OutOfSync");
    request_sync(ctl_ns.name(), name);
    let running = wait_in_wave_zero(&ctl, name, dest.name());
    let started_at = running["status"]["operationState"]["startedAt"].clone();
    let deployment = uid(dest.name(), "deployment", "gated");
    let before = uid(dest.name(), "configmap", "before");

    ctl.kill();
    // The wave the dead controller waited for completes while no controller runs.
    open_gate(&gate);
    ctl.restart();

    let app = ctl.wait_app(name, "operation failed as interrupted", |a| {
        a["status"]["operationState"]["phase"] == "Failed"
    });
    let st = &app["status"]["operationState"];
    assert!(
        st["message"]
            .as_str()
            .is_some_and(|m| m.contains("interrupted by a controller restart")),
        "the message says what happened: {st}"
    );
    assert_eq!(
        st["startedAt"], started_at,
        "the same operation, not a new one"
    );
    assert!(
        app["operation"].is_null(),
        "the request is cleared: it cannot run again"
    );
    assert_eq!(history_len(&app), 0, "an interrupted sync is no deployment");

    // Status true again: the comparison runs and shows wave 1 never applied.
    let app = ctl.wait_app(name, "compared after the restart", |a| {
        sync_status(a) == "OutOfSync"
            && a["status"]["resources"].as_array().is_some_and(|rs| {
                rs.iter()
                    .any(|r| r["name"] == "after" && r["status"] == "OutOfSync")
            })
    });
    assert_eq!(app["status"]["operationState"]["phase"], "Failed");
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        !exists(dest.name(), "configmap", "after"),
        "the interrupted sync was not resumed by the new process"
    );
    assert_eq!(uid(dest.name(), "deployment", "gated"), deployment);
    assert_eq!(uid(dest.name(), "configmap", "before"), before);

    // A new request runs once, to the end.
    request_sync(ctl_ns.name(), name);
    let app = ctl.wait_app(name, "synced by a new request", |a| {
        a["status"]["operationState"]["phase"] == "Succeeded" && synced_healthy(a)
    });
    assert_eq!(history_len(&app), 1);
    assert_ne!(app["status"]["operationState"]["startedAt"], started_at);
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
}
