//! Snapshot tests of every `plumb app` layout, rendered from Application objects as the
//! controller writes them (`tests/fixtures/*.json`) and compared byte for byte with
//! `tests/snapshots/*` with [`crate::snapshot::check`].

use jiff::tz::TimeZone;
use plumb_model::application::Application;
use serde_json::json;

use super::follow::waiter::{Step, Tracker, WatchFor};
use super::output::windows;
use super::{get, history, list, resources, wait};
use crate::output::wide::{self, HeaderContext};
use crate::output::{Clock, json as json_out, yaml as yaml_out};
use crate::snapshot::check;

fn fixture(name: &str) -> Application {
    crate::snapshot::fixture(name)
}

fn clock() -> Clock {
    Clock {
        tz: TimeZone::UTC,
        now: "2026-07-20T10:16:00Z".parse().unwrap(),
    }
}

#[test]
fn get_out_of_sync_matches_the_transcript() {
    let app = fixture("payments-api-outofsync.json");
    check(
        "get-payments-outofsync.txt",
        &get::wide_text(&app, &HeaderContext::default(), false, &clock()),
    );
}

#[test]
fn get_with_url_and_operation() {
    let app = fixture("payments-api-synced-progressing.json");
    let ctx = HeaderContext {
        url: Some("https://argocd.acme.internal/applications/payments-api".into()),
        ..Default::default()
    };
    check(
        "get-payments-synced-show-operation.txt",
        &get::wide_text(&app, &ctx, true, &clock()),
    );
}

#[test]
fn get_with_conditions_hooks_prunes_and_windows() {
    let app = fixture("guestbook-failed-hooks.json");
    let project = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {"syncWindows": [{"kind": "deny", "schedule": "0 22 * * *", "duration": "8h", "applications": ["guest*"]}]}
    }))
    .unwrap();
    let ctx = HeaderContext {
        url: None,
        windows: windows::window_summary_at(&app, Some(&project), clock().now),
    };
    check(
        "get-guestbook-failed.txt",
        &get::wide_text(&app, &ctx, true, &clock()),
    );
}

/// The header while project windows stand in the way: an open deny window (10:00-11:00 UTC
/// around the clock's 10:16), then the same window letting manual syncs through, then closed
/// allow windows only (in New York, 06:16 local).
#[test]
fn get_header_while_windows_block_syncs() {
    let app = fixture("payments-api-outofsync.json");
    let header = |windows: serde_json::Value| {
        let project = serde_json::from_value(json!({
            "metadata": {"name": "default", "namespace": "argocd"},
            "spec": {"syncWindows": windows}
        }))
        .unwrap();
        let ctx = HeaderContext {
            url: None,
            windows: windows::window_summary_at(&app, Some(&project), clock().now),
        };
        get::header_text(&app, &ctx, false, &clock())
    };
    let mut out = header(json!([
        {"kind": "deny", "schedule": "0 10 * * *", "duration": "1h", "namespaces": ["payments"]},
        {"kind": "allow", "schedule": "0 8 * * 1-5", "duration": "10h", "namespaces": ["payments"]}
    ]));
    out.push_str("---\n");
    out.push_str(&header(json!([
        {"kind": "deny", "schedule": "0 10 * * *", "duration": "1h", "namespaces": ["payments"], "manualSync": true}
    ])));
    out.push_str("---\n");
    out.push_str(&header(json!([
        {"kind": "allow", "schedule": "0 9 * * 1-5", "duration": "8h", "timeZone": "America/New_York", "applications": ["payments-*"]},
        {"kind": "allow", "schedule": "0 22 * * *", "duration": "1h", "clusters": ["in-cluster", "https://kubernetes.default.svc"]}
    ])));
    check("get-payments-windows.txt", &out);
}

#[test]
fn get_multi_source_before_first_reconcile() {
    let app = fixture("billing-multisource-new.json");
    check(
        "get-billing-new.txt",
        &get::wide_text(&app, &HeaderContext::default(), true, &clock()),
    );
    check("get-billing-new.json", &json_out::render(&app).unwrap());
    check("get-billing-new.yaml", &yaml_out::render(&app).unwrap());
}

