//! The ApplicationSet controller end to end: generated Applications created, updated, deleted
//! under each policy, owned, kept on a generator error; conditions, events and metrics.

mod bench;
mod deletion;
mod faults;
mod leader;
mod rollout;
pub(crate) mod support;
mod triggers;

use serde_json::json;

use support::{Running, eventually, list_set, refresh, versions};

/// Create, update, delete; a reconcile with nothing changed writes no Application.
#[tokio::test]
async fn lifecycle_and_no_writes_when_nothing_changed() {
    let r = Running::start("actl-life", |_| {}).await;
    r.create_set(list_set(
        "fleet",
        &[("a", "apps/a"), ("b", "apps/b")],
        json!({}),
    ))
    .await;
    eventually("a and b", || async {
        (r.app_names().await == ["a", "b"]).then_some(())
    })
    .await;
    let apps = r.app_list().await;
    let owner = &apps[0]["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "ApplicationSet");
    assert_eq!(owner["name"], "fleet");
    assert_eq!(owner["controller"], true);
    assert_eq!(owner["blockOwnerDeletion"], true);
    assert_eq!(
        apps[0]["metadata"]["finalizers"],
        json!(["resources-finalizer.argocd.argoproj.io"])
    );
    assert_eq!(apps[1]["spec"]["source"]["path"], "apps/b");
    let up = eventually("ResourcesUpToDate", || async {
        r.condition("fleet", "ResourcesUpToDate").await
    })
    .await;
    assert_eq!(up["status"], "True");
    assert_eq!(up["reason"], "ApplicationSetUpToDate");
    assert_eq!(
        up["message"],
        "All applications have been generated successfully"
    );
    let set = r.set("fleet").await;
    assert_eq!(set["status"]["resourcesCount"], 2);
    assert_eq!(set["status"]["resources"][0]["name"], "a");
    assert_eq!(set["status"]["resources"][0]["kind"], "Application");

    // Nothing changed: a forced reconcile leaves every Application as it was.
    let before = versions(&r).await;
    refresh(&r, "fleet").await;
    assert_eq!(versions(&r).await, before);

    // An element changes: that Application is patched, the other left alone.
    r.patch_set(
        "fleet",
        json!({"spec": {"generators": [{"list": {"elements": [
        {"name": "a", "path": "apps/a2"}, {"name": "b", "path": "apps/b"}]}}]}}),
    )
    .await;
    eventually("a moved to apps/a2", || async {
        let apps = r.app_list().await;
        (apps[0]["spec"]["source"]["path"] == "apps/a2").then_some(())
    })
    .await;
    let after = versions(&r).await;
    assert_ne!(after[0], before[0]);
    assert_eq!(after[1], before[1]);

    // An element goes: its Application is deleted (no Application controller here: the
    // resources finalizer keeps it, marked for deletion).
    r.patch_set(
        "fleet",
        json!({"spec": {"generators": [{"list": {"elements": [
        {"name": "a", "path": "apps/a2"}]}}]}}),
    )
    .await;
    eventually("b marked for deletion", || async {
        let apps = r.app_list().await;
        apps.iter()
            .any(|a| a["metadata"]["name"] == "b" && !a["metadata"]["deletionTimestamp"].is_null())
            .then_some(())
    })
    .await;
    let events = eventually("events", || async {
        let e = r.event_notes().await;
        e.iter().any(|(reason, _)| reason == "Deleted").then_some(e)
    })
    .await;
    assert!(
        events.contains(&("created".into(), "created Application \"a\"".into())),
        "{events:?}"
    );
    assert!(
        events.contains(&("updated".into(), "updated Application \"a\"".into())),
        "{events:?}"
    );
    assert!(
        events.contains(&("Deleted".into(), "Deleted Application \"b\"".into())),
        "{events:?}"
    );
    let metrics = r.metrics_text();
    assert!(
        metrics.contains(&format!(
            "argocd_appset_info{{namespace=\"{}\",name=\"fleet\",resource_update_status=\"ApplicationSetUpToDate\"}} 1",
            r.ns.name()
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains("argocd_appset_reconcile_bucket"),
        "{metrics}"
    );
}

/// `preserveResourcesOnDeletion`: no resources finalizer, and one added by hand is removed
/// before the Application is deleted (it goes at once, resources untouched).
#[tokio::test]
async fn preserve_resources_on_deletion() {
    let r = Running::start("actl-preserve", |_| {}).await;
    let policy = json!({"syncPolicy": {"preserveResourcesOnDeletion": true, "applicationsSync": "create-delete"}});
    r.create_set(list_set(
        "keep",
        &[("a", "apps/a"), ("b", "apps/b")],
        policy,
    ))
    .await;
    eventually("a and b", || async {
        (r.app_names().await == ["a", "b"]).then_some(())
    })
    .await;
    let apps = r.app_list().await;
    assert!(apps[1]["metadata"]["finalizers"].is_null(), "{}", apps[1]);
    r.apps()
        .patch(
            "b",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(
                &json!({"metadata": {"finalizers": ["resources-finalizer.argocd.argoproj.io"]}}),
            ),
        )
        .await
        .unwrap();
    r.patch_set(
        "keep",
        json!({"spec": {"generators": [{"list": {"elements": [
        {"name": "a", "path": "apps/a"}]}}]}}),
    )
    .await;
    eventually("b gone", || async {
        (r.app_names().await == ["a"]).then_some(())
    })
    .await;
}

/// Each applications sync policy, and the controller's policy winning without override.
#[tokio::test]
async fn policies() {
    let r = Running::start("actl-policy", |_| {}).await;
    for policy in ["create-only", "create-update", "create-delete", "sync"] {
        let spec = json!({"syncPolicy": {"applicationsSync": policy}});
        let prefix = policy.replace('-', "");
        let a = format!("{prefix}-a");
        let b = format!("{prefix}-b");
        r.create_set(list_set(&prefix, &[(&a, "v1"), (&b, "v1")], spec))
            .await;
        eventually("both", || async {
            let n = r.app_names().await;
            (n.contains(&a) && n.contains(&b)).then_some(())
        })
        .await;
        // a changes, b is no longer generated.
        r.patch_set(
            &prefix,
            json!({"spec": {"generators": [{"list": {"elements": [
            {"name": a, "path": "v2"}]}}]}}),
        )
        .await;
        refresh(&r, &prefix).await;
        let apps = r.app_list().await;
        let find = |n: &str| apps.iter().find(|x| x["metadata"]["name"] == n).cloned();
        let path = find(&a).map(|x| x["spec"]["source"]["path"].clone());
        let b_deleted = find(&b).is_none_or(|x| !x["metadata"]["deletionTimestamp"].is_null());
        let (updates, deletes) = match policy {
            "create-only" => (false, false),
            "create-update" => (true, false),
            "create-delete" => (false, true),
            _ => (true, true),
        };
        assert_eq!(
            path,
            Some(json!(if updates { "v2" } else { "v1" })),
            "{policy}"
        );
        assert_eq!(b_deleted, deletes, "{policy}");
    }
}

/// `applicationsetcontroller.policy: create-only` without override: a set's `sync` is ignored.
#[tokio::test]
async fn controller_policy_without_override_wins() {
    let r = Running::start("actl-ctlpolicy", |c| {
        c.policy = plumb_model::applicationset::ApplicationsSyncPolicy::CreateOnly;
        c.policy_override = false;
    })
    .await;
    let spec = json!({"syncPolicy": {"applicationsSync": "sync"}});
    r.create_set(list_set("s", &[("a", "v1"), ("b", "v1")], spec))
        .await;
    eventually("both", || async {
        (r.app_names().await == ["a", "b"]).then_some(())
    })
    .await;
    r.patch_set(
        "s",
        json!({"spec": {"generators": [{"list": {"elements": [
        {"name": "a", "path": "v2"}]}}]}}),
    )
    .await;
    refresh(&r, "s").await;
    let apps = r.app_list().await;
    assert_eq!(apps.len(), 2);
    assert!(apps[1]["metadata"]["deletionTimestamp"].is_null());
    assert_eq!(apps[0]["spec"]["source"]["path"], "v1");
}

/// Two sets generating the same name: the second is refused with Argo's condition, the
/// Application stays the first's.
#[tokio::test]
async fn ownership_conflict_is_refused() {
    let r = Running::start("actl-owner", |_| {}).await;
    r.create_set(list_set("first", &[("shared", "one")], json!({})))
        .await;
    eventually("shared", || async {
        (r.app_names().await == ["shared"]).then_some(())
    })
    .await;
    r.create_set(list_set(
        "second",
        &[("shared", "two"), ("mine", "two")],
        json!({}),
    ))
    .await;
    let cond = eventually("second's error", || async {
        r.condition("second", "ErrorOccurred")
            .await
            .filter(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(cond["reason"], "UpdateApplicationError");
    assert_eq!(
        cond["message"],
        format!(
            "error while wrapping using MutateFn: Object {}/shared is already owned by another ApplicationSet controller first",
            r.ns.name()
        )
    );
    let up = r.condition("second", "ResourcesUpToDate").await.unwrap();
    assert_eq!(up["status"], "False");
    let apps = r.app_list().await;
    let shared = apps
        .iter()
        .find(|a| a["metadata"]["name"] == "shared")
        .unwrap();
    assert_eq!(shared["metadata"]["ownerReferences"][0]["name"], "first");
    assert_eq!(shared["spec"]["source"]["path"], "one");
    // The other Application of the second set is created all the same, as Argo does.
    assert!(apps.iter().any(|a| a["metadata"]["name"] == "mine"));
}

/// A failing generator: conditions say so and nothing is deleted or changed.
#[tokio::test]
async fn generator_error_deletes_nothing() {
    let r = Running::start("actl-generr", |_| {}).await;
    r.create_set(list_set("s", &[("a", "v1"), ("b", "v1")], json!({})))
        .await;
    eventually("both", || async {
        (r.app_names().await == ["a", "b"]).then_some(())
    })
    .await;
    let before = versions(&r).await;
    // The list shrinks to nothing and a plugin generator names a ConfigMap that does not exist.
    r.patch_set(
        "s",
        json!({"spec": {"generators": [
            {"list": {"elements": []}},
            {"plugin": {"configMapRef": {"name": "actl-no-such-plugin"}}}
        ]}}),
    )
    .await;
    let cond = eventually("ErrorOccurred", || async {
        r.condition("s", "ErrorOccurred")
            .await
            .filter(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(cond["reason"], "ApplicationGenerationFromParamsError");
    let params = r.condition("s", "ParametersGenerated").await.unwrap();
    assert_eq!(params["status"], "False");
    assert_eq!(params["reason"], "ErrorOccurred");
    // The conditions are written at the end of the failed reconcile: nothing was touched.
    // (As Argo, a failed reconcile keeps the refresh annotation: the set is tried again.)
    assert_eq!(versions(&r).await, before);
    let health = r.set("s").await["status"]["health"]["status"].clone();
    assert_eq!(health, "Degraded");
}

/// An Application naming a project that does not exist: reported, the valid ones created.
#[tokio::test]
async fn invalid_application_is_reported_others_created() {
    let r = Running::start("actl-invalid", |_| {}).await;
    let mut set = list_set("s", &[("good", "p"), ("bad", "p")], json!({}));
    set["spec"]["template"]["spec"]["project"] = json!("{{project}}");
    set["spec"]["generators"][0]["list"]["elements"] = json!([
        {"name": "good", "path": "p", "project": "default"},
        {"name": "bad", "path": "p", "project": "actl-missing"}
    ]);
    r.create_set(set).await;
    let cond = eventually("validation error", || async {
        r.condition("s", "ErrorOccurred")
            .await
            .filter(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(cond["reason"], "ApplicationValidationError");
    assert_eq!(
        cond["message"],
        "application references project actl-missing which does not exist"
    );
    assert_eq!(r.app_names().await, ["good"]);
}
