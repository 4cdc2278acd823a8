//! Sync windows evaluated with fixed clocks: local time across daylight-saving changes, the gap
//! and fold rules, and Argo's allow/deny/manual/overrun decisions.

use jiff::Timestamp;
use plumb_model::application::SyncWindow;
use serde_json::{Value, json};

use super::*;

fn window(v: Value) -> SyncWindow {
    let mut base = json!({"applications": ["*"]});
    base.as_object_mut()
        .unwrap()
        .extend(v.as_object().unwrap().clone());
    serde_json::from_value(base).unwrap()
}

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn state(windows: &[SyncWindow], now: &str) -> WindowState {
    let refs: Vec<&SyncWindow> = windows.iter().collect();
    evaluate(&refs, at(now)).unwrap()
}

fn active_at(w: &SyncWindow, now: &str) -> bool {
    !state(std::slice::from_ref(w), now).active().is_empty()
}

fn since(w: &SyncWindow, now: &str) -> Timestamp {
    state(std::slice::from_ref(w), now).active()[0].since
}

fn until(w: &SyncWindow, now: &str) -> Option<Timestamp> {
    state(std::slice::from_ref(w), now).active()[0].until
}

fn new_york_nine() -> SyncWindow {
    window(
        json!({"kind": "allow", "schedule": "0 9 * * *", "duration": "1h",
                  "timeZone": "America/New_York"}),
    )
}

#[test]
fn a_window_follows_local_time_in_winter_and_in_summer() {
    let w = new_york_nine();
    // January, EST (UTC-5): 09:00-10:00 local is 14:00-15:00 UTC.
    assert!(!active_at(&w, "2026-01-15T13:30:00Z"));
    assert!(active_at(&w, "2026-01-15T14:00:00Z"));
    assert!(active_at(&w, "2026-01-15T14:30:00Z"));
    assert!(!active_at(&w, "2026-01-15T15:00:00Z"));
    // July, EDT (UTC-4): 13:00-14:00 UTC.
    assert!(active_at(&w, "2026-07-15T13:30:00Z"));
    assert!(!active_at(&w, "2026-07-15T14:30:00Z"));
    assert_eq!(
        since(&w, "2026-07-15T13:30:00Z"),
        at("2026-07-15T13:00:00Z")
    );
}

#[test]
fn a_window_keeps_its_local_hour_on_both_sides_of_the_transitions() {
    let w = new_york_nine();
    // 2026-03-08 02:00 EST becomes 03:00 EDT.
    assert!(active_at(&w, "2026-03-07T14:30:00Z"));
    assert!(!active_at(&w, "2026-03-07T13:30:00Z"));
    assert!(active_at(&w, "2026-03-08T13:30:00Z"));
    assert!(!active_at(&w, "2026-03-08T14:30:00Z"));
    assert_eq!(
        since(&w, "2026-03-08T13:30:00Z"),
        at("2026-03-08T13:00:00Z")
    );
    // 2026-11-01 02:00 EDT becomes 01:00 EST.
    assert!(active_at(&w, "2026-10-31T13:30:00Z"));
    assert!(!active_at(&w, "2026-11-01T13:30:00Z"));
    assert!(active_at(&w, "2026-11-01T14:30:00Z"));
}

#[test]
fn a_window_across_a_transition_lasts_its_duration_in_elapsed_time() {
    let w = window(
        json!({"kind": "deny", "schedule": "0 1 * * *", "duration": "3h",
                          "timeZone": "America/New_York"}),
    );
    // Spring: opens 01:00 EST (06:00 UTC), closes three hours later at 05:00 EDT.
    assert_eq!(
        since(&w, "2026-03-08T06:00:00Z"),
        at("2026-03-08T06:00:00Z")
    );
    assert_eq!(
        until(&w, "2026-03-08T06:00:00Z"),
        Some(at("2026-03-08T09:00:00Z"))
    );
    assert!(active_at(&w, "2026-03-08T08:59:00Z"));
    assert!(!active_at(&w, "2026-03-08T09:00:00Z"));
    // Autumn: 01:00 happens twice; the window opens at the first (EDT, 05:00 UTC) and closes at
    // 03:00 EST, three hours later; the second 01:00 does not open it again.
    assert_eq!(
        since(&w, "2026-11-01T05:00:00Z"),
        at("2026-11-01T05:00:00Z")
    );
    assert!(active_at(&w, "2026-11-01T07:59:00Z"));
    assert!(!active_at(&w, "2026-11-01T08:00:00Z"));
}

