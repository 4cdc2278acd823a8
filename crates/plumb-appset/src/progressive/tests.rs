//! Cases ported from Argo CD's progressive sync tests (`progressive_sync_test.go`,
//! `progressive_sync_dependencies_test.go`), plus whole rollouts over several reconciles.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::Timestamp;
use plumb_model::application::Application;
use plumb_model::applicationset::{ApplicationSet, ApplicationSetApplicationStatus, condition};
use serde_json::{Value, json};

use super::status;
use super::*;

fn now() -> Timestamp {
    "2026-12-07T14:00:00Z".parse().unwrap()
}

fn ago(secs: i64) -> String {
    status::format_time(now() - jiff::SignedDuration::from_secs(secs))
}

fn rolling_set(steps: Value, statuses: Value) -> ApplicationSet {
    serde_json::from_value(json!({
        "metadata": {"name": "fleet", "namespace": "argocd"},
        "spec": {
            "generators": [],
            "template": {},
            "strategy": {"type": "RollingSync", "rollingSync": {"steps": steps}}
        },
        "status": {"applicationStatus": statuses}
    }))
    .unwrap()
}

fn env_steps() -> Value {
    json!([
        {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
        {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]}
    ])
}

/// An Application with labels and the status the application controller reports.
fn app(name: &str, labels: Value, health: &str, sync: &str, revision: &str) -> Application {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "argocd", "labels": labels},
        "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc"},
                 "source": {"repoURL": "https://example.com/r.git", "path": name}},
        "status": {
            "reconciledAt": status::format_time(now()),
            "health": {"status": health},
            "sync": {"status": sync, "revision": revision}
        }
    }))
    .unwrap()
}

fn with_operation(mut a: Application, phase: &str, started: &str) -> Application {
    let mut v = serde_json::to_value(&a).unwrap();
    v["status"]["operationState"] =
        json!({"operation": {"sync": {}}, "phase": phase, "startedAt": started});
    a = serde_json::from_value(v).unwrap();
    a
}

fn st(app: &str, status: &str, step: &str, revisions: &[&str], ltt: &str) -> Value {
    json!({"application": app, "status": status, "step": step, "message": "",
           "targetRevisions": revisions, "lastTransitionTime": ltt})
}

fn statuses(v: Value) -> Vec<ApplicationSetApplicationStatus> {
    serde_json::from_value(v).unwrap()
}

fn one_step_map(apps: &[&str]) -> StepMap {
    let mut map = StepMap {
        steps: vec![Vec::new(), Vec::new()],
        step_of: BTreeMap::new(),
    };
    for a in apps {
        map.steps[0].push(a.to_string());
        map.step_of.insert(a.to_string(), 0);
    }
    map
}

fn update_one(previous: Value, live: Application) -> ApplicationSetApplicationStatus {
    let out = status::update(
        &statuses(previous),
        &[live],
        &BTreeMap::new(),
        &one_step_map(&["app1"]),
        now(),
    );
    assert_eq!(out.len(), 1);
    out.into_iter().next().unwrap()
}

// ---- steps -----------------------------------------------------------------------------------

fn labelled(name: &str, labels: Value) -> Application {
    app(name, labels, "Healthy", "Synced", "r1")
}

fn build(steps: Value, apps: &[Application]) -> (StepMap, ValidationIssues) {
    let steps: Vec<plumb_model::applicationset::ApplicationSetRolloutStep> =
        serde_json::from_value(steps).unwrap();
    steps::build(&steps, apps)
}

#[test]
fn in_selectors_and_every_expression_must_hold() {
    let apps = [
        labelled("app-dev", json!({"env": "dev", "tier": "web"})),
        labelled("app-qa", json!({"env": "qa", "tier": "web"})),
        labelled("app-prod", json!({"env": "prod"})),
        labelled("app-none", json!({})),
    ];
    let (map, issues) = build(
        json!([
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev", "qa"]},
                                  {"key": "tier", "operator": "In", "values": ["web"]}]},
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]}
        ]),
        &apps,
    );
    assert_eq!(map.steps, vec![vec!["app-dev", "app-qa"], vec!["app-prod"]]);
    assert_eq!(map.step_label("app-none"), "-1");
    assert_eq!(map.step_label("app-prod"), "2");
    assert!(!issues.has_issues());
}

