//! etcd stopped and started again under a running controller: nothing is pruned or rewritten
//! while the API server cannot read or write, the controller keeps running, and afterwards it
//! watches, compares and syncs again.

use std::time::Duration;

use crate::*;
use plumb_testenv::Component;

#[test]
fn an_etcd_restart_loses_nothing() {
    let _serial = serial();
    let mut s = Steady::new("etcd", "etcd-restart");
    let objects = configmaps(s.dest.name());
    assert_eq!(objects.len(), 3);
    let history = history_len(&s.app());

    env()
        .stop(Component::Etcd)
        .unwrap_or_else(|e| panic!("{e}"));
    // Long enough for watches to break and reconciles to fail against the API server.
    std::thread::sleep(Duration::from_secs(8));
    s.assert_running();
    env()
        .start_component(Component::Etcd)
        .unwrap_or_else(|e| panic!("{e}"));

    // The status comes back true without any write to the objects.
    s.refresh(true);
    let app = s.ctl.wait_app(s.name, "compared after the outage", |a| {
        synced_healthy(a) && a["metadata"]["annotations"]["argocd.argoproj.io/refresh"].is_null()
    });
    assert_eq!(
        history_len(&app),
        history,
        "no sync ran for an unchanged revision"
    );
    assert_eq!(
        configmaps(s.dest.name()),
        objects,
        "no object deleted, recreated or written during the outage"
    );
    s.assert_running();

    // Watches and automation work again: a new commit is synced, once.
    s.add_and_sync("cm-d");
    let after = configmaps(s.dest.name());
    for (name, v) in &objects {
        assert_eq!(after.get(name), Some(v), "{name} untouched by the new sync");
    }
}
