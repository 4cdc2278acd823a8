//! Progressive syncs and the deletion brake through the real controller. No Application
//! controller runs here: the tests play its part by writing the Applications' status (sync,
//! health, operationState, reconciledAt) through the status subresource, as the rollout reads
//! it, and by clearing the operation the rollout set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use super::support::{Running, eventually, refresh};

/// A list-generated set: one Application per `(name, env)`, labelled `env`, automated sync
/// with prune in the template (a RollingSync switches it off).
fn fleet(name: &str, elements: &[(&str, &str)], strategy: Value) -> Value {
    let elements: Vec<Value> = elements
        .iter()
        .map(|(n, env)| json!({"name": n, "env": env}))
        .collect();
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": name},
        "spec": {
            "generators": [{"list": {"elements": elements}}],
            "strategy": strategy,
            "template": {
                "metadata": {"name": "{{name}}", "labels": {"env": "{{env}}"}},
                "spec": {"project": "default",
                         "source": {"repoURL": "https://example.com/apps.git", "path": "{{name}}", "targetRevision": "main"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "{{name}}"},
                         "syncPolicy": {"automated": {"prune": true}}}
            }
        }
    })
}

fn two_steps(max_update: Value) -> Value {
    json!({"type": "RollingSync", "rollingSync": {"steps": [
        {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
        {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}], "maxUpdate": max_update}
    ]}})
}

