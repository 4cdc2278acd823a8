//! Deleting an ApplicationSet deletes its Applications as in Argo: through their owner
//! references (Kubernetes' garbage collector, the controller does not delete them itself), with
//! the resources finalizer so the Application controller cascades to what they deployed; under
//! `preserveResourcesOnDeletion` they carry no finalizer and go at once, their resources left.
//! An Application no longer generated is deleted while the brake allows it.

use kube::api::DeleteParams;
use serde_json::json;

use super::support::{Running, eventually, list_set};

const FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

#[tokio::test]
async fn deleting_a_set_deletes_its_applications() {
    let r = Running::start("actlt-delete", |_| {}).await;
    r.create_set(list_set("cascade", &[("a", "a"), ("b", "b")], json!({})))
        .await;
    let preserve = json!({"syncPolicy": {"preserveResourcesOnDeletion": true}});
    r.create_set(list_set("keep", &[("c", "c"), ("d", "d")], preserve))
        .await;
    r.create_set(list_set("other", &[("e", "e")], json!({})))
        .await;
    eventually("five Applications", || async {
        (r.app_names().await == ["a", "b", "c", "d", "e"]).then_some(())
    })
    .await;

    r.sets()
        .delete("cascade", &DeleteParams::default())
        .await
        .expect("delete cascade");
    r.sets()
        .delete("keep", &DeleteParams::default())
        .await
        .expect("delete keep");
    // a and b are being deleted, held by the resources finalizer for the Application
    // controller to delete what they deployed first; c and d are gone at once.
    let apps = eventually("the garbage collector's deletions", || async {
        let apps = r.app_list().await;
        let names: Vec<&str> = apps
            .iter()
            .filter_map(|a| a["metadata"]["name"].as_str())
            .collect();
        let marked = apps
            .iter()
            .filter(|a| !a["metadata"]["deletionTimestamp"].is_null())
            .count();
        (names == ["a", "b", "e"] && marked == 2).then_some(apps)
    })
    .await;
    for app in &apps[..2] {
        assert_eq!(app["metadata"]["finalizers"], json!([FINALIZER]), "{app}");
        assert!(!app["metadata"]["deletionTimestamp"].is_null(), "{app}");
    }
    assert!(
        apps[2]["metadata"]["deletionTimestamp"].is_null(),
        "{}",
        apps[2]
    );
    assert_eq!(apps[2]["metadata"]["ownerReferences"][0]["name"], "other");
}

/// `create-delete`: a removed element's Application is deleted (the brake allows one of three).
#[tokio::test]
async fn a_removed_element_is_deleted_while_the_brake_allows() {
    let r = Running::start("actlt-removed", |_| {}).await;
    let policy = json!({"syncPolicy": {"applicationsSync": "create-delete"}});
    r.create_set(list_set("s", &[("a", "a"), ("b", "b"), ("c", "c")], policy))
        .await;
    eventually("three Applications", || async {
        (r.app_names().await == ["a", "b", "c"]).then_some(())
    })
    .await;
    r.patch_set(
        "s",
        json!({"spec": {"generators": [{"list": {"elements": [
            {"name": "a", "path": "a"}, {"name": "c", "path": "c"}]}}]}}),
    )
    .await;
    eventually("b marked for deletion", || async {
        r.app_list()
            .await
            .iter()
            .any(|a| a["metadata"]["name"] == "b" && !a["metadata"]["deletionTimestamp"].is_null())
            .then_some(())
    })
    .await;
    let up = eventually("up to date", || async {
        r.condition("s", "ResourcesUpToDate")
            .await
            .filter(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(up["reason"], "ApplicationSetUpToDate");
    let held = r.condition("s", "DeletionHeld").await;
    assert!(
        held.as_ref().is_none_or(|c| c["status"] == "False"),
        "{held:?}"
    );
}