#[test]
fn a_start_in_the_spring_gap_opens_at_the_end_of_the_gap() {
    // 2026-03-29 in Berlin: 02:00 CET becomes 03:00 CEST at 01:00 UTC; 02:30 does not exist.
    let w = window(
        json!({"kind": "deny", "schedule": "30 2 * * *", "duration": "1h",
                          "timeZone": "Europe/Berlin"}),
    );
    assert!(!active_at(&w, "2026-03-29T00:59:00Z"));
    assert!(active_at(&w, "2026-03-29T01:00:00Z"));
    assert_eq!(
        since(&w, "2026-03-29T01:30:00Z"),
        at("2026-03-29T01:00:00Z")
    );
    assert_eq!(
        until(&w, "2026-03-29T01:30:00Z"),
        Some(at("2026-03-29T02:00:00Z"))
    );
    assert!(!active_at(&w, "2026-03-29T02:00:00Z"));
    // The day before and after, 02:30 local as usual.
    assert_eq!(
        since(&w, "2026-03-28T01:45:00Z"),
        at("2026-03-28T01:30:00Z")
    );
    assert_eq!(
        since(&w, "2026-03-30T00:45:00Z"),
        at("2026-03-30T00:30:00Z")
    );
}

#[test]
fn a_start_in_the_repeated_hour_opens_once_at_the_first_occurrence() {
    // 2026-10-25 in Berlin: 03:00 CEST becomes 02:00 CET at 01:00 UTC; 02:30 happens twice.
    let w = window(
        json!({"kind": "deny", "schedule": "30 2 * * *", "duration": "30m",
                          "timeZone": "Europe/Berlin"}),
    );
    assert!(active_at(&w, "2026-10-25T00:30:00Z"));
    assert!(active_at(&w, "2026-10-25T00:59:00Z"));
    assert!(!active_at(&w, "2026-10-25T01:30:00Z"));
    assert!(!active_at(&w, "2026-10-25T01:45:00Z"));
    assert_eq!(
        state(std::slice::from_ref(&w), "2026-10-25T01:45:00Z").next_change(),
        Some(at("2026-10-26T01:30:00Z"))
    );
}

#[test]
fn no_windows_means_any_sync() {
    let s = state(&[], "2026-07-20T10:16:00Z");
    assert!(s.is_empty());
    assert!(s.can_sync(false));
    assert!(s.can_sync(true));
    assert_eq!(s.label(), "Sync Allowed");
    assert_eq!(s.blocked_message(false), None);
    assert_eq!(s.next_change(), None);
}

fn office_hours() -> SyncWindow {
    window(json!({"kind": "allow", "schedule": "0 8 * * *", "duration": "10h"}))
}

fn lunch_freeze(manual: bool) -> SyncWindow {
    window(
        json!({"kind": "deny", "schedule": "0 12 * * *", "duration": "1h", "manualSync": manual}),
    )
}

#[test]
fn an_open_allow_window_lets_syncs_through() {
    let s = state(
        &[office_hours(), lunch_freeze(false)],
        "2026-07-20T10:00:00Z",
    );
    assert!(s.can_sync(false));
    assert_eq!(s.label(), "Sync Allowed");
    assert_eq!(s.blocked_message(false), None);
    assert_eq!(s.active().len(), 1);
    assert_eq!(s.active()[0].index, 0);
    assert_eq!(s.active()[0].label(), "allow:0 8 * * *:10h");
    assert_eq!(s.next_change(), Some(at("2026-07-20T12:00:00Z")));
}