/// `status.applicationStatus` as (application, status, step).
async fn rollout_status(r: &Running, set: &str) -> Vec<(String, String, String)> {
    let s = r.set(set).await;
    s["status"]["applicationStatus"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    let f = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                    (f("application"), f("status"), f("step"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn entry(app: &str, status: &str, step: &str) -> (String, String, String) {
    (app.into(), status.into(), step.into())
}

/// Names of the Applications carrying the rollout's sync operation.
async fn syncing(r: &Running) -> Vec<String> {
    r.app_list()
        .await
        .iter()
        .filter(|a| a["operation"]["initiatedBy"]["username"] == "applicationset-controller")
        .map(|a| {
            a["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// Plays the Application controller for `app`: the sync the rollout asked for ran (started one
/// second after the Pending transition) and the Application is Synced and Healthy; then the
/// operation is cleared.
async fn sync_done(r: &Running, set: &str, app: &str) {
    let s = r.set(set).await;
    let since = s["status"]["applicationStatus"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["application"] == app))
        .and_then(|e| e["lastTransitionTime"].as_str())
        .expect("a transition time")
        .parse::<jiff::Timestamp>()
        .unwrap();
    let later = (since + jiff::SignedDuration::from_secs(1))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let status = json!({"status": {
        "sync": {"status": "Synced", "revision": "r1"},
        "health": {"status": "Healthy"},
        "reconciledAt": later,
        "operationState": {"operation": {"sync": {"revision": "r1"}}, "phase": "Succeeded",
                           "startedAt": later, "finishedAt": later}
    }});
    r.apps()
        .patch_status(app, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    // Cleared after the status is written, as the application controller does: a reconcile in
    // between must not see a Pending Application without its operation (it would set it again).
    r.apps()
        .patch(
            app,
            &PatchParams::default(),
            &Patch::Merge(&json!({"operation": null})),
        )
        .await
        .unwrap();
}

/// Two steps, `maxUpdate: 1` in the second: dev first; then the prod Applications one at a
/// time, each waited for until it is Healthy.
#[tokio::test]
async fn rolling_sync_in_two_steps_one_at_a_time() {
    let r = Running::start("aroll-roll", |c| c.progressive_syncs = true).await;
    let apps = [
        ("dev-1", "dev"),
        ("prod-1", "prod"),
        ("prod-2", "prod"),
        ("prod-3", "prod"),
    ];
    r.create_set(fleet("fleet", &apps, two_steps(json!(1))))
        .await;
    eventually("4 Applications", || async {
        (r.app_names().await.len() == 4).then_some(())
    })
    .await;
    refresh(&r, "fleet").await;
    // Step 1 open: dev-1 is Pending with a sync operation, prod waits.
    let expected = vec![
        entry("dev-1", "Pending", "1"),
        entry("prod-1", "Waiting", "2"),
        entry("prod-2", "Waiting", "2"),
        entry("prod-3", "Waiting", "2"),
    ];
    eventually("dev-1 Pending", || async {
        (rollout_status(&r, "fleet").await == expected).then_some(())
    })
    .await;
    assert_eq!(syncing(&r).await, vec!["dev-1"]);
    let apps_now = r.app_list().await;
    let dev = &apps_now[0];
    assert_eq!(
        dev["spec"]["syncPolicy"]["automated"],
        json!({"prune": true, "enabled": false})
    );
    assert_eq!(dev["operation"]["sync"]["prune"], true);
    assert_eq!(
        dev["operation"]["info"][0]["value"],
        "ApplicationSet RollingSync triggered a sync of this Application resource"
    );
    let progressing = r
        .condition("fleet", "RolloutProgressing")
        .await
        .expect("RolloutProgressing");
    assert_eq!(progressing["status"], "True");
    assert_eq!(progressing["reason"], "ApplicationSetModified");
    assert_eq!(
        progressing["message"],
        "ApplicationSet is performing rollout of step 1"
    );

    // dev-1 syncs: Progressing, then Healthy, and step 2 opens with one Application.
    sync_done(&r, "fleet", "dev-1").await;
    refresh(&r, "fleet").await;
    refresh(&r, "fleet").await;
    let expected = vec![
        entry("dev-1", "Healthy", "1"),
        entry("prod-1", "Pending", "2"),
        entry("prod-2", "Waiting", "2"),
        entry("prod-3", "Waiting", "2"),
    ];
    eventually("prod-1 Pending", || async {
        (rollout_status(&r, "fleet").await == expected).then_some(())
    })
    .await;
    assert_eq!(syncing(&r).await, vec!["prod-1"]);
    let progressing = r.condition("fleet", "RolloutProgressing").await.unwrap();
    assert_eq!(
        progressing["message"],
        "ApplicationSet is performing rollout of step 2"
    );

    for (done, next) in [
        ("prod-1", Some("prod-2")),
        ("prod-2", Some("prod-3")),
        ("prod-3", None),
    ] {
        sync_done(&r, "fleet", done).await;
        refresh(&r, "fleet").await;
        refresh(&r, "fleet").await;
        let want = next.map(|n| vec![n.to_string()]).unwrap_or_default();
        eventually("the next one syncing", || async {
            (syncing(&r).await == want).then_some(())
        })
        .await;
    }
    let complete = eventually("rollout complete", || async {
        r.condition("fleet", "RolloutProgressing")
            .await
            .filter(|c| c["status"] == "False")
    })
    .await;
    assert_eq!(complete["reason"], "ApplicationSetRolloutComplete");
    assert_eq!(complete["message"], "ApplicationSet Rollout has completed");
    assert!(
        rollout_status(&r, "fleet")
            .await
            .iter()
            .all(|(_, s, _)| s == "Healthy")
    );
    let valid = r.condition("fleet", "InvalidRolloutConfig").await.unwrap();
    assert_eq!(
        (valid["status"].as_str(), valid["message"].as_str()),
        (Some("False"), Some("Rolling Sync Configured correctly"))
    );
}

/// `maxUpdate: 50%` of four: two at once.
#[tokio::test]
async fn rolling_sync_max_update_as_a_percentage() {
    let r = Running::start("aroll-pct", |c| c.progressive_syncs = true).await;
    let apps = [
        ("p-1", "prod"),
        ("p-2", "prod"),
        ("p-3", "prod"),
        ("p-4", "prod"),
    ];
    let strategy = json!({"type": "RollingSync", "rollingSync": {"steps": [
        {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}], "maxUpdate": "50%"}]}});
    r.create_set(fleet("pct", &apps, strategy)).await;
    eventually("4 Applications", || async {
        (r.app_names().await.len() == 4).then_some(())
    })
    .await;
    refresh(&r, "pct").await;
    eventually("two syncing", || async {
        (syncing(&r).await == ["p-1", "p-2"]).then_some(())
    })
    .await;
    let statuses: Vec<String> = rollout_status(&r, "pct")
        .await
        .into_iter()
        .map(|(_, s, _)| s)
        .collect();
    assert_eq!(statuses, ["Pending", "Pending", "Waiting", "Waiting"]);
    // One finishes: one more may go.
    sync_done(&r, "pct", "p-1").await;
    refresh(&r, "pct").await;
    refresh(&r, "pct").await;
    eventually("p-3 syncing", || async {
        (syncing(&r).await == ["p-2", "p-3"]).then_some(())
    })
    .await;
}

/// Progressive syncs off (Argo's default): the strategy is ignored.
#[tokio::test]
async fn rolling_sync_ignored_while_progressive_syncs_are_off() {
    let r = Running::start("aroll-off", |_| {}).await;
    r.create_set(fleet(
        "off",
        &[("o-1", "dev"), ("o-2", "prod")],
        two_steps(json!(1)),
    ))
    .await;
    eventually("2 Applications", || async {
        (r.app_names().await.len() == 2).then_some(())
    })
    .await;
    refresh(&r, "off").await;
    let apps = r.app_list().await;
    assert_eq!(
        apps[0]["spec"]["syncPolicy"]["automated"],
        json!({"prune": true})
    );
    assert!(syncing(&r).await.is_empty());
    assert!(r.set("off").await["status"]["applicationStatus"].is_null());
}

fn elements(n: usize) -> Vec<(String, String)> {
    (1..=n)
        .map(|i| (format!("b-{i}"), "prod".to_string()))
        .collect()
}

fn shrink(n: usize) -> Value {
    let e: Vec<Value> = elements(n)
        .iter()
        .map(|(n, env)| json!({"name": n, "env": env}))
        .collect();
    json!({"spec": {"generators": [{"list": {"elements": e}}]}})
}

/// Applications not marked for deletion.
async fn alive(r: &Running) -> Vec<String> {
    r.app_list()
        .await
        .iter()
        .filter(|a| a["metadata"]["deletionTimestamp"].is_null())
        .map(|a| {
            a["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// The brake: 6 → 1 holds all 5 deletions and names them; confirming lets them go.
#[tokio::test]
async fn the_brake_holds_a_shrink_until_confirmed() {
    let r = Running::start("aroll-brake", |_| {}).await;
    let six = elements(6);
    let six: Vec<(&str, &str)> = six.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    r.create_set(fleet("brake", &six, json!({}))).await;
    eventually("6 Applications", || async {
        (r.app_names().await.len() == 6).then_some(())
    })
    .await;
    r.patch_set("brake", shrink(1)).await;
    let held = eventually("DeletionHeld", || async {
        r.condition("brake", "DeletionHeld")
            .await
            .filter(|c| c["status"] == "True")
    })
    .await;
    assert_eq!(held["reason"], "DeletionHeld");
    assert_eq!(
        held["message"],
        "the deletion brake holds deletions of more than 50% and more than 2 of an ApplicationSet's Applications; \
         would delete 5 of 6 Applications: b-2, b-3, b-4, b-5, b-6; \
         confirm with `plumb appset confirm-deletion brake` or the annotation plumb.dev/confirm-deletion"
    );
    refresh(&r, "brake").await;
    assert_eq!(alive(&r).await.len(), 6, "nothing deleted");

    // Confirm two by name: those go, the rest stay held; the annotation is used up.
    r.patch_set(
        "brake",
        json!({"metadata": {"annotations": {"plumb.dev/confirm-deletion": "b-2,b-3"}}}),
    )
    .await;
    eventually("b-2 and b-3 deleted", || async {
        (alive(&r).await == ["b-1", "b-4", "b-5", "b-6"]).then_some(())
    })
    .await;
    let s = eventually("the confirmation removed", || async {
        let s = r.set("brake").await;
        s["metadata"]["annotations"]["plumb.dev/confirm-deletion"]
            .is_null()
            .then_some(s)
    })
    .await;
    let _ = s;
    let held = eventually("the rest held", || async {
        r.condition("brake", "DeletionHeld").await.filter(|c| {
            c["message"]
                .as_str()
                .is_some_and(|m| m.contains("would delete 3 of"))
        })
    })
    .await;
    assert!(
        held["message"]
            .as_str()
            .unwrap()
            .contains(": b-4, b-5, b-6;"),
        "{held}"
    );

    // Confirm all.
    r.patch_set(
        "brake",
        json!({"metadata": {"annotations": {"plumb.dev/confirm-deletion": "all"}}}),
    )
    .await;
    eventually("only b-1 left", || async {
        (alive(&r).await == ["b-1"]).then_some(())
    })
    .await;
    let released = eventually("DeletionHeld False", || async {
        r.condition("brake", "DeletionHeld")
            .await
            .filter(|c| c["status"] == "False")
    })
    .await;
    assert_eq!(released["message"], "No deletions are held");
}

/// A generator error deletes nothing, and the condition says why.
#[tokio::test]
async fn a_generator_error_deletes_nothing() {
    let r = Running::start("aroll-generr", |_| {}).await;
    let three = elements(3);
    let three: Vec<(&str, &str)> = three
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    r.create_set(fleet("generr", &three, json!({}))).await;
    eventually("3 Applications", || async {
        (r.app_names().await.len() == 3).then_some(())
    })
    .await;
    // One element fewer (a deletion the share rule would let through) and a failing generator.
    let mut patch = shrink(2);
    patch["spec"]["generators"].as_array_mut().unwrap().push(
        json!({"git": {"repoURL": "file:///nonexistent/aroll.git", "revision": "main",
                             "directories": [{"path": "*"}]}}),
    );
    r.patch_set("generr", patch).await;
    let held = eventually("DeletionHeld", || async {
        r.condition("generr", "DeletionHeld")
            .await
            .filter(|c| c["status"] == "True")
    })
    .await;
    let message = held["message"].as_str().unwrap();
    assert!(message.contains("would delete"), "{message}");
    assert!(message.contains("b-3"), "{message}");
    let error = r.condition("generr", "ErrorOccurred").await.unwrap();
    assert_eq!(error["status"], "True");
    // The condition is written by the reconcile that decided; nothing was deleted by it.
    assert_eq!(alive(&r).await, ["b-1", "b-2", "b-3"]);
    assert!(
        message.ends_with("; nothing is deleted while a generator fails"),
        "{message}"
    );
}
