//! Snapshot tests of every `plumb app` layout, rendered from Application objects as the
//! controller writes them (`tests/fixtures/*.json`) and compared byte for byte with
//! `tests/snapshots/*` with [`crate::snapshot::check`].

use jiff::tz::TimeZone;
use plumb_model::application::Application;
use serde_json::json;

use super::waiter::{Step, Tracker, WatchFor};
use super::{get, list, resources, wait, windows};
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
