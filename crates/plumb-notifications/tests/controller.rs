//! The notifications controller against the real control plane: an Application whose sync
//! succeeds is announced once per recipient (its own subscription and its AppProject's) to a
//! real webhook receiver, the `notified.notifications.argoproj.io` annotation is written as
//! notifications-engine writes it, a new revision is announced again (`oncePer`), a restarted
//! controller sends nothing twice, and a failed delivery is a Warning Event and a metric.

mod common;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event, Secret};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use plumb_notifications::Metrics;
use plumb_notifications::controller::{self, Config};
use plumb_testenv::TestEnv;
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(120);

fn start(client: &kube::Client, ns: &str, metrics: &Metrics) -> tokio::task::JoinHandle<()> {
    let mut config = Config::new(ns);
    // Each pass over the Application is seen in the metrics; a short resync makes the
    // "nothing resent" check below wait for two whole passes quickly.
    config.resync = Duration::from_secs(1);
    let (client, metrics) = (client.clone(), metrics.clone());
    tokio::spawn(async move {
        controller::run(client, config, metrics, Arc::new(|| true))
            .await
            .expect("controller runs");
    })
}

async fn create(client: &kube::Client, ns: &str, obj: Value, ar: &kube::discovery::ApiResource) {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, ar);
    let obj: DynamicObject = serde_json::from_value(obj).expect("object");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
}