fn all_apps() -> Vec<Application> {
    let mut apps = vec![
        fixture("payments-api-outofsync.json"),
        fixture("guestbook-failed-hooks.json"),
        fixture("billing-multisource-new.json"),
    ];
    apps.sort_by(|a, b| a.name().cmp(b.name()));
    apps
}

#[test]
fn list_layouts() {
    let apps = all_apps();
    check(
        "list-wide.txt",
        &list::render(&apps, list::ListFormat::Wide).unwrap(),
    );
    check(
        "list-name.txt",
        &list::render(&apps, list::ListFormat::Name).unwrap(),
    );
    check(
        "list-json.json",
        &list::render(&apps, list::ListFormat::Json).unwrap(),
    );
    check(
        "list-yaml.yaml",
        &list::render(&apps, list::ListFormat::Yaml).unwrap(),
    );
    assert_eq!(
        wide::conditions_summary(&apps[1]),
        "SharedResourceWarning(2),SyncError"
    );
}

#[test]
fn resources_table() {
    check(
        "resources-guestbook.txt",
        &resources::table(&fixture("guestbook-failed-hooks.json")),
    );
}

#[test]
fn sync_final_status_matches_the_transcript() {
    let app = fixture("payments-api-synced-progressing.json");
    check(
        "sync-final-payments.txt",
        &wait::final_wide(&app, true, &HeaderContext::default(), &clock()),
    );
}

/// The rows `app sync` then `app wait --health` print for the payments-api rollout: the
/// request, the sync, then the rollout finishing.
#[test]
fn progress_rows_of_a_rollout() {
    let mut requested = fixture("payments-api-outofsync.json");
    requested.operation = Some(
        serde_json::from_value(
            json!({"sync": {"prune": false}, "initiatedBy": {"username": "alice"}}),
        )
        .unwrap(),
    );
    let synced = fixture("payments-api-synced-progressing.json");
    let mut healthy = synced.clone();
    if let Some(status) = healthy.status.as_mut() {
        for r in status.resources.iter_mut().flatten() {
            if r.kind.as_deref() == Some("Deployment") {
                r.health = Some(serde_json::from_value(json!({"status": "Healthy"})).unwrap());
            }
        }
        status.health = Some(serde_json::from_value(json!({"status": "Healthy"})).unwrap());
    }
    fn emit(step: Step, ts: &str, pending: &mut Vec<String>, out: &mut String) {
        match step {
            Step::Progress(rows) => {
                pending.extend(rows.iter().map(|r| wide::progress_line(ts, r)));
                out.push_str(&wide::progress_block(pending));
                pending.clear();
            }
            other => out.push_str(&format!("{other:?}\n")),
        }
    }
    let mut out = String::new();
    let mut pending = vec![wide::progress_header()];
    let mut sync = Tracker::new(
        WatchFor {
            operation: true,
            ..Default::default()
        },
        "payments-api",
        vec![],
    );
    emit(
        sync.step(&requested),
        "2026-07-20T10:15:32+00:00",
        &mut pending,
        &mut out,
    );
    emit(
        sync.step(&synced),
        "2026-07-20T10:15:42+00:00",
        &mut pending,
        &mut out,
    );
    out.push_str("--- wait --health\n");
    let mut pending = vec![wide::progress_header()];
    let mut wait = Tracker::new(
        WatchFor {
            health: true,
            ..Default::default()
        },
        "payments-api",
        vec![],
    );
    emit(
        wait.step(&synced),
        "2026-07-20T10:15:43+00:00",
        &mut pending,
        &mut out,
    );
    emit(
        wait.step(&synced),
        "2026-07-20T10:15:50+00:00",
        &mut pending,
        &mut out,
    );
    emit(
        wait.step(&healthy),
        "2026-07-20T10:16:04+00:00",
        &mut pending,
        &mut out,
    );
    check("progress-rows-payments.txt", &out);
}