#[test]
fn not_in_selects_applications_without_the_label_and_wins_over_in() {
    let apps = [
        labelled("app-dev", json!({"env": "dev"})),
        labelled("app-prod", json!({"env": "prod"})),
        labelled("app-nolabel", json!({})),
    ];
    let (map, _) = build(
        json!([{"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}]),
        &apps,
    );
    assert_eq!(map.steps, vec![vec!["app-dev", "app-nolabel"]]);
    let (map, _) = build(
        json!([{"matchExpressions": [
            {"key": "env", "operator": "In", "values": ["dev", "prod"]},
            {"key": "env", "operator": "NotIn", "values": ["prod"]}]}]),
        &apps,
    );
    assert_eq!(map.steps, vec![vec!["app-dev"]]);
}

#[test]
fn an_application_selected_twice_is_reported_and_stays_in_its_first_step() {
    let apps = [
        labelled("app1", json!({"env": "dev"})),
        labelled("app2", json!({"env": "dev"})),
    ];
    let (map, issues) = build(
        json!([
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
            {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}
        ]),
        &apps,
    );
    assert_eq!(map.step_of["app1"], 0);
    assert_eq!(
        issues.message(),
        "Applications 'app1', 'app2' are selected by multiple steps: [(1-2), (1-2)]"
    );
    let (_, issues) = build(
        json!([
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
            {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}
        ]),
        &apps[..1],
    );
    assert_eq!(
        issues.message(),
        "Application 'app1' is selected by multiple steps: (1-2)"
    );
}

#[test]
fn invalid_operators_and_empty_steps_are_reported_as_argo_words_them() {
    let apps = [labelled("app1", json!({"env": "dev"}))];
    let (map, issues) = build(
        json!([
            {"matchExpressions": [{"key": "env", "operator": "Exists", "values": ["dev"]}]},
            {"matchExpressions": [{"key": "env", "operator": "Equals", "values": ["dev"]}]},
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]}
        ]),
        &apps,
    );
    assert_eq!(map.steps[2], vec!["app1"]);
    assert_eq!(
        issues.message(),
        "Steps 1, 2 have invalid matchExpression operators: Exists, Equals. Supported Operators are 'In' and 'NotIn'"
    );
    let (_, issues) = build(env_steps(), &[labelled("a", json!({"env": "qa"}))]);
    assert_eq!(
        issues.message(),
        "Steps [1 2] have no applications matching their criteria"
    );
}

// ---- status: step one ------------------------------------------------------------------------

#[test]
fn new_applications_start_waiting_or_move_on_when_already_synced() {
    let s = update_one(json!([]), app("app1", json!({}), "Healthy", "Synced", "r1"));
    assert_eq!(
        (s.status.as_str(), s.message.as_str(), s.step.as_str()),
        (
            "Healthy",
            "Application resource has synced, updating status to Healthy",
            "1"
        )
    );
    assert_eq!(s.target_revisions, vec!["r1"]);
    assert_eq!(s.last_transition_time, Some(status::format_time(now())));

    let s = update_one(
        json!([]),
        app("app1", json!({}), "Progressing", "Synced", "r1"),
    );
    assert_eq!(s.status, "Progressing");
    assert_eq!(
        s.message,
        "Application resource has synced, updating status to Progressing"
    );

    let s = update_one(
        json!([]),
        app("app1", json!({}), "Healthy", "OutOfSync", "r1"),
    );
    assert_eq!(s.status, "Waiting");
    assert_eq!(
        s.message,
        "No Application status found, defaulting status to Waiting"
    );
}

#[test]
fn a_new_revision_makes_an_out_of_sync_application_wait() {
    let prev = json!([st("app1", "Healthy", "1", &["r1"], &ago(300))]);
    let s = update_one(
        prev.clone(),
        app("app1", json!({}), "Healthy", "OutOfSync", "r2"),
    );
    assert_eq!(s.status, "Waiting");
    assert_eq!(
        s.message,
        "Application has pending changes, setting status to Waiting"
    );
    assert_eq!(s.target_revisions, vec!["r2"]);
    assert_eq!(s.last_transition_time, Some(status::format_time(now())));
    // Already Synced at the new revision: straight to Healthy.
    let s = update_one(
        prev.clone(),
        app("app1", json!({}), "Healthy", "Synced", "r2"),
    );
    assert_eq!(s.status, "Healthy");
    // Nothing changed: nothing moves, the transition time stays.
    let s = update_one(prev, app("app1", json!({}), "Healthy", "Synced", "r1"));
    assert_eq!(s.last_transition_time, Some(ago(300)));
    assert_eq!(s.message, "");
}

#[test]
fn a_spec_change_makes_the_application_wait_with_its_own_message() {
    let prev = statuses(json!([st("app1", "Healthy", "1", &["r1"], &ago(300))]));
    let live = [app("app1", json!({}), "Healthy", "OutOfSync", "r1")];
    let changed = BTreeMap::from([("app1".to_string(), true)]);
    let out = status::update(&prev, &live, &changed, &one_step_map(&["app1"]), now());
    assert_eq!(
        out[0].message,
        "Application has pending changes (spec differs), setting status to Waiting"
    );
    let live = [app("app1", json!({}), "Healthy", "OutOfSync", "r2")];
    let out = status::update(&prev, &live, &changed, &one_step_map(&["app1"]), now());
    assert_eq!(
        out[0].message,
        "Application has pending changes (revision and spec differ), setting status to Waiting"
    );
}

#[test]
fn pending_moves_to_progressing_once_a_sync_started_after_it() {
    let prev = json!([st("app1", "Pending", "1", &["next"], &ago(300))]);
    for (phase, message) in [
        (
            "Running",
            "Application resource became Progressing, updating status from Pending to Progressing",
        ),
        (
            "Succeeded",
            "Application resource completed a sync successfully, updating status from Pending to Progressing",
        ),
        (
            "Failed",
            "Application resource completed a sync, updating status from Pending to Progressing",
        ),
        (
            "Error",
            "Application resource completed a sync, updating status from Pending to Progressing",
        ),
    ] {
        let live = with_operation(
            app("app1", json!({}), "Healthy", "OutOfSync", "next"),
            phase,
            &ago(60),
        );
        let s = update_one(prev.clone(), live);
        assert_eq!(
            (s.status.as_str(), s.message.as_str()),
            ("Progressing", message),
            "{phase}"
        );
        assert_eq!(s.target_revisions, vec!["next"]);
    }
}

#[test]
fn pending_waits_for_a_sync_after_the_transition_seen_by_a_fresh_comparison() {
    // The only sync started before the Application became Pending.
    let prev = json!([st("app1", "Pending", "1", &["next"], &ago(0))]);
    let live = with_operation(
        app("app1", json!({}), "Progressing", "Synced", "next"),
        "Succeeded",
        &ago(300),
    );
    assert_eq!(update_one(prev, live).status, "Pending");
    // Stale comparison: reconciled before the transition.
    let prev = json!([st("app1", "Pending", "1", &["next"], &ago(120))]);
    let mut live = with_operation(
        app("app1", json!({}), "Healthy", "Synced", "next"),
        "Succeeded",
        &ago(60),
    );
    live.status.as_mut().unwrap().reconciled_at = Some(ago(300));
    assert_eq!(update_one(prev, live).status, "Pending");
}

#[test]
fn pending_with_an_invalid_spec_moves_to_progressing() {
    let prev = json!([st("app1", "Pending", "1", &["next"], &ago(300))]);
    let mut live = app("app1", json!({}), "Unknown", "Unknown", "next");
    let status = live.status.as_mut().unwrap();
    status.reconciled_at = None;
    status.conditions = Some(vec![plumb_model::application::ApplicationCondition {
        type_: "InvalidSpecError".into(),
        message: "Fake invalid specs preventing app updates".into(),
        last_transition_time: None,
    }]);
    let s = update_one(prev, live);
    assert_eq!(s.status, "Progressing");
    assert_eq!(
        s.message,
        "Application resource has error and cannot sync, updating status to Progressing"
    );
}

#[test]
fn progressing_becomes_healthy_only_when_synced_and_healthy() {
    let prev = json!([st("app1", "Progressing", "1", &["next"], &ago(300))]);
    let s = update_one(
        prev.clone(),
        app("app1", json!({}), "Healthy", "Synced", "next"),
    );
    assert_eq!(s.status, "Healthy");
    assert_eq!(
        s.message,
        "Application resource became Healthy, updating status from Progressing to Healthy"
    );
    let s = update_one(
        prev,
        app("app1", json!({}), "Progressing", "Synced", "next"),
    );
    assert_eq!(s.status, "Progressing");
    assert_eq!(s.last_transition_time, Some(ago(300)));
}

#[test]
fn statuses_follow_the_live_applications_and_their_steps() {
    let prev = statuses(json!([
        st("app1", "Healthy", "1", &["r1"], &ago(300)),
        st("gone", "Healthy", "1", &["r1"], &ago(300)),
        st("moved", "Healthy", "1", &["r1"], &ago(300))
    ]));
    let live = [
        app("moved", json!({}), "Healthy", "Synced", "r1"),
        app("app1", json!({}), "Healthy", "Synced", "r1"),
    ];
    let mut map = one_step_map(&["app1"]);
    map.steps[1].push("moved".into());
    map.step_of.insert("moved".into(), 1);
    let out = status::update(&prev, &live, &BTreeMap::new(), &map, now());
    let got: Vec<(&str, &str)> = out
        .iter()
        .map(|s| (s.application.as_str(), s.step.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![("app1", "1"), ("moved", "2")],
        "sorted, deleted ones dropped, steps updated"
    );
    let out = status::update(
        &prev,
        &live[..1],
        &BTreeMap::new(),
        &StepMap::default(),
        now(),
    );
    assert_eq!(out[0].step, "-1", "in no step");
}

// ---- status: step two (maxUpdate) ------------------------------------------------------------

fn progress(
    max_update: Value,
    prev: Value,
    to_sync: &[&str],
) -> (Vec<String>, Vec<InvalidMaxUpdate>) {
    let steps: Vec<plumb_model::applicationset::ApplicationSetRolloutStep> =
        serde_json::from_value(json!([{"matchExpressions": [], "maxUpdate": max_update}])).unwrap();
    let mut statuses = statuses(prev);
    let names: Vec<&str> = statuses
        .iter()
        .map(|s| s.application.as_str())
        .collect::<Vec<_>>();
    let mut map = one_step_map(&names);
    map.steps.truncate(1);
    let to_sync: BTreeSet<String> = to_sync.iter().map(|s| s.to_string()).collect();
    let invalid = status::progress(&mut statuses, &steps, &map, &to_sync, now());
    (statuses.into_iter().map(|s| s.status).collect(), invalid)
}

fn waiting(n: usize) -> Value {
    Value::Array(
        (1..=n)
            .map(|i| st(&format!("app{i}"), "Waiting", "1", &[], &ago(60)))
            .collect(),
    )
}

#[test]
fn waiting_applications_of_open_steps_become_pending() {
    let (out, _) = progress(Value::Null, waiting(2), &["app1", "app2"]);
    assert_eq!(out, vec!["Pending", "Pending"]);
    let (out, _) = progress(Value::Null, waiting(2), &["app1"]);
    assert_eq!(out, vec!["Pending", "Waiting"], "not in an open step");
    let prev = json!([st("app1", "Healthy", "1", &[], &ago(60))]);
    assert_eq!(progress(Value::Null, prev, &["app1"]).0, vec!["Healthy"]);
}

#[test]
fn max_update_counts_those_already_updating() {
    let prev = json!([
        st("app1", "Progressing", "1", &[], &ago(60)),
        st("app2", "Waiting", "1", &[], &ago(60)),
        st("app3", "Waiting", "1", &[], &ago(60))
    ]);
    let (out, _) = progress(json!(2), prev, &["app1", "app2", "app3"]);
    assert_eq!(out, vec!["Progressing", "Pending", "Waiting"]);
}

#[test]
fn max_update_percentages_round_down_with_at_least_one() {
    let all = ["app1", "app2", "app3", "app4", "app5"];
    let pending = |v: Value| {
        progress(v, waiting(5), &all)
            .0
            .iter()
            .filter(|s| *s == "Pending")
            .count()
    };
    assert_eq!(pending(json!("50%")), 2);
    assert_eq!(pending(json!("100%")), 5);
    assert_eq!(pending(json!("10%")), 1);
    assert_eq!(pending(json!("0%")), 0);
    assert_eq!(pending(json!(0)), 0);
    assert_eq!(pending(json!(1)), 1);
}

#[test]
fn an_invalid_max_update_is_reported_once_per_step() {
    let (out, invalid) = progress(json!("two"), waiting(3), &["app1", "app2", "app3"]);
    assert_eq!(
        out,
        vec!["Pending", "Waiting", "Waiting"],
        "Argo then lets one through"
    );
    assert_eq!(
        invalid,
        vec![InvalidMaxUpdate {
            step: 0,
            value: "two".into()
        }]
    );
    let issues = ValidationIssues {
        invalid_max_updates: invalid,
        ..ValidationIssues::default()
    };
    assert_eq!(
        issues.message(),
        "Step 1 has an invalid maxUpdate value: two"
    );
}

// ---- open steps ------------------------------------------------------------------------------

#[test]
fn a_step_opens_when_every_application_before_it_is_healthy() {
    let map = |steps: &[&[&str]]| {
        let mut m = StepMap::default();
        for (i, names) in steps.iter().enumerate() {
            m.steps.push(names.iter().map(|s| s.to_string()).collect());
            for n in *names {
                m.step_of.insert(n.to_string(), i);
            }
        }
        m
    };
    let live = [
        app("a1", json!({}), "Healthy", "Synced", "r"),
        app("a2", json!({}), "Healthy", "Synced", "r"),
        app("b1", json!({}), "Healthy", "Synced", "r"),
    ];
    let open = |m: &StepMap, live: &[Application], s: Value| -> Vec<String> {
        sync::open_steps(m, live, &statuses(s))
            .into_iter()
            .collect()
    };
    let two = map(&[&["a1", "a2"], &["b1"]]);
    let healthy = json!([
        st("a1", "Healthy", "1", &[], ""),
        st("a2", "Healthy", "1", &[], "")
    ]);
    assert_eq!(open(&two, &live, healthy.clone()), vec!["a1", "a2", "b1"]);
    for other in ["Waiting", "Pending", "Progressing"] {
        let s = json!([
            st("a1", "Healthy", "1", &[], ""),
            st("a2", other, "1", &[], "")
        ]);
        assert_eq!(open(&two, &live, s), vec!["a1", "a2"], "{other}");
    }
    assert_eq!(
        open(&two, &live, json!([st("a1", "Healthy", "1", &[], "")])),
        vec!["a1", "a2"],
        "no status yet"
    );
    assert_eq!(
        open(&two, &live[..1], healthy),
        vec!["a1", "a2"],
        "not created yet"
    );
    let empty_first = map(&[&[], &["b1"]]);
    assert_eq!(
        open(&empty_first, &live, json!([])),
        vec!["b1"],
        "an empty step is complete"
    );
    assert!(open(&StepMap::default(), &live, json!([])).is_empty());
}

// ---- the sync operation ----------------------------------------------------------------------

#[test]
fn the_sync_operation_is_argos() {
    let mut a = app("app1", json!({}), "Healthy", "OutOfSync", "r");
    let op = serde_json::to_value(sync_operation(&a, false, &[])).unwrap();
    assert_eq!(
        op,
        json!({"sync": {}, "initiatedBy": {"username": "applicationset-controller", "automated": true},
               "info": [{"name": "Reason", "value": "ApplicationSet RollingSync triggered a sync of this Application resource"}],
               "retry": {"limit": 5}})
    );
    let op = sync_operation(&a, false, &["abc123".into()]);
    assert_eq!(op.sync.unwrap().revision.as_deref(), Some("abc123"));
    a.spec.sync_policy = serde_json::from_value(
        json!({"retry": {"limit": 10}, "syncOptions": ["CreateNamespace=true"]}),
    )
    .unwrap();
    let op = serde_json::to_value(sync_operation(&a, true, &[])).unwrap();
    assert_eq!(
        op["sync"],
        json!({"prune": true, "syncOptions": ["CreateNamespace=true"]})
    );
    assert_eq!(op["retry"], json!({"limit": 10}));
    a.spec.sources =
        serde_json::from_value(json!([{"repoURL": "https://a"}, {"repoURL": "https://b"}]))
            .unwrap();
    let op = sync_operation(&a, false, &["abc123".into(), "def456".into()]);
    assert_eq!(
        op.sync.unwrap().revisions,
        Some(vec!["abc123".into(), "def456".into()])
    );
}

#[test]
fn automated_sync_is_switched_off_and_its_prune_carried_into_the_operation() {
    let mut a = app("app1", json!({}), "Healthy", "OutOfSync", "r");
    a.spec.sync_policy =
        serde_json::from_value(json!({"automated": {"prune": true, "selfHeal": true}})).unwrap();
    let mut b = app("app2", json!({}), "Healthy", "OutOfSync", "r");
    b.spec.sync_policy = serde_json::from_value(json!({"automated": {"prune": true}})).unwrap();
    let rollout = Rollout {
        application_status: statuses(json!([
            st("app1", "Pending", "1", &["r7"], ""),
            st("app2", "Waiting", "1", &[], "")
        ])),
        to_sync: ["app1".to_string(), "app2".to_string()].into(),
        refresh: vec![],
        waiting_for_refresh: false,
        conditions: vec![],
        requeue_after: None,
    };
    let mut desired = vec![a, b];
    assert_eq!(rollout.prepare(&mut desired), vec!["app1"]);
    let a = serde_json::to_value(&desired[0]).unwrap();
    assert_eq!(
        a["spec"]["syncPolicy"]["automated"],
        json!({"prune": true, "selfHeal": true, "enabled": false})
    );
    assert_eq!(
        a["operation"]["sync"],
        json!({"revision": "r7", "prune": true})
    );
    assert!(
        desired[1].operation.is_none(),
        "only Pending Applications are synced"
    );
    assert_eq!(
        desired[1]
            .spec
            .sync_policy
            .as_ref()
            .unwrap()
            .automated
            .as_ref()
            .unwrap()
            .enabled,
        Some(false)
    );
}

// ---- plan: the whole reconcile ---------------------------------------------------------------

fn enabled() -> Settings {
    Settings {
        enabled: true,
        refresh_grace_period: Duration::from_secs(30),
    }
}

#[test]
fn disabled_progressive_syncs_ignore_the_strategy_and_clear_the_status() {
    let set = rolling_set(env_steps(), json!([st("a", "Healthy", "1", &[], "")]));
    let plan = plan(
        &set,
        &[],
        &[],
        &BTreeMap::new(),
        &Settings::default(),
        now(),
    );
    assert_eq!(
        plan,
        Plan::Off {
            clear_application_status: true,
            remove_conditions: false
        }
    );
    let mut all_at_once = set.clone();
    all_at_once.spec.strategy.as_mut().unwrap().r#type = Some("AllAtOnce".into());
    let plan = super::plan(&all_at_once, &[], &[], &BTreeMap::new(), &enabled(), now());
    assert_eq!(
        plan,
        Plan::Off {
            clear_application_status: true,
            remove_conditions: true
        }
    );
}

#[test]
fn a_rolling_sync_without_steps_is_an_error() {
    let set = rolling_set(json!([]), json!([]));
    let Plan::NoSteps(c) = plan(&set, &[], &[], &BTreeMap::new(), &enabled(), now()) else {
        panic!("expected NoSteps");
    };
    assert_eq!(
        (c.r#type.as_str(), c.reason.as_str()),
        (condition::ERROR_OCCURRED, "ApplicationSetRolloutError")
    );
    assert_eq!(c.message, "No steps defined for rollout");
}

fn rollout(set: &ApplicationSet, live: &[Application], at: Timestamp) -> Rollout {
    match plan(set, live, live, &BTreeMap::new(), &enabled(), at) {
        Plan::Rollout(r) => r,
        other => panic!("expected a rollout, got {other:?}"),
    }
}

fn status_of(r: &Rollout) -> Vec<(String, String)> {
    r.application_status
        .iter()
        .map(|s| (s.application.clone(), s.status.clone()))
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// A two-step rollout over four Applications, reconcile by reconcile, with the application
/// controller's part played by editing the Applications' status.
#[test]
fn a_two_step_rollout_from_start_to_finish() {
    let mut set = rolling_set(
        json!([
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}], "maxUpdate": 1}
        ]),
        json!([]),
    );
    let mut live = vec![
        app("dev-1", json!({"env": "dev"}), "Missing", "OutOfSync", "r1"),
        app(
            "prod-1",
            json!({"env": "prod"}),
            "Missing",
            "OutOfSync",
            "r1",
        ),
        app(
            "prod-2",
            json!({"env": "prod"}),
            "Missing",
            "OutOfSync",
            "r1",
        ),
        app("other", json!({"env": "qa"}), "Missing", "OutOfSync", "r1"),
    ];
    let mut t = now();
    let step = |set: &mut ApplicationSet, live: &mut Vec<Application>, t: &mut Timestamp| {
        *t += jiff::SignedDuration::from_secs(10);
        for a in live.iter_mut() {
            a.status.as_mut().unwrap().reconciled_at = Some(status::format_time(*t));
        }
        let r = rollout(set, live, *t);
        set.status.as_mut().unwrap().application_status = Some(r.application_status.clone());
        r
    };
    // Round 1: all start Waiting; step 1 is open: dev-1 becomes Pending and gets a sync.
    let r = step(&mut set, &mut live, &mut t);
    assert_eq!(
        status_of(&r),
        pairs(&[
            ("dev-1", "Pending"),
            ("other", "Waiting"),
            ("prod-1", "Waiting"),
            ("prod-2", "Waiting")
        ])
    );
    assert_eq!(r.to_sync, ["dev-1".to_string()].into());
    let mut desired = live.clone();
    assert_eq!(r.prepare(&mut desired), vec!["dev-1"]);
    assert_eq!(r.conditions[0].status, "False", "{:?}", r.conditions[0]);
    assert_eq!(
        r.conditions[1].message,
        "ApplicationSet is performing rollout of step 1"
    );
    assert_eq!(
        r.conditions[1].reason,
        condition::reason::APPLICATION_SET_MODIFIED
    );
    let other = r
        .application_status
        .iter()
        .find(|s| s.application == "other")
        .unwrap();
    assert_eq!(other.step, "-1");

    // The sync runs and dev-1 becomes Synced and Healthy.
    let started = status::format_time(t + jiff::SignedDuration::from_secs(5));
    live[0] = with_operation(
        app("dev-1", json!({"env": "dev"}), "Healthy", "Synced", "r1"),
        "Succeeded",
        &started,
    );
    let r = step(&mut set, &mut live, &mut t);
    assert_eq!(status_of(&r)[0], ("dev-1".into(), "Progressing".into()));
    let r = step(&mut set, &mut live, &mut t);
    assert_eq!(status_of(&r)[0], ("dev-1".into(), "Healthy".into()));
    // Step 1 complete in the same round: step 2 opens, maxUpdate 1 lets one through.
    assert_eq!(
        status_of(&r),
        pairs(&[
            ("dev-1", "Healthy"),
            ("other", "Waiting"),
            ("prod-1", "Pending"),
            ("prod-2", "Waiting")
        ])
    );
    assert_eq!(
        r.conditions[1].message,
        "ApplicationSet is performing rollout of step 2"
    );

    // prod-1 syncs and becomes healthy; then prod-2 gets its turn.
    let started = status::format_time(t + jiff::SignedDuration::from_secs(5));
    live[1] = with_operation(
        app("prod-1", json!({"env": "prod"}), "Healthy", "Synced", "r1"),
        "Succeeded",
        &started,
    );
    step(&mut set, &mut live, &mut t);
    let r = step(&mut set, &mut live, &mut t);
    assert_eq!(
        status_of(&r),
        pairs(&[
            ("dev-1", "Healthy"),
            ("other", "Waiting"),
            ("prod-1", "Healthy"),
            ("prod-2", "Pending")
        ])
    );
    let started = status::format_time(t + jiff::SignedDuration::from_secs(5));
    live[2] = with_operation(
        app("prod-2", json!({"env": "prod"}), "Healthy", "Synced", "r1"),
        "Succeeded",
        &started,
    );
    step(&mut set, &mut live, &mut t);
    let r = step(&mut set, &mut live, &mut t);
    assert_eq!(r.conditions[1].status, "False");
    assert_eq!(r.conditions[1].reason, condition::reason::ROLLOUT_COMPLETE);
    assert_eq!(
        r.conditions[1].message,
        "ApplicationSet Rollout has completed"
    );
    // "other" is in no step: it waits for a manual sync, and does not hold the rollout.
    assert_eq!(status_of(&r)[1], ("other".into(), "Waiting".into()));
}

#[test]
fn after_a_change_the_rollout_waits_for_fresh_comparisons() {
    let set = rolling_set(
        env_steps(),
        json!([
            {"application": "dev-1", "status": "Waiting", "step": "1", "targetRevisions": ["r2"],
             "message": "Application has pending changes, setting status to Waiting", "lastTransitionTime": ago(10)},
            st("prod-1", "Healthy", "2", &["r1"], &ago(600))
        ]),
    );
    let mut live = vec![
        app("dev-1", json!({"env": "dev"}), "Healthy", "OutOfSync", "r2"),
        app("prod-1", json!({"env": "prod"}), "Healthy", "Synced", "r1"),
    ];
    // Compared before the change was seen, within the grace period: just wait.
    for a in &mut live {
        a.status.as_mut().unwrap().reconciled_at = Some(ago(20));
    }
    let r = rollout(&set, &live, now());
    assert!(r.waiting_for_refresh);
    assert!(r.refresh.is_empty() && r.to_sync.is_empty() && r.conditions.is_empty());
    assert_eq!(r.requeue_after, Some(Duration::from_secs(20)));
    assert_eq!(
        requeue_after(&set, &enabled(), now()),
        Some(Duration::from_secs(20))
    );
    // After the grace period: ask for a refresh of those compared before the change.
    let later = now() + jiff::SignedDuration::from_secs(40);
    live[1].metadata.annotations = Some(
        [(
            plumb_model::annotations::REFRESH.to_string(),
            "normal".to_string(),
        )]
        .into(),
    );
    let r = rollout(&set, &live, later);
    assert!(r.waiting_for_refresh);
    assert_eq!(
        r.refresh,
        vec!["dev-1"],
        "prod-1 already has a refresh request"
    );
    // Once both are compared again (and the grace period is over: Argo waits it out even
    // then), the rollout goes on.
    for a in &mut live {
        a.status.as_mut().unwrap().reconciled_at = Some(ago(5));
    }
    assert!(rollout(&set, &live, now()).waiting_for_refresh);
    let r = rollout(&set, &live, later);
    assert!(!r.waiting_for_refresh);
    assert_eq!(r.application_status[0].status, "Pending");
}

#[test]
fn invalid_configuration_is_reported_while_the_rollout_goes_on() {
    let set = rolling_set(
        json!([
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["dev"]}]},
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["staging"]}]}
        ]),
        json!([]),
    );
    let live = [app(
        "dev-1",
        json!({"env": "dev"}),
        "Missing",
        "OutOfSync",
        "r1",
    )];
    let r = rollout(&set, &live, now());
    assert_eq!(r.conditions[0].r#type, condition::INVALID_ROLLOUT_CONFIG);
    assert_eq!(r.conditions[0].status, "True");
    assert_eq!(r.conditions[0].reason, "ApplicationSetInvalidRolloutConfig");
    assert_eq!(
        r.conditions[0].message,
        "Steps [2] have no applications matching their criteria"
    );
    assert_eq!(r.application_status[0].status, "Pending");
}