#[test]
fn deny_beats_allow() {
    let s = state(
        &[office_hours(), lunch_freeze(false)],
        "2026-07-20T12:30:00Z",
    );
    assert_eq!(s.active().len(), 2);
    assert!(!s.can_sync(false));
    assert!(!s.can_sync(true));
    assert_eq!(s.label(), "Sync Denied");
    assert_eq!(
        s.blocked_message(true).as_deref(),
        Some("Blocked by sync window deny:0 12 * * *:1h (active until 13:00 UTC)")
    );
    assert_eq!(s.active()[1].index, 1);
    assert_eq!(s.next_change(), Some(at("2026-07-20T13:00:00Z")));
}

#[test]
fn manual_sync_lets_manual_syncs_through_a_deny_window() {
    let s = state(
        &[office_hours(), lunch_freeze(true)],
        "2026-07-20T12:30:00Z",
    );
    assert!(!s.can_sync(false));
    assert!(s.can_sync(true));
    assert_eq!(s.label(), "Manual Allowed");
    assert_eq!(s.blocked_message(true), None);
    assert!(s.blocked_message(false).is_some());
    // Every active deny window must allow it.
    let other = window(json!({"kind": "deny", "schedule": "30 11 * * *", "duration": "2h"}));
    let s = state(&[lunch_freeze(true), other], "2026-07-20T12:30:00Z");
    assert!(!s.can_sync(true));
    assert_eq!(s.label(), "Sync Denied");
    assert_eq!(
        s.blocked_message(true).as_deref(),
        Some("Blocked by sync window deny:30 11 * * *:2h (active until 13:30 UTC)")
    );
    assert_eq!(
        s.blocked_message(false).as_deref(),
        Some(
            "Blocked by sync windows deny:0 12 * * *:1h (active until 13:00 UTC), \
             deny:30 11 * * *:2h (active until 13:30 UTC)"
        )
    );
}

#[test]
fn outside_every_allow_window_only_manual_syncs_may_pass() {
    let s = state(
        &[office_hours(), lunch_freeze(false)],
        "2026-07-20T20:00:00Z",
    );
    assert!(s.active().is_empty());
    assert!(!s.can_sync(false));
    assert!(!s.can_sync(true));
    assert_eq!(s.label(), "Sync Denied");
    assert_eq!(
        s.blocked_message(false).as_deref(),
        Some(
            "Blocked by sync window: no allow window is active \
             (next: allow:0 8 * * *:10h opens 2026-07-21 08:00 UTC)"
        )
    );
    let manual = window(
        json!({"kind": "allow", "schedule": "0 8 * * *", "duration": "10h",
                               "manualSync": true}),
    );
    let s = state(std::slice::from_ref(&manual), "2026-07-20T20:00:00Z");
    assert!(!s.can_sync(false));
    assert!(s.can_sync(true));
    assert_eq!(s.label(), "Manual Allowed");
    // Every closed allow window must have manualSync (Argo's "one inactive allow with manual
    // false" case).
    let s = state(&[manual, office_hours()], "2026-07-20T20:00:00Z");
    assert!(!s.can_sync(true));
}

#[test]
fn a_closed_deny_window_restricts_nothing() {
    let s = state(&[lunch_freeze(false)], "2026-07-20T10:00:00Z");
    assert!(s.can_sync(false));
    assert_eq!(s.label(), "Sync Allowed");
}

#[test]
fn sync_overrun_lets_running_syncs_finish() {
    let freeze = |overrun: bool| {
        window(
            json!({"kind": "deny", "schedule": "0 12 * * *", "duration": "1h",
                      "syncOverrun": overrun}),
        )
    };
    let s = state(&[freeze(true)], "2026-07-20T12:30:00Z");
    assert!(!s.can_sync(false));
    assert!(s.can_continue(false));
    let s = state(&[freeze(false)], "2026-07-20T12:30:00Z");
    assert!(!s.can_continue(false));

    let office = |overrun: bool| {
        window(
            json!({"kind": "allow", "schedule": "0 8 * * *", "duration": "10h",
                      "syncOverrun": overrun}),
        )
    };
    assert!(state(&[office(true)], "2026-07-20T18:30:00Z").can_continue(false));
    assert!(!state(&[office(false)], "2026-07-20T18:30:00Z").can_continue(false));
    assert!(!state(&[office(true), office(false)], "2026-07-20T18:30:00Z").can_continue(false));
    // The allow window ended and a deny window without overrun opened.
    let evening = window(json!({"kind": "deny", "schedule": "0 18 * * *", "duration": "1h"}));
    assert!(!state(&[office(true), evening.clone()], "2026-07-20T18:30:00Z").can_continue(false));
    // An open allow window and a deny window with overrun: the running sync goes on.
    assert!(state(&[office(false), freeze(true)], "2026-07-20T12:30:00Z").can_continue(false));
}

