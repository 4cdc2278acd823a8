//! One aggregated API group failing discovery (an APIService whose backend Service is gone, as
//! when metrics-server is down): the other kinds keep being compared and synced, the failing
//! group is reported, and an Application with an object of that group gets a condition that
//! names it, with nothing pruned.

use crate::*;

const APISERVICE: &str = "v1.faults.plumb.dev";

/// An APIService for `faults.plumb.dev/v1` whose backend Service does not exist; deleted when
/// dropped.
struct BrokenApiService;

impl BrokenApiService {
    fn create() -> Self {
        let _ = kubectl(&["create", "namespace", "faults-aggregated"]);
        kubectl_apply(&json!({
            "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": APISERVICE},
            "spec": {"group": "faults.plumb.dev", "version": "v1",
                     "service": {"namespace": "faults-aggregated", "name": "missing", "port": 443},
                     "insecureSkipTLSVerify": true, "groupPriorityMinimum": 1000, "versionPriority": 15}
        }));
        // The aggregator marks it unavailable within seconds; wait for that so the test runs
        // against the state it means to test.
        let deadline = std::time::Instant::now() + DEADLINE;
        loop {
            let status = kubectl_ok(&[
                "get",
                "apiservice",
                APISERVICE,
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Available\")].status}",
            ]);
            if status == "False" {
                return Self;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "APIService not judged"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}

impl Drop for BrokenApiService {
    fn drop(&mut self) {
        let _ = kubectl(&["delete", "apiservice", APISERVICE, "--ignore-not-found"]);
    }
}

fn comparison_error(app: &Value) -> Option<String> {
    app["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "ComparisonError")
        .and_then(|c| c["message"].as_str())
        .map(str::to_string)
}

#[test]
fn an_unavailable_aggregated_api_is_reported_and_the_rest_keeps_syncing() {
    let _serial = serial();
    let ctl_ns = control_namespace("ctl-discovery");
    let ok_dest = env().namespace("dest-ok");
    let broken_dest = env().namespace("dest-broken");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            ("ok/a.yaml", configmap_yaml("ok-a", "1")),
            ("broken/a.yaml", configmap_yaml("broken-a", "1")),
            ("broken/b.yaml", configmap_yaml("broken-b", "1")),
        ],
        "two apps",
    );
    let ctl_name = ctl_ns.name();
    create_app(
        ctl_name,
        "ok",
        &repo.url(),
        "ok",
        "main",
        ok_dest.name(),
        automated(),
    );
    create_app(
        ctl_name,
        "broken",
        &repo.url(),
        "broken",
        "main",
        broken_dest.name(),
        automated(),
    );
    let mut ctl = Controller::start(ctl_name);
    for app in ["ok", "broken"] {
        ctl.wait_app(app, "synced", |a| synced_healthy(a) && history_len(a) == 1);
    }
    let broken_objects = configmaps(broken_dest.name());

    // The group breaks while the controller runs. Git then adds a kind of that group to one
    // app and drops one of its ConfigMaps; the other app gets a new ConfigMap.
    let apiservice = BrokenApiService::create();
    repo.commit(
        &[
            (
                "broken/widget.yaml",
                "apiVersion: faults.plumb.dev/v1\nkind: Widget\nmetadata:\n  name: w\nspec: {}\n"
                    .to_string(),
            ),
            ("ok/b.yaml", configmap_yaml("ok-b", "1")),
        ],
        "a widget",
    );
    repo.remove(&["broken/b.yaml"], "drop broken-b");
    refresh(ctl_name, "ok");
    refresh(ctl_name, "broken");

    let app = ctl.wait_app("broken", "reported with a ComparisonError", |a| {
        sync_status(a) == "Unknown" && comparison_error(a).is_some()
    });
    let msg = comparison_error(&app).unwrap();
    assert!(
        msg.contains("faults.plumb.dev/v1") && msg.contains("faults.plumb.dev/Widget"),
        "the condition names the group and the object: {msg}"
    );
    ctl.wait_app("ok", "synced with the new ConfigMap", |a| {
        synced_healthy(a) && history_len(a) == 2
    });
    assert!(exists(ok_dest.name(), "configmap", "ok-b"));
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(
        configmaps(broken_dest.name()),
        broken_objects,
        "nothing pruned or written in the app that cannot be compared"
    );
    assert_eq!(history_len(&app_json(ctl_name, "broken").unwrap()), 1);

    // A controller that starts while the group is broken: starts, reports, syncs the rest.
    ctl.restart();
    repo.commit(&[("ok/c.yaml", configmap_yaml("ok-c", "1"))], "ok-c");
    refresh(ctl_name, "ok");
    refresh(ctl_name, "broken");
    ctl.wait_app("ok", "synced after a restart", |a| {
        synced_healthy(a) && history_len(a) == 3
    });
    let app = ctl.wait_app("broken", "still reported", |a| {
        sync_status(a) == "Unknown" && comparison_error(a).is_some_and(|m| m.contains("Widget"))
    });
    assert_eq!(history_len(&app), 1);
    assert_eq!(configmaps(broken_dest.name()), broken_objects);
    ctl.assert_running();

    // Back to normal: the group gone from the cluster and the Widget from Git; the app compares
    // again, and the ConfigMap Git dropped is now pruned, as it should be.
    drop(apiservice);
    repo.remove(&["broken/widget.yaml"], "no widget");
    refresh(ctl_name, "broken");
    let app = ctl.wait_app("broken", "synced again", |a| {
        synced_healthy(a) && comparison_error(a).is_none() && history_len(a) == 2
    });
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let after = configmaps(broken_dest.name());
    assert_eq!(after.keys().collect::<Vec<_>>(), ["broken-a"]);
    assert_eq!(after["broken-a"], broken_objects["broken-a"]);
}