#[test]
fn spec_changes_compare_with_automated_sync_switched_off() {
    let mut live = app("a", json!({}), "Healthy", "Synced", "r");
    live.spec.sync_policy =
        serde_json::from_value(json!({"automated": {"enabled": false}})).unwrap();
    let mut desired = live.clone();
    desired.spec.sync_policy = serde_json::from_value(json!({"automated": {}})).unwrap();
    let eq = |l: &Application, d: &Application| Ok::<_, ()>(l.spec == d.spec);
    assert_eq!(
        spec_changes(&[live.clone()], &[desired.clone()], eq),
        BTreeMap::from([("a".into(), false)])
    );
    desired.spec.project = "other".into();
    assert_eq!(
        spec_changes(&[live.clone()], &[desired.clone()], eq),
        BTreeMap::from([("a".into(), true)])
    );
    let fails = |_: &Application, _: &Application| Err::<bool, _>("bad jsonPointer");
    assert!(spec_changes(&[live], &[desired], fails).is_empty());
}

// ---- deletion order --------------------------------------------------------------------------

#[test]
fn reverse_deletion_goes_last_step_first_one_at_a_time() {
    let mut set = rolling_set(env_steps(), json!([]));
    set.spec.strategy.as_mut().unwrap().deletion_order = Some("reverse".into());
    assert!(deletion_order_reversed(&set));
    assert!(needs_finalizer(&set, &enabled()));
    assert!(!needs_finalizer(&set, &Settings::default()));
    let mut live = vec![
        app("dev-1", json!({"env": "dev"}), "Healthy", "Synced", "r"),
        app("prod-2", json!({"env": "prod"}), "Healthy", "Synced", "r"),
        app("prod-1", json!({"env": "prod"}), "Healthy", "Synced", "r"),
        app("other", json!({}), "Healthy", "Synced", "r"),
    ];
    assert_eq!(
        reverse_deletion_next(&set, &live),
        ReverseDeletion::Delete("prod-1".into())
    );
    live[2]
        .metadata
        .other
        .insert("deletionTimestamp".into(), json!("2026-12-07T14:00:00Z"));
    assert_eq!(
        reverse_deletion_next(&set, &live),
        ReverseDeletion::Wait("prod-1".into())
    );
    live.remove(2);
    assert_eq!(
        reverse_deletion_next(&set, &live),
        ReverseDeletion::Delete("prod-2".into())
    );
    live.remove(1);
    assert_eq!(
        reverse_deletion_next(&set, &live),
        ReverseDeletion::Delete("dev-1".into())
    );
    live.remove(0);
    assert_eq!(
        reverse_deletion_next(&set, &live),
        ReverseDeletion::Done,
        "other goes with the set"
    );
}

#[test]
fn deletion_order_needs_a_rolling_sync_with_steps() {
    let mut set = rolling_set(json!([]), json!([]));
    set.spec.strategy.as_mut().unwrap().deletion_order = Some("Reverse".into());
    assert!(!deletion_order_reversed(&set));
    let mut set = rolling_set(env_steps(), json!([]));
    set.spec.strategy.as_mut().unwrap().r#type = Some("AllAtOnce".into());
    set.spec.strategy.as_mut().unwrap().deletion_order = Some("Reverse".into());
    assert!(!deletion_order_reversed(&set));
}

#[test]
fn settings_from_the_params_config_map() {
    let p = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(Settings::from_params(&p(&[])), Settings::default());
    let s = Settings::from_params(&p(&[
        ("applicationsetcontroller.enable.progressive.syncs", "true"),
        ("applicationsetcontroller.refresh.grace.period.seconds", "0"),
    ]));
    assert_eq!(
        s,
        Settings {
            enabled: true,
            refresh_grace_period: Duration::ZERO
        }
    );
    assert!(
        !Settings::from_params(&p(&[(
            "applicationsetcontroller.enable.progressive.syncs",
            "yes"
        )]))
        .enabled
    );
}
