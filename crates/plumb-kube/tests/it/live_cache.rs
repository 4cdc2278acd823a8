//! The live cache: tracked objects are kept whole and indexed by Application, untracked objects
//! are kept as metadata, and changes are reported per Application.

use std::time::Duration;

use futures::StreamExt;
use plumb_kube::{LiveCacheConfig, LiveEvent, live_cache, tracking_id};
use plumb_model::ResourceKey;
use plumb_model::annotations::TRACKING_ID;
use plumb_testenv::TestEnv;
use serde_json::json;
use tokio::sync::mpsc;

use crate::{DEADLINE, eventually, setup};

async fn next_change_for(
    rx: &mut mpsc::UnboundedReceiver<LiveEvent>,
    app: &str,
    key: &ResourceKey,
    tree: bool,
) {
    let wait = async {
        while let Some(event) = rx.recv().await {
            if let LiveEvent::Changed(change) = event {
                let apps = if tree { &change.tree } else { &change.managed };
                if &change.key == key && apps.contains(app) {
                    return;
                }
            }
        }
        panic!("live cache stream ended");
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .unwrap_or_else(|_| panic!("no change of {key} reported for {app} within {DEADLINE:?}"));
}

#[tokio::test]
async fn tracked_objects_are_indexed_by_app_and_changes_are_reported() {
    let ns = TestEnv::shared().namespace("live-cache");
    let (client, discovery, applier) = setup().await;
    let app = format!("app-{}", ns.name());

    let (reader, events) = live_cache(client, &discovery.catalog(), LiveCacheConfig::default());
    assert!(
        !reader
            .watched_kinds()
            .iter()
            .any(|gk| gk.kind == "Event" || gk.kind == "Lease")
    );
    assert!(
        reader
            .watched_kinds()
            .iter()
            .any(|gk| gk.kind == "ConfigMap")
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    // The test decides where the stream runs, as the controller will.
    let driver = tokio::spawn(events.for_each(move |event| {
        let _ = tx.send(event.expect("watch error"));
        async {}
    }));
    tokio::time::timeout(DEADLINE, async {
        while let Some(event) = rx.recv().await {
            if event == LiveEvent::Ready {
                return;
            }
        }
    })
    .await
    .expect("live cache Ready");

    let tracked_key = ResourceKey::new("", "ConfigMap", ns.name(), "tracked");
    let tracked = |value: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "tracked", "namespace": ns.name(),
                            "annotations": {TRACKING_ID: tracking_id(&app, &tracked_key)}},
               "data": {"value": value}})
    };
    applier.apply(&tracked("1"), None).await.unwrap();
    let untracked = json!({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "untracked", "namespace": ns.name()}, "data": {"big": "x".repeat(4096)}});
    applier.apply(&untracked, None).await.unwrap();
    next_change_for(&mut rx, &app, &tracked_key, false).await;

    let objects = reader.app_objects(&app);
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0].key, tracked_key);
    let body = objects[0].object.as_ref().expect("full object for tracked");
    assert_eq!(body["data"]["value"], "1");
    assert_eq!(body["kind"], "ConfigMap");

    let untracked_key = ResourceKey::new("", "ConfigMap", ns.name(), "untracked");
    let entry = eventually("the untracked ConfigMap in the cache", || async {
        reader.get(&untracked_key)
    })
    .await;
    assert!(
        entry.object.is_none(),
        "untracked objects keep metadata only"
    );
    assert!(entry.tracked_by.is_none());
    assert!(!entry.uid.is_empty() && !entry.resource_version.is_empty());

    applier.apply(&tracked("2"), None).await.unwrap();
    next_change_for(&mut rx, &app, &tracked_key, false).await;
    let body = reader.app_objects(&app)[0].object.clone().unwrap();
    assert_eq!(body["data"]["value"], "2");

    // Owned objects: the ReplicaSet kube-controller-manager creates for a tracked Deployment is
    // reported as a tree change of the Deployment's app.
    let deploy_key = ResourceKey::new("apps", "Deployment", ns.name(), "web");
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns.name(),
                     "annotations": {TRACKING_ID: tracking_id(&app, &deploy_key)}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "registry.example.com/web:1"}]}}}
    });
    let stored = applier.apply(&deployment, None).await.unwrap();
    let uid = stored["metadata"]["uid"].as_str().unwrap().to_string();
    let rs = eventually("a ReplicaSet owned by the Deployment", || async {
        reader
            .children(&uid)
            .into_iter()
            .find(|c| c.key.kind == "ReplicaSet")
    })
    .await;
    assert!(rs.object.is_none());
    assert_eq!(rs.owners[0].uid, uid);
    next_change_for(&mut rx, &app, &rs.key, true).await;
    assert_eq!(reader.app_objects(&app).len(), 2);

    // Deleting a tracked object removes it from the app's index.
    applier
        .delete(&tracked_key, plumb_kube::PropagationPolicy::Background)
        .await
        .unwrap();
    next_change_for(&mut rx, &app, &tracked_key, false).await;
    assert_eq!(
        reader
            .app_objects(&app)
            .iter()
            .map(|o| o.key.kind.as_str())
            .collect::<Vec<_>>(),
        ["Deployment"]
    );

    driver.abort();
    let _ = tokio::time::timeout(Duration::from_secs(5), driver).await;
}