const REVISION: &str = "9f3c1adf5c2b7e1a0d4c9b8e6f3a2d1c0b9a8f7e";

fn result(group: &str, kind: &str, name: &str, phase: &str, message: &str) -> serde_json::Value {
    json!({"group": group, "version": "v1", "kind": kind, "namespace": "payments", "name": name,
           "status": "Synced", "message": message, "hookPhase": phase, "syncPhase": "Sync"})
}

fn hook(name: &str, hook_type: &str, phase: &str, message: &str) -> serde_json::Value {
    json!({"group": "batch", "version": "v1", "kind": "Job", "namespace": "payments", "name": name,
           "status": "Synced", "message": message, "hookType": hook_type, "hookPhase": phase,
           "syncPhase": hook_type})
}

/// payments-api synced with a PreSync migration Job and a PostSync smoke-test Job, as the
/// controller writes it at each `stage`: 0 requested, 1 PreSync hook running, 2 applied and
/// waiting for the Deployment, 3 PostSync hook running, 4 finished (no reconcile since), 5
/// compared again.
fn hook_rollout(stage: u8) -> Application {
    let deploy_health = match stage {
        0 | 1 => json!({"status": "Healthy"}),
        2 => {
            json!({"status": "Progressing", "message": "Waiting for rollout to finish: 1 of 3 updated replicas are available..."})
        }
        _ => json!({"status": "Healthy"}),
    };
    let deploy_sync = if stage < 2 { "OutOfSync" } else { "Synced" };
    let reconciled = [
        "2026-07-20T10:15:20Z",
        "2026-07-20T10:15:20Z",
        "2026-07-20T10:15:38Z",
        "2026-07-20T10:15:52Z",
        "2026-07-20T10:15:52Z",
        "2026-07-20T10:16:03Z",
    ][usize::from(stage)];
    let mut status = json!({
        "sync": {"status": deploy_sync, "revision": REVISION,
                 "comparedTo": {"destination": {"namespace": "payments", "server": "https://kubernetes.default.svc"},
                                "source": {"path": "k8s/overlays/prod", "repoURL": "https://git.acme.internal/apps/payments.git", "targetRevision": "v1.4.0"}}},
        "health": {"status": deploy_health["status"].clone()},
        "reconciledAt": reconciled,
        "resources": [
            {"kind": "ConfigMap", "name": "payments-api", "namespace": "payments", "status": "Synced", "version": "v1"},
            {"health": {"status": "Healthy"}, "kind": "Service", "name": "payments-api", "namespace": "payments", "status": "Synced", "version": "v1"},
            {"group": "apps", "health": deploy_health, "kind": "Deployment", "name": "payments-api", "namespace": "payments", "status": deploy_sync, "version": "v1"}
        ],
        "sourceType": "Kustomize"
    });
    let migrate = match stage {
        1 => hook(
            "payments-db-migrate",
            "PreSync",
            "Running",
            "job.batch/payments-db-migrate created",
        ),
        _ => hook(
            "payments-db-migrate",
            "PreSync",
            "Succeeded",
            "Reached expected number of succeeded pods",
        ),
    };
    let mut results = vec![migrate];
    if stage >= 2 {
        results.extend([
            result(
                "",
                "ConfigMap",
                "payments-api",
                "Running",
                "configmap/payments-api serverside-applied",
            ),
            result(
                "",
                "Service",
                "payments-api",
                "Running",
                "service/payments-api serverside-applied",
            ),
            result(
                "apps",
                "Deployment",
                "payments-api",
                "Running",
                "deployment.apps/payments-api serverside-applied",
            ),
        ]);
    }
    if stage == 3 {
        results.push(hook(
            "payments-smoke-test",
            "PostSync",
            "Running",
            "job.batch/payments-smoke-test created",
        ));
    } else if stage >= 4 {
        results.push(hook(
            "payments-smoke-test",
            "PostSync",
            "Succeeded",
            "Reached expected number of succeeded pods",
        ));
    }
    let operation = json!({"initiatedBy": {"username": "alice"}, "retry": {},
                           "sync": {"prune": false, "dryRun": false, "syncStrategy": {"hook": {}}}});
    if stage >= 1 {
        let (phase, message) = match stage {
            1 => (
                "Running",
                "waiting for completion of hook batch/Job/payments-db-migrate",
            ),
            2 => (
                "Running",
                "waiting for healthy state of apps/Deployment/payments-api",
            ),
            3 => (
                "Running",
                "waiting for completion of hook batch/Job/payments-smoke-test",
            ),
            _ => ("Succeeded", "successfully synced (all tasks run)"),
        };
        status["operationState"] = json!({
            "operation": operation, "phase": phase, "message": message,
            "startedAt": "2026-07-20T10:15:32Z",
            "syncResult": {"resources": results, "revision": REVISION,
                           "source": {"path": "k8s/overlays/prod", "repoURL": "https://git.acme.internal/apps/payments.git", "targetRevision": "v1.4.0"}}
        });
        if stage >= 4 {
            status["operationState"]["finishedAt"] = json!("2026-07-20T10:16:02Z");
        }
    }
    let mut app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"creationTimestamp": "2026-07-18T09:02:11Z", "generation": 16, "name": "payments-api",
                     "namespace": "argocd", "resourceVersion": (48390 + u32::from(stage)).to_string(),
                     "uid": "0b6f7d8e-3c2a-4f51-9e4d-7a1c2b3d4e5f"},
        "spec": {"destination": {"namespace": "payments", "server": "https://kubernetes.default.svc"}, "project": "default",
                 "source": {"path": "k8s/overlays/prod", "repoURL": "https://git.acme.internal/apps/payments.git", "targetRevision": "v1.4.0"}},
        "status": status
    });
    // `.operation` stays until the operation completes.
    if stage < 4 {
        app["operation"] = operation;
    }
    serde_json::from_value(app).unwrap()
}

