//! The live cache: tracked objects are kept whole and indexed by Application, untracked objects
//! are kept as metadata, and changes are reported per Application.

use std::time::Duration;

use futures::StreamExt;
use plumb_kube::{LiveCacheConfig, LiveEvent, live_cache, tracking_id};
use plumb_model::annotations::TRACKING_ID;
use plumb_model::{GroupKind, ResourceKey};
use plumb_testenv::TestEnv;
use serde_json::json;
use tokio::sync::mpsc;

use crate::{DEADLINE, eventually, setup};

/// Starts a live cache whose stream runs on a task and forwards events; waits until Ready.
async fn start_cache(
    client: kube::Client,
    catalog: &plumb_kube::ApiCatalog,
) -> (
    plumb_kube::LiveCacheReader,
    mpsc::UnboundedReceiver<LiveEvent>,
    tokio::task::JoinHandle<()>,
) {
    let (reader, events) = live_cache(client, catalog, LiveCacheConfig::default());
    let (tx, mut rx) = mpsc::unbounded_channel();
    // The test decides where the stream runs, as the controller will.
    let driver = tokio::spawn(events.for_each(move |event| {
        match event {
            Ok(event) => drop(tx.send(event)),
            // Watch errors are retried by the cache (a 410 Gone after a new kind's first list
            // is normal); they are reported, not fatal.
            Err(error) => eprintln!(
                "live cache: {error}: {:?}",
                std::error::Error::source(&error)
            ),
        }
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
    (reader, rx, driver)
}

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

/// Installs a namespaced CRD of `kind` (schemaless, one version `v1`) and waits until it is
/// Established; returns its name.
async fn install_crd(
    applier: &plumb_kube::Applier,
    group: &str,
    kind: &str,
    plural: &str,
) -> String {
    let crd_name = format!("{plural}.{group}");
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                           "listKind": format!("{kind}List")},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    applier.apply(&crd, None).await.unwrap();
    crate::wait_established(applier, &crd_name).await;
    crd_name
}

#[tokio::test]
async fn tracked_objects_are_indexed_by_app_and_changes_are_reported() {
    let ns = TestEnv::shared().namespace("live-cache");
    let (client, discovery, applier) = setup().await;
    let app = format!("app-{}", ns.name());
    let (reader, mut rx, driver) = start_cache(client.clone(), &discovery.catalog()).await;
    let kinds = reader.watched_kinds();
    assert!(
        !kinds
            .iter()
            .any(|gk| gk.kind == "Event" || gk.kind == "Lease")
    );
    assert!(kinds.iter().any(|gk| gk.kind == "ConfigMap"));

    let tracked_key = ResourceKey::new("", "ConfigMap", ns.name(), "tracked");
    let tracked = |value: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "tracked", "namespace": ns.name(),
                            "annotations": {TRACKING_ID: tracking_id(&app, &tracked_key, "")}},
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
    let body = objects[0].object().expect("full object for tracked");
    assert_eq!(body["data"]["value"], "1");
    assert_eq!(body["kind"], "ConfigMap");

    let untracked_key = ResourceKey::new("", "ConfigMap", ns.name(), "untracked");
    let entry = eventually("the untracked ConfigMap in the cache", || async {
        reader.get(&untracked_key)
    })
    .await;
    assert!(!entry.has_object(), "untracked objects keep metadata only");
    assert!(entry.tracked_by.is_none());
    assert!(!entry.uid.is_empty() && !entry.resource_version.is_empty());

    applier.apply(&tracked("2"), None).await.unwrap();
    next_change_for(&mut rx, &app, &tracked_key, false).await;
    let body = reader.app_objects(&app)[0].object().unwrap();
    assert_eq!(body["data"]["value"], "2");

    // Owned objects: the ReplicaSet kube-controller-manager creates for a tracked Deployment is
    // reported as a tree change of the Deployment's app.
    let deploy_key = ResourceKey::new("apps", "Deployment", ns.name(), "web");
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns.name(),
                     "annotations": {TRACKING_ID: tracking_id(&app, &deploy_key, "")}},
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
    assert!(!rs.has_object());
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

#[tokio::test]
async fn kinds_of_crds_created_later_are_watched_and_dropped_with_their_crd() {
    let ns = TestEnv::shared().namespace("live-crd");
    let (client, discovery, applier) = setup().await;
    let (reader, mut rx, driver) = start_cache(client.clone(), &discovery.catalog()).await;
    let app = format!("app-{}", ns.name());
    let group = format!("live{}.plumb-test.example.com", std::process::id());
    let gk = GroupKind::new(group.clone(), "Squid");
    assert!(!reader.watched_kinds().contains(&gk));

    let crd_name = install_crd(&applier, &group, "Squid", "squids").await;
    eventually("the new kind to be watched", || async {
        reader.watched_kinds().contains(&gk).then_some(())
    })
    .await;

    let key = ResourceKey::new(group.clone(), "Squid", ns.name(), "inky");
    let squid = json!({"apiVersion": format!("{group}/v1"), "kind": "Squid",
                       "metadata": {"name": "inky", "namespace": ns.name(),
                                    "annotations": {TRACKING_ID: tracking_id(&app, &key, "")}},
                       "spec": {"ink": true}});
    // The kind's initial list may still be running; re-apply until the change is reported.
    applier.apply(&squid, None).await.unwrap();
    let objects = eventually("the Squid indexed by app", || async {
        let objects = reader.app_objects(&app);
        (!objects.is_empty()).then_some(objects)
    })
    .await;
    assert_eq!(objects[0].key, key);
    assert_eq!(objects[0].object().unwrap()["spec"]["ink"], true);

    // Changes reported so far (the Squid's creation) must not stand in for its removal.
    while rx.try_recv().is_ok() {}
    crate::delete_crd(&applier, &client, &crd_name).await;
    next_change_for(&mut rx, &app, &key, false).await;
    eventually("the kind to be dropped", || async {
        (!reader.watched_kinds().contains(&gk)).then_some(())
    })
    .await;
    assert!(reader.app_objects(&app).is_empty());

    driver.abort();
    let _ = tokio::time::timeout(Duration::from_secs(5), driver).await;
}

/// A CRD deleted between discovery and the cache's start leaves no delete event behind: the
/// cache drops its kind (404, and no CRD defines it) instead of waiting for its list forever.
#[tokio::test]
async fn a_kind_whose_crd_went_away_before_the_cache_started_does_not_hold_it_back() {
    let (client, discovery, applier) = setup().await;
    let group = format!("gone{}.plumb-test.example.com", std::process::id());
    let gk = GroupKind::new(group.clone(), "Octopus");
    let crd_name = install_crd(&applier, &group, "Octopus", "octopi").await;
    // Discovery serves a new group a moment after its CRD is Established.
    let catalog = eventually("discovery to serve the kind", || async {
        let catalog = discovery.refresh().await.expect("refresh discovery");
        let served = catalog.listable().any(|k| k.group_kind() == gk);
        served.then_some(catalog)
    })
    .await;

    crate::delete_crd(&applier, &client, &crd_name).await;

    let (reader, _rx, driver) = start_cache(client.clone(), &catalog).await;
    assert!(!reader.watched_kinds().contains(&gk));
    assert!(!reader.is_synced(&gk));

    driver.abort();
    let _ = tokio::time::timeout(Duration::from_secs(5), driver).await;
}
