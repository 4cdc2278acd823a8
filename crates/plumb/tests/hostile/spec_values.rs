//! Attacks: values in an Application's spec that only a parser sees. An Application author
//! controls its retry strategy's durations; a value past what a duration can hold must be refused
//! like any other bad value (Argo's defaults apply), never panic the task that runs the operation
//! (which would leave the operation running forever and the controller degraded).

use serde_json::json;

use crate::running::{Running, env, unique};

#[test]
fn a_retry_backoff_past_any_duration_falls_back_to_the_default() {
    let ctl = Running::start("hostile-spec", &[]);
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n",
        )],
        "one object",
    );
    // The destination namespace does not exist and CreateNamespace is off: every apply fails,
    // so the operation retries.
    let missing = format!("{}-absent", unique("ns"));
    let name = unique("retry");
    ctl.create_app(
        &name,
        json!({"project": "default", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": missing}}),
    );
    let huge = "99999999999999999999999h";
    ctl.patch_app(
        &name,
        &json!({"operation": {
            "sync": {},
            "retry": {"limit": 1, "backoff": {"duration": huge, "maxDuration": huge, "factor": 2}},
            "initiatedBy": {"username": "hostile"}
        }}),
    );
    let app = ctl.wait_app(&name, "operation finished", |a| {
        a["operation"].is_null()
            && matches!(
                a["status"]["operationState"]["phase"].as_str(),
                Some("Failed" | "Error" | "Succeeded")
            )
    });
    let state = &app["status"]["operationState"];
    assert_eq!(state["phase"], "Failed", "{state:#}");
    assert_eq!(state["retryCount"], 1, "{state:#}");
    let message = state["message"].as_str().unwrap_or_default();
    assert!(message.contains("(retried 1 times)"), "{message}");
    // The controller is still running and still reconciling other Applications.
    let log = ctl.log();
    assert!(!log.contains("panicked"), "{log}");
    let dest = env().namespace("hostile-spec-dest");
    let other = unique("after");
    ctl.create_app(
        &other,
        json!({"project": "default", "source": {"repoURL": repo.url(), "path": "app"},
               "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()}}),
    );
    ctl.wait_app(&other, "compared", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    });
}