async fn set_operation(apps: &Api<DynamicObject>, revision: &str, finished: &str) {
    let status = json!({"status": {
        "sync": {"status": "Synced", "revision": revision},
        "health": {"status": "Healthy"},
        "reconciledAt": finished,
        "operationState": {"phase": "Succeeded", "startedAt": "2024-05-01T10:00:00Z", "finishedAt": finished,
            "operation": {"sync": {"revision": revision}}, "syncResult": {"revision": revision}}
    }});
    if apps
        .patch_status("guestbook", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .is_err()
    {
        apps.patch("guestbook", &PatchParams::default(), &Patch::Merge(&status))
            .await
            .expect("status");
    }
}

async fn wait_until(what: &str, mut f: impl AsyncFnMut() -> bool) {
    while !f().await {
        tracing::debug!("waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn setup(rx_url: &str) -> (Value, Value) {
    let cm = json!({
        "service.webhook.hook": format!("url: {rx_url}\nheaders:\n- name: X-Token\n  value: $token\nretryWaitMin: 1000000\nretryWaitMax: 10000000\n"),
        "service.webhook.broken": "url: http://127.0.0.1:9/\nretryMax: 1\nretryWaitMin: 1000000\nretryWaitMax: 10000000\n",
        "trigger.on-sync-succeeded": "- description: Application syncing has succeeded\n  oncePer: app.status.operationState?.syncResult?.revision\n  send:\n  - app-sync-succeeded\n  when: app.status.operationState != nil and app.status.operationState.phase in ['Succeeded']\n",
        "template.app-sync-succeeded": "message: unused\nwebhook:\n  hook:\n    method: POST\n    path: /{{.app.metadata.name}}/{{.recipient}}\n    body: '{{.app.metadata.name}} {{.app.status.operationState.syncResult.revision}} {{.context.argocdUrl}}'\n",
        "context": "argocdUrl: https://argocd.example.com\n",
    });
    let secret = json!({"token": "dG9rLXNlY3JldA=="});
    (cm, secret)
}

#[tokio::test]
async fn sync_succeeded_is_sent_once_and_not_again_after_a_restart() {
    tokio::time::timeout(DEADLINE, scenario())
        .await
        .expect("within the deadline");
}

async fn scenario() {
    let env = TestEnv::shared();
    env.install_plumb_crds();
    let ns_guard = env.namespace("notify-ctl");
    let ns = ns_guard.name().to_string();
    let client = env.client().await;
    let rx = common::Receiver::start().await;
    let (cm_data, secret_data) = setup(&rx.url);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let cm: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "argocd-notifications-cm"}, "data": cm_data}),
    )
    .expect("cm");
    cms.create(&PostParams::default(), &cm).await.expect("cm");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let secret: Secret = serde_json::from_value(
        json!({"metadata": {"name": "argocd-notifications-secret"}, "data": secret_data}),
    )
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("secret");
    create(&client, &ns, json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default", "annotations": {"notifications.argoproj.io/subscribe.on-sync-succeeded.hook": "team-b"}},
        "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}]}
    }), &plumb_app::appproject_resource()).await;
    create(&client, &ns, json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "guestbook", "annotations": {
            "notifications.argoproj.io/subscribe.on-sync-succeeded.hook": "team-a",
            "notifications.argoproj.io/subscribe.on-sync-succeeded.broken": "nobody"}},
        "spec": {"project": "default", "source": {"repoURL": "https://example.com/repo.git", "path": "."},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"}}
    }), &plumb_app::application_resource()).await;
    let apps: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), &ns, &plumb_app::application_resource());

    let metrics = Metrics::default();
    let first = start(&client, &ns, &metrics);
    // Not synced yet: nothing is due.
    wait_until("a first pass", async || {
        metrics.evaluations("on-sync-succeeded", false) >= 1
    })
    .await;
    assert!(rx.received().is_empty());

    set_operation(&apps, "aaaa1111", "2024-05-01T10:01:00Z").await;
    let mut got = rx.wait_for(2).await;
    got.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(got[0].method, "POST");
    assert_eq!(got[0].path, "/guestbook/team-a");
    assert_eq!(got[1].path, "/guestbook/team-b");
    assert_eq!(got[0].body, "guestbook aaaa1111 https://argocd.example.com");
    assert_eq!(got[0].headers["x-token"], "tok-secret");

    // The state as notifications-engine writes it.
    let mut notified = String::new();
    wait_until("the notified annotation", async || {
        let app = apps.get("guestbook").await.expect("app");
        notified = app
            .metadata
            .annotations
            .unwrap_or_default()
            .get("notified.notifications.argoproj.io")
            .cloned()
            .unwrap_or_default();
        notified.contains("team-a") && notified.contains("team-b")
    })
    .await;
    let state: std::collections::BTreeMap<String, i64> =
        serde_json::from_str(&notified).expect("JSON map");
    let keys: Vec<&String> = state.keys().collect();
    assert_eq!(keys.len(), 2, "{notified}");
    assert!(
        keys[0].starts_with("aaaa1111:on-sync-succeeded:[0]."),
        "{notified}"
    );
    assert!(
        keys[0].ends_with(":hook:team-a") && keys[1].ends_with(":hook:team-b"),
        "{notified}"
    );

    // The broken service: a Warning Event on the Application and the failure metric.
    wait_until("the failed delivery metric", async || {
        metrics.deliveries("on-sync-succeeded", "broken", false) >= 1
    })
    .await;
    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    wait_until("the Warning Event", async || {
        let list = events.list(&ListParams::default()).await.expect("events");
        list.items.iter().any(|e| {
            e.reason.as_deref() == Some("NotificationDeliveryFailed")
                && e.involved_object.name.as_deref() == Some("guestbook")
                && e.message.as_deref().is_some_and(|m| {
                    m.contains(
                        "failed to deliver notification on-sync-succeeded to {broken nobody}",
                    )
                })
        })
    })
    .await;
    assert_eq!(metrics.deliveries("on-sync-succeeded", "hook", true), 2);

    // A new revision: announced again, once per recipient (oncePer).
    set_operation(&apps, "bbbb2222", "2024-05-01T11:01:00Z").await;
    let got = rx.wait_for(4).await;
    assert!(got[2].body.contains("bbbb2222") && got[3].body.contains("bbbb2222"));

    // The pass is over when its state is written (a controller stopped between a send and
    // this write sends again after a restart: at-least-once, as Argo's).
    wait_until("the new revision's state", async || {
        let app = apps.get("guestbook").await.expect("app");
        let notified = app
            .metadata
            .annotations
            .unwrap_or_default()
            .get("notified.notifications.argoproj.io")
            .cloned()
            .unwrap_or_default();
        notified.contains("bbbb2222:on-sync-succeeded:[0].IwKhHw9Hu8IE3z5Y8CQE4vReLYs:hook:team-a")
            && notified
                .contains("bbbb2222:on-sync-succeeded:[0].IwKhHw9Hu8IE3z5Y8CQE4vReLYs:hook:team-b")
    })
    .await;

    // Restart: two whole passes of the new controller over the Application, nothing resent.
    first.abort();
    let _ = first.await;
    let again = Metrics::default();
    let second = start(&client, &ns, &again);
    wait_until("two passes after the restart", async || {
        again.evaluations("on-sync-succeeded", true) >= 2
    })
    .await;
    second.abort();
    assert_eq!(rx.received().len(), 4, "{:?}", rx.received());
    assert_eq!(again.deliveries("on-sync-succeeded", "hook", true), 0);
}
