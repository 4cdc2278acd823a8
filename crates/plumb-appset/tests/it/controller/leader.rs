//! Two controller replicas on one namespace: only the one whose gate says it leads reconciles
//! (the other is asked and writes nothing); when the leader stops, the other takes over and
//! does what was missed while nobody led, without a new change to trigger it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use plumb_appset::controller as appset;
use plumb_testenv::TestEnv;
use serde_json::json;

use super::support::{Running, eventually, list_set, metrics_of};

/// What a replica's gate answers, and how often it was asked.
#[derive(Default)]
struct Lead {
    leading: AtomicBool,
    asked: AtomicUsize,
}

impl Lead {
    fn new(leading: bool) -> Arc<Self> {
        let l = Arc::new(Self::default());
        l.leading.store(leading, Ordering::SeqCst);
        l
    }

    fn gate(self: &Arc<Self>) -> appset::Gate {
        let l = self.clone();
        Arc::new(move || {
            l.asked.fetch_add(1, Ordering::SeqCst);
            l.leading.load(Ordering::SeqCst)
        })
    }

    fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn only_the_leader_reconciles_and_the_other_takes_over() {
    let leader = Lead::new(true);
    let follower = Lead::new(false);
    let r = Running::start_on(TestEnv::shared(), "actlt-leader", |_| {}, leader.gate()).await;
    let (second, second_metrics) = r.another(follower.gate());
    r.create_set(list_set("fleet", &[("a", "apps/a")], json!({})))
        .await;
    eventually("a created by the leader", || async {
        (r.app_names().await == ["a"]).then_some(())
    })
    .await;
    eventually("the follower's gate asked about the set", || async {
        (follower.asked() > 0).then_some(())
    })
    .await;
    // The leader's reconcile is recorded once it ends (after its writes).
    eventually("the leader's reconcile recorded", || async {
        r.metrics_text().contains("name=\"fleet\"").then_some(())
    })
    .await;
    // The follower saw the set and reconciled nothing: no reconcile and no info of it recorded.
    let follower_metrics = metrics_of(&second_metrics);
    assert!(!follower_metrics.contains("fleet"), "{follower_metrics}");

    // The leader stops (its Lease lapses): nobody leads while the set changes.
    leader.leading.store(false, Ordering::SeqCst);
    r.stop();
    let asked = follower.asked();
    r.patch_set(
        "fleet",
        json!({"spec": {"generators": [{"list": {"elements": [
            {"name": "a", "path": "apps/a"}, {"name": "b", "path": "apps/b"}]}}]}}),
    )
    .await;
    eventually("the follower's gate asked about the change", || async {
        (follower.asked() > asked).then_some(())
    })
    .await;
    assert_eq!(
        r.app_names().await,
        ["a"],
        "a replica that does not lead wrote"
    );

    // The follower becomes the leader: the change it saw while following is done now.
    follower.leading.store(true, Ordering::SeqCst);
    eventually("b created by the new leader", || async {
        (r.app_names().await == ["a", "b"]).then_some(())
    })
    .await;
    eventually("the new leader's reconcile recorded", || async {
        metrics_of(&second_metrics)
            .contains("name=\"fleet\"")
            .then_some(())
    })
    .await;
    second.abort();
}