#[test]
fn back_to_back_occurrences_extend_until() {
    let w = window(json!({"kind": "deny", "schedule": "0 9,10 * * *", "duration": "90m"}));
    assert_eq!(
        until(&w, "2026-07-20T09:30:00Z"),
        Some(at("2026-07-20T11:30:00Z"))
    );
    let endless = window(json!({"kind": "deny", "schedule": "0 * * * *", "duration": "90m"}));
    assert_eq!(until(&endless, "2026-07-20T09:30:00Z"), None);
    let s = state(&[endless], "2026-07-20T09:30:00Z");
    assert_eq!(
        s.blocked_message(false).as_deref(),
        Some("Blocked by sync window deny:0 * * * *:90m (active)")
    );
}

#[test]
fn zero_or_negative_durations_never_open() {
    for d in ["0", "0s", "-1h"] {
        let w = window(json!({"kind": "deny", "schedule": "* * * * *", "duration": d}));
        assert!(!active_at(&w, "2026-07-20T09:30:00Z"), "{d}");
    }
}

#[test]
fn a_cron_tz_prefix_overrides_the_time_zone() {
    let w = window(
        json!({"kind": "deny", "schedule": "CRON_TZ=Asia/Tokyo 0 9 * * *",
                          "duration": "1h", "timeZone": "Europe/Berlin"}),
    );
    assert!(active_at(&w, "2026-07-20T00:30:00Z"));
    assert_eq!(
        state(std::slice::from_ref(&w), "2026-07-20T00:30:00Z").active()[0].time_zone,
        "Asia/Tokyo"
    );
}

fn error_chain(windows: &[SyncWindow]) -> String {
    let refs: Vec<&SyncWindow> = windows.iter().collect();
    let err = evaluate(&refs, at("2026-07-20T10:00:00Z")).unwrap_err();
    let mut text = err.to_string();
    let mut source = std::error::Error::source(&err);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

#[test]
fn bad_windows_are_errors_naming_the_window_and_the_field() {
    let ok = office_hours();
    assert_eq!(
        error_chain(&[
            ok.clone(),
            window(json!({"kind": "deny", "schedule": "0 25 * * *", "duration": "1h"}))
        ]),
        "sync window 1 (deny:0 25 * * *:1h): cannot parse schedule '0 25 * * *': \
         hour field '25': end of range (25) above maximum (23): 25"
    );
    assert_eq!(
        error_chain(&[window(
            json!({"kind": "deny", "schedule": "0 2 * * *", "duration": "1d"})
        )]),
        "sync window 0 (deny:0 2 * * *:1d): cannot parse duration '1d': \
         time: unknown unit \"d\" in duration \"1d\""
    );
    let zone = error_chain(&[window(json!({"kind": "deny", "schedule": "0 2 * * *",
                                           "duration": "1h", "timeZone": "Mars/Olympus"}))]);
    assert!(
        zone.starts_with("sync window 0 (deny:0 2 * * *:1h): unknown time zone 'Mars/Olympus': "),
        "{zone}"
    );
    assert_eq!(
        error_chain(&[window(
            json!({"kind": "block", "schedule": "0 2 * * *", "duration": "1h"})
        )]),
        "sync window 0 (block:0 2 * * *:1h): kind 'block' mismatch: can only be allow or deny"
    );
    assert!(validate(&ok, 0).is_ok());
    assert!(
        validate(
            &window(json!({"kind": "allow", "schedule": "", "duration": "1h"})),
            3
        )
        .is_err()
    );
}
