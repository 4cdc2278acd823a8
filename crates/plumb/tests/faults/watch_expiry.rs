//! Watch expiry: the controller misses events (frozen while objects change), etcd's history is
//! compacted past its resourceVersions and the API server restarted, so resuming its watches
//! ends in 410 Gone. It must relist, see the missed deletion and change, and heal them; objects
//! that did not change are not written.

use std::time::Duration;

use crate::*;
use plumb_testenv::Component;

#[test]
fn expired_watches_relist_and_see_what_was_missed() {
    let _serial = serial();
    let s = Steady::new("expiry", "watch-expiry");
    let objects = configmaps(s.dest.name());
    let ns = s.dest.name();

    s.ctl.signal("STOP");
    let thaw = scopeguard(&s.ctl);
    kubectl_ok(&["-n", ns, "delete", "configmap", "cm-b"]);
    kubectl_ok(&[
        "-n",
        ns,
        "patch",
        "configmap",
        "cm-a",
        "--type=merge",
        "-p",
        r#"{"data":{"value":"tampered"}}"#,
    ]);
    // More writes, so the compaction below is well past every resourceVersion the controller saw.
    for i in 0..5 {
        kubectl_ok(&["-n", ns, "create", "configmap", &format!("noise-{i}")]);
    }
    let revision = env().compact_etcd().unwrap_or_else(|e| panic!("{e}"));
    assert!(revision > 0);
    env()
        .restart(Component::KubeApiserver)
        .unwrap_or_else(|e| panic!("{e}"));
    drop(thaw);

    // Self-heal needs the live cache to know cm-b is gone and cm-a changed: only a relist can
    // tell it now. The two changes can reach the cache apart (the deletion before the watch broke,
    // the change with the relist), so the first self-heal may revert cm-b alone and the second
    // cm-a after Argo's self-heal backoff: wait for both. The self-heal operation's end is written
    // after the objects are back, so a comparison can read Synced and Healthy while the operation
    // is still Running: wait for its end too.
    let app = s.ctl.wait_app(s.name, "healed after the relist", |a| {
        synced_healthy(a)
            && exists(ns, "configmap", "cm-b")
            && value_of(ns, "cm-a") == "a"
            && a["status"]["operationState"]["phase"] != "Running"
    });
    let after = configmaps(ns);
    assert_ne!(after["cm-b"].0, objects["cm-b"].0, "cm-b was created again");
    assert_eq!(
        value_of(ns, "cm-a"),
        "a",
        "the missed change to cm-a was reverted"
    );
    assert_eq!(after["cm-c"], objects["cm-c"], "cm-c was not written");
    for i in 0..5 {
        assert!(
            exists(ns, "configmap", &format!("noise-{i}")),
            "untracked objects are not pruned"
        );
    }
    assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
    let log = s.ctl.log();
    assert!(
        log.lines()
            .any(|l| l.contains("live cache:") && l.contains("too old resource version")),
        "the live cache's watches did expire (410 Gone, 'too old resource version') and relisted:\n{log}"
    );
    std::thread::sleep(Duration::from_secs(1));
}

/// A ConfigMap's `data.value`; empty when it cannot be read (the poll asks again).
fn value_of(ns: &str, configmap: &str) -> String {
    let out = kubectl(&[
        "-n",
        ns,
        "get",
        "configmap",
        configmap,
        "-o",
        "jsonpath={.data.value}",
    ]);
    text(&out.stdout)
}

/// Thaws the controller when dropped, even when the test fails half-way.
struct Thaw<'a>(&'a Controller);

fn scopeguard(ctl: &Controller) -> Thaw<'_> {
    Thaw(ctl)
}

impl Drop for Thaw<'_> {
    fn drop(&mut self) {
        self.0.signal("CONT");
    }
}