/// What `app sync` prints while a sync with hooks runs: a row each time a resource changes,
/// hooks with their type and phase, then the final state with the hooks in the table.
#[test]
fn progress_rows_and_final_table_of_a_sync_with_hooks() {
    let mut tracker = Tracker::new(
        WatchFor {
            operation: true,
            ..Default::default()
        },
        "payments-api",
        vec![],
    );
    let mut out = String::new();
    let mut pending = vec![wide::progress_header()];
    for stage in 0..=5 {
        let ts = format!("2026-07-20T10:15:{:02}+00:00", 30 + 6 * u32::from(stage));
        match tracker.step(&hook_rollout(stage)) {
            Step::Progress(rows) => {
                pending.extend(rows.iter().map(|r| wide::progress_line(&ts, r)));
                out.push_str(&wide::progress_block(&pending));
                pending.clear();
            }
            Step::Done => {
                out.push_str(&wait::final_wide(
                    &hook_rollout(stage),
                    true,
                    &HeaderContext::default(),
                    &clock(),
                ));
            }
            other => panic!("stage {stage}: {other:?}"),
        }
    }
    check("sync-hooks-payments.txt", &out);
}

#[test]
fn history_single_source() {
    let app = fixture("payments-api-synced-progressing.json");
    let history = app.status.as_ref().unwrap().history.as_deref().unwrap();
    check(
        "history-payments.txt",
        &history::table(history, &clock().tz),
    );
    assert_eq!(history::ids(history), "0\n1\n");
}

#[test]
fn history_in_the_local_zone() {
    let app = fixture("payments-api-synced-progressing.json");
    let history = app.status.as_ref().unwrap().history.as_deref().unwrap();
    let paris = TimeZone::get("Europe/Paris").unwrap();
    check(
        "history-payments-paris.txt",
        &history::table(history, &paris),
    );
}

#[test]
fn history_grouped_by_source_repository() {
    let app = fixture("billing-multisource-history.json");
    let history = app.status.as_ref().unwrap().history.as_deref().unwrap();
    check(
        "history-billing-multisource.txt",
        &history::table(history, &clock().tz),
    );
}
