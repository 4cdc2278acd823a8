//! `plumb controller` runs the ApplicationSet controller beside the Application controller,
//! unless `--applicationset=false` (ControllerConfig::applicationset) turns it off.

use kube::api::{Api, DynamicObject, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::Controlled;

fn set(name: &str, app: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": name},
        "spec": {
            "generators": [{"list": {"elements": [{"name": app}]}}],
            "template": {"metadata": {"name": "{{name}}"},
                         "spec": {"project": "default",
                                  "source": {"repoURL": "https://example.com/r.git", "path": "{{name}}"},
                                  "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"}}}
        }
    })
}

async fn create_set(c: &Controlled, set: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(
        c.client.clone(),
        c.ns.name(),
        &plumb_appset::controller::applicationset_resource(),
    );
    let obj: DynamicObject = serde_json::from_value(set).expect("set");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create ApplicationSet");
}

#[tokio::test]
async fn on_by_default_generated_application_is_reconciled() {
    let c = Controlled::start(TestEnv::shared(), "actl-on").await;
    create_set(&c, set("fleet", "actl-gen")).await;
    let app = c
        .wait_app("actl-gen", "a sync status", |a| {
            !a["status"]["sync"]["status"].is_null()
        })
        .await;
    assert_eq!(app["metadata"]["ownerReferences"][0]["name"], "fleet");
}

#[tokio::test]
async fn off_switch_leaves_sets_alone() {
    let c = Controlled::start_with(TestEnv::shared(), "actl-off", |cfg| {
        cfg.applicationset = Some(false);
    })
    .await;
    create_set(&c, set("fleet", "actl-gen")).await;
    // An ordinary Application created after the set: once the controller has reconciled it,
    // a running ApplicationSet controller (its watch starts before the Application watch's
    // work) would long have created the generated one.
    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        )],
        "init",
    );
    c.create_dir_app("plain", &repo, c.ns.name()).await;
    c.wait_app("plain", "a sync status", |a| {
        !a["status"]["sync"]["status"].is_null()
    })
    .await;
    assert!(c.apps().get_opt("actl-gen").await.expect("get").is_none());
    let sets: Api<DynamicObject> = Api::namespaced_with(
        c.client.clone(),
        c.ns.name(),
        &plumb_appset::controller::applicationset_resource(),
    );
    let fleet = serde_json::to_value(sets.get("fleet").await.expect("get set")).expect("json");
    assert!(fleet["status"].is_null(), "{fleet}");
}
