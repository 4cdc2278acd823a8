//! One aggregated API group failing discovery (an APIService whose backend Service is gone, as
//! when metrics-server is down): the other kinds keep being compared and synced, the failing
//! group is reported, and an Application with an object of that group gets a condition that
//! names it, with nothing pruned. Also when the group was served at start and its backend
//! stops answering later (and then comes back).

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

const LATE_GROUP: &str = "late.faults.plumb.dev";
const LATE_APISERVICE: &str = "v1.late.faults.plumb.dev";

/// Waits for the APIService's `Available` condition to read `want`.
fn wait_available(name: &str, want: &str) {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        let status = kubectl(&[
            "get",
            "apiservice",
            name,
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Available\")].status}",
        ]);
        if text(&status.stdout) == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "APIService {name} not Available={want}: {}",
            text(&status.stderr)
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A CRD group (served by kube-apiserver itself) whose APIService is later pointed at a
/// Service that does not exist, which is what an aggregated API whose backend dies looks like
/// to clients (the apiserver dials nothing: see docs/testing.md, network rules); pointing it back
/// brings the group back. The CRD is deleted when dropped.
struct LateGroup;

impl LateGroup {
    fn create() -> Self {
        kubectl_apply(&json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("gadgets.{LATE_GROUP}")},
            "spec": {"group": LATE_GROUP, "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                              "x-kubernetes-preserve-unknown-fields": true}}}]}
        }));
        kubectl_ok(&[
            "wait",
            "--for=condition=Established",
            "--timeout=120s",
            &format!("crd/gadgets.{LATE_GROUP}"),
        ]);
        wait_available(LATE_APISERVICE, "True");
        Self
    }

    /// The backend stops answering.
    fn break_backend(&self) {
        let _ = kubectl(&["create", "namespace", "faults-aggregated"]);
        kubectl_ok(&[
            "patch",
            "apiservice",
            LATE_APISERVICE,
            "--type=merge",
            "-p",
            &json!({
                "metadata": {"labels": {"kube-aggregator.kubernetes.io/automanaged": null}},
                "spec": {"service": {"namespace": "faults-aggregated", "name": "missing", "port": 443},
                         "insecureSkipTLSVerify": true}
            })
            .to_string(),
        ]);
        wait_available(LATE_APISERVICE, "False");
    }

    /// The backend answers again. Pointing the APIService back at the apiserver itself
    /// (`service: null`) leaves aggregated discovery reporting the group `Stale` (kube-apiserver
    /// 1.36 keeps the remote entry); deleting it lets the CRD registration controller recreate
    /// the local APIService, and discovery serves the group again.
    fn restore_backend(&self) {
        kubectl_ok(&["delete", "apiservice", LATE_APISERVICE]);
        let deadline = std::time::Instant::now() + DEADLINE;
        while !kubectl(&["get", "apiservice", LATE_APISERVICE])
            .status
            .success()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the local APIService was not recreated"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        wait_available(LATE_APISERVICE, "True");
    }
}

impl Drop for LateGroup {
    fn drop(&mut self) {
        let _ = kubectl(&[
            "delete",
            "crd",
            &format!("gadgets.{LATE_GROUP}"),
            "--ignore-not-found",
            "--wait=false",
        ]);
    }
}

/// The gadget's uid, read while its group is served.
fn gadget_uid(ns: &str) -> String {
    kubectl_ok(&[
        "get",
        &format!("gadgets.{LATE_GROUP}"),
        "g",
        "-n",
        ns,
        "-o",
        "jsonpath={.metadata.uid}",
    ])
}

#[test]
fn an_aggregated_api_that_fails_after_start_is_reported_and_comes_back() {
    let _serial = serial();
    let group = LateGroup::create();
    let ctl_ns = control_namespace("ctl-discovery-late");
    let dest = env().namespace("dest-late");
    let ok_dest = env().namespace("dest-late-ok");
    let repo = plumb_testenv::git::GitRepo::new();
    repo.commit(
        &[
            ("late/a.yaml", configmap_yaml("late-a", "1")),
            ("late/b.yaml", configmap_yaml("late-b", "1")),
            (
                "late/gadget.yaml",
                format!("apiVersion: {LATE_GROUP}/v1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  size: 1\n"),
            ),
            ("ok/a.yaml", configmap_yaml("ok-a", "1")),
        ],
        "a gadget and config",
    );
    let ctl_name = ctl_ns.name();
    for (app, path, ns) in [("late", "late", dest.name()), ("ok", "ok", ok_dest.name())] {
        create_app(ctl_name, app, &repo.url(), path, "main", ns, automated());
    }
    let mut ctl = Controller::start(ctl_name);
    for app in ["late", "ok"] {
        ctl.wait_app(app, "synced", |a| synced_healthy(a) && history_len(a) == 1);
    }
    let before = configmaps(dest.name());
    let gadget = gadget_uid(dest.name());

    // The backend dies while the controller runs, with the group's kinds and the gadget in its
    // catalog and cache. Git drops a ConfigMap of that app meanwhile. No refresh is requested:
    // the controller must notice by itself (discovery runs again).
    group.break_backend();
    repo.remove(&["late/b.yaml"], "drop late-b");
    let app = ctl.wait_app("late", "reported with a ComparisonError", |a| {
        sync_status(a) == "Unknown" && comparison_error(a).is_some()
    });
    let msg = comparison_error(&app).unwrap();
    assert!(
        msg.contains(&format!("{LATE_GROUP}/v1")) && msg.contains("Gadget"),
        "the condition names the group version and the object, not a missing object: {msg}"
    );
    // The rest keeps syncing.
    repo.commit(&[("ok/b.yaml", configmap_yaml("ok-b", "1"))], "ok-b");
    refresh(ctl_name, "ok");
    ctl.wait_app("ok", "synced with the new ConfigMap", |a| {
        synced_healthy(a) && history_len(a) == 2
    });
    refresh(ctl_name, "late");
    std::thread::sleep(std::time::Duration::from_secs(3));
    let app = app_json(ctl_name, "late").unwrap();
    assert_eq!(sync_status(&app), "Unknown");
    assert_eq!(history_len(&app), 1, "no sync ran for the app");
    assert_eq!(
        configmaps(dest.name()),
        before,
        "nothing pruned or written in the app that cannot be compared"
    );
    ctl.assert_running();

    // The backend comes back: the app is compared again (the gadget found, not re-created), and
    // the ConfigMap Git dropped is now pruned, as it should be.
    group.restore_backend();
    refresh(ctl_name, "late");
    let app = ctl.wait_app("late", "synced again", |a| {
        synced_healthy(a) && comparison_error(a).is_none() && history_len(a) == 2
    });
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let after = configmaps(dest.name());
    assert_eq!(after.keys().collect::<Vec<_>>(), ["late-a"]);
    assert_eq!(after["late-a"], before["late-a"]);
    assert_eq!(
        gadget_uid(dest.name()),
        gadget,
        "the gadget was never pruned"
    );
}
