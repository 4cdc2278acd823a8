//! The ApplicationSets pages in a real browser (`ui/e2e/appsets.mjs`): the list, a set's page
//! with its generated Applications, conditions, Events and the brake's pending deletion, and the
//! Confirm button, whose annotation is checked here on the ApplicationSet itself.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_app::application_resource;
use serde_json::json;

use super::browser::SettingsServer;

const SET: &str = "ui-fleet";
const KEPT: &str = "ui-fleet-a";
const HELD: &str = "ui-fleet-b";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_applicationset_pages() {
    super::support::env().install_plumb_crds();
    super::support::ensure_appset_crd();
    let stack = SettingsServer::start("ui-appsets").await;
    let (ns, client) = (stack.ns.name(), &stack.client);
    let sets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns,
        &plumb_appset::api::applicationset_resource(),
    );
    let set: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": SET},
        "spec": {"generators": [{"list": {"elements": [{"c": "a"}]}}],
                 "template": {"metadata": {"name": "ui-fleet-{{c}}"},
                              "spec": {"project": "default",
                                       "source": {"repoURL": "https://example.com/a.git", "path": "x"},
                                       "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}}}
    }))
    .expect("set");
    let set = sets
        .create(&PostParams::default(), &set)
        .await
        .expect("create set");
    let apps: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), ns, &application_resource());
    for name in [KEPT, HELD] {
        let app: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1",
                "kind": "ApplicationSet", "name": SET, "uid": set.metadata.uid, "controller": true}]},
            "spec": {"project": "default", "source": {"repoURL": "https://example.com/a.git", "path": "x"},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}
        }))
        .expect("app");
        apps.create(&PostParams::default(), &app)
            .await
            .expect("create app");
    }
    let status = json!({"status": {
        "conditions": [{"type": "DeletionHeld", "status": "True", "reason": "DeletionHeld",
                        "message": format!("would delete {HELD}")}],
        "resources": [{"group": "argoproj.io", "version": "v1alpha1", "kind": "Application", "name": KEPT}],
        "resourcesCount": 1}});
    sets.patch_status(SET, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    // An Event about the set, as the controller records one; the page lists it.
    let events: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client.clone(), ns);
    let event = serde_json::from_value(json!({
        "metadata": {"name": format!("{SET}.held")},
        "involvedObject": {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
                           "name": SET, "namespace": ns, "uid": set.metadata.uid},
        "reason": "DeletionHeld", "message": format!("would delete {HELD}"), "type": "Warning",
        "lastTimestamp": "2026-01-01T00:00:00Z"
    }))
    .expect("event");
    events
        .create(&PostParams::default(), &event)
        .await
        .expect("create event");
    stack
        .run(
            "appsets.mjs",
            &[("PLUMB_APPSET", SET), ("PLUMB_HELD", HELD)],
        )
        .await;
    let after = sets.get(SET).await.expect("set");
    assert_eq!(
        after.metadata.annotations.unwrap_or_default()["plumb.dev/confirm-deletion"],
        HELD
    );
    stack.shutdown().await;
}
