use std::collections::BTreeMap;

use plumb_model::applicationset::{ApplicationSet, condition};
use serde_json::json;

use super::*;

fn set(annotations: &[(&str, &str)]) -> ApplicationSet {
    let annotations: BTreeMap<&str, &str> = annotations.iter().copied().collect();
    serde_json::from_value(json!({
        "metadata": {"name": "fleet", "namespace": "argocd", "annotations": annotations},
        "spec": {"generators": [], "template": {}}
    }))
    .unwrap()
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("app-{i}")).collect()
}

fn run(
    set: &ApplicationSet,
    current: usize,
    candidates: &[String],
    errors: &[String],
    settings: &Settings,
) -> Decision {
    decide(Input {
        set,
        current,
        candidates,
        generator_errors: errors,
        settings,
    })
}

#[test]
fn default_threshold_is_more_than_half_and_more_than_two() {
    let s = set(&[]);
    let d = Settings::default();
    // (would delete, of current, held?)
    let cases = [
        (0, 8, false),
        (1, 1, false),
        (2, 2, false), // all of them, but not more than 2
        (2, 3, false),
        (3, 3, true), // 3 > 1.5 and 3 > 2
        (3, 4, true),
        (2, 4, false), // exactly half is not more than half
        (4, 8, false),
        (5, 8, true),
        (5, 10, false),
        (6, 10, true),
        (3, 6, false),
        (4, 6, true),
        (5, 6, true),
    ];
    for (count, current, held) in cases {
        let c = names(count);
        let out = run(&s, current, &c, &[], &d);
        assert_eq!(out.hold.is_some(), held, "{count} of {current}");
        if held {
            assert!(out.delete.is_empty());
            assert_eq!(out.held, c);
            assert_eq!(out.hold, Some(Hold::TooMany));
        } else {
            assert_eq!(out.delete, c);
            assert!(out.condition.is_none(), "nothing held: the condition goes");
        }
    }
}

#[test]
fn the_condition_names_what_would_be_deleted_and_how_to_confirm() {
    let out = run(&set(&[]), 8, &names(5), &[], &Settings::default());
    let c = out.condition.unwrap();
    assert_eq!(c.r#type, condition::DELETION_HELD);
    assert_eq!(c.status, condition::TRUE);
    assert_eq!(c.reason, condition::reason::DELETION_HELD);
    assert_eq!(
        c.message,
        "the deletion brake holds deletions of more than 50% and more than 2 of an ApplicationSet's Applications; \
         would delete 5 of 8 Applications: app-0, app-1, app-2, app-3, app-4; \
         confirm with `plumb appset confirm-deletion fleet` or the annotation plumb.dev/confirm-deletion"
    );
}

#[test]
fn a_generator_error_holds_any_deletion() {
    let errors = vec!["generator 2 (git) failed: repository not found".to_string()];
    let out = run(&set(&[]), 8, &names(1), &errors, &Settings::default());
    assert!(out.delete.is_empty());
    assert_eq!(out.held, names(1));
    assert_eq!(out.hold, Some(Hold::GeneratorFailed));
    assert_eq!(
        out.condition.unwrap().message,
        "generator 2 (git) failed: repository not found; would delete 1 of 8 Applications: app-0; \
         nothing is deleted while a generator fails"
    );
    // Even with the share rule switched off for the set.
    let off = set(&[(BRAKE_ANNOTATION, "off")]);
    assert!(
        run(&off, 8, &names(1), &errors, &Settings::default())
            .delete
            .is_empty()
    );
}

#[test]
fn a_generator_error_with_nothing_to_delete_holds_nothing() {
    let errors = vec!["generator 1 (list) failed: x".to_string()];
    let out = run(&set(&[]), 8, &[], &errors, &Settings::default());
    assert_eq!(out, Decision::default());
}

#[test]
fn confirmation_by_name_lets_only_those_go_and_is_consumed() {
    let s = set(&[(CONFIRM_ANNOTATION, " app-1, app-3 ,not-a-candidate")]);
    let out = run(&s, 8, &names(5), &[], &Settings::default());
    assert_eq!(out.delete, vec!["app-1", "app-3"]);
    assert_eq!(out.held, vec!["app-0", "app-2", "app-4"]);
    assert!(
        out.condition
            .unwrap()
            .message
            .contains("would delete 3 of 8 Applications: app-0, app-2, app-4;")
    );
    assert_eq!(
        out.consume_confirmation.as_deref(),
        Some(" app-1, app-3 ,not-a-candidate")
    );
}

#[test]
fn confirmation_all_lets_everything_held_go() {
    let s = set(&[(CONFIRM_ANNOTATION, "all")]);
    let out = run(&s, 8, &names(5), &[], &Settings::default());
    assert_eq!(out.delete, names(5));
    assert!(out.held.is_empty());
    assert_eq!(out.hold, Some(Hold::TooMany));
    assert!(
        out.condition.is_none(),
        "the set never had the condition: nothing to record"
    );
    assert_eq!(out.consume_confirmation.as_deref(), Some("all"));
}

#[test]
fn while_a_generator_fails_no_confirmation_deletes_and_it_is_used_up() {
    let errors = vec!["generator 1 (scmProvider) failed: 500 Internal Server Error".to_string()];
    for value in ["all", "app-1", "app-0,app-1"] {
        let s = set(&[(CONFIRM_ANNOTATION, value)]);
        let out = run(&s, 8, &names(2), &errors, &Settings::default());
        assert!(out.delete.is_empty(), "{value}");
        assert_eq!(out.held, names(2));
        assert_eq!(out.consume_confirmation.as_deref(), Some(value));
        assert!(
            out.condition
                .unwrap()
                .message
                .ends_with("; nothing is deleted while a generator fails")
        );
    }
}

#[test]
fn a_stale_confirmation_is_consumed_even_when_nothing_is_held() {
    let s = set(&[(CONFIRM_ANNOTATION, "all")]);
    let out = run(&s, 8, &names(1), &[], &Settings::default());
    assert_eq!(out.delete, names(1));
    assert_eq!(out.consume_confirmation.as_deref(), Some("all"));
    let out = run(&s, 8, &[], &[], &Settings::default());
    assert_eq!(out.consume_confirmation.as_deref(), Some("all"));
}

#[test]
fn the_set_can_switch_the_share_rule_off_and_typos_fail_closed() {
    let off = set(&[(BRAKE_ANNOTATION, "off")]);
    assert_eq!(
        run(&off, 8, &names(8), &[], &Settings::default()).delete,
        names(8)
    );
    let on = set(&[(BRAKE_ANNOTATION, "on")]);
    assert!(
        run(&on, 8, &names(8), &[], &Settings::default())
            .delete
            .is_empty()
    );
    let typo = set(&[(BRAKE_ANNOTATION, "of")]);
    let out = run(&typo, 8, &names(1), &[], &Settings::default());
    assert!(
        out.delete.is_empty(),
        "an unreadable switch holds even one deletion"
    );
    assert!(out.condition.unwrap().message.starts_with(
        "annotation plumb.dev/deletion-brake is \"of\", not \"on\" or \"off\", so every deletion is held;"
    ));
}

#[test]
fn thresholds_come_from_the_params_config_map() {
    let params = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(Settings::from_params(&params(&[])), Settings::default());
    let s = Settings::from_params(&params(&[(SHARE_KEY, "25%"), (MIN_KEY, "0")]));
    assert_eq!((s.share_ppm, s.min, s.invalid.clone()), (250_000, 0, None));
    assert_eq!(s.share_percent(), "25%");
    // 1 of 3 is more than 25% and more than 0.
    assert!(run(&set(&[]), 3, &names(1), &[], &s).delete.is_empty());
    assert!(
        !run(&set(&[]), 4, &names(1), &[], &s).delete.is_empty(),
        "1 of 4 is exactly 25%"
    );

    let s = Settings::from_params(&params(&[(SHARE_KEY, "0.125"), (MIN_KEY, " 10 ")]));
    assert_eq!((s.share_ppm, s.min), (125_000, 10));
    assert_eq!(s.share_percent(), "12.5%");
    assert!(
        !run(&set(&[]), 20, &names(10), &[], &s).delete.is_empty(),
        "not more than 10"
    );
    assert!(run(&set(&[]), 20, &names(11), &[], &s).delete.is_empty());

    let full = Settings::from_params(&params(&[(SHARE_KEY, "1")]));
    assert_eq!(
        run(&set(&[]), 5, &names(5), &[], &full).delete,
        names(5),
        "100%: never by share"
    );
}

#[test]
fn unreadable_thresholds_hold_every_deletion() {
    for (key, value) in [
        (SHARE_KEY, "half"),
        (SHARE_KEY, "1.5"),
        (SHARE_KEY, "-0.1"),
        (SHARE_KEY, "1e-1"),
        (SHARE_KEY, "NaN"),
        (SHARE_KEY, "150%"),
        (SHARE_KEY, ""),
        (MIN_KEY, "-1"),
        (MIN_KEY, "two"),
    ] {
        let s = Settings::from_params(&[(key.to_string(), value.to_string())].into());
        let why = s
            .invalid
            .clone()
            .unwrap_or_else(|| panic!("{key}={value:?} must be refused"));
        assert!(why.contains(key), "{why}");
        let out = run(&set(&[]), 100, &names(1), &[], &s);
        assert!(out.delete.is_empty(), "{key}={value:?}");
        assert!(
            out.condition
                .unwrap()
                .message
                .contains("so every deletion is held")
        );
        // A human can still confirm.
        let confirmed = set(&[(CONFIRM_ANNOTATION, "app-0")]);
        assert_eq!(run(&confirmed, 100, &names(1), &[], &s).delete, names(1));
    }
}

#[test]
fn long_lists_are_cut_in_the_message() {
    let out = run(&set(&[]), 300, &names(250), &[], &Settings::default());
    assert_eq!(out.held.len(), 250);
    let message = out.condition.unwrap().message;
    assert!(message.contains("would delete 250 of 300 Applications: app-0, "));
    assert!(message.contains(" and 150 more; confirm with"), "{message}");
}

#[test]
fn the_condition_turns_false_once_nothing_is_held() {
    let mut s = set(&[]);
    let held = run(&s, 8, &names(5), &[], &Settings::default())
        .condition
        .unwrap();
    s.status = Some(plumb_model::applicationset::ApplicationSetStatus {
        conditions: Some(vec![held]),
        ..Default::default()
    });
    for candidates in [vec![], names(1)] {
        let c = run(&s, 8, &candidates, &[], &Settings::default())
            .condition
            .unwrap();
        assert_eq!(
            (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
            ("False", "NoDeletionHeld", "No deletions are held")
        );
    }
    let mut confirmed = s.clone();
    confirmed.metadata.annotations =
        Some([(CONFIRM_ANNOTATION.to_string(), "all".to_string())].into());
    let out = run(&confirmed, 8, &names(5), &[], &Settings::default());
    assert_eq!(out.delete.len(), 5);
    assert_eq!(out.condition.unwrap().status, "False");
}

#[test]
fn candidates_are_sorted_and_deduplicated() {
    let c = vec!["b".to_string(), "a".to_string(), "b".to_string()];
    let out = run(&set(&[]), 10, &c, &[], &Settings::default());
    assert_eq!(out.delete, vec!["a", "b"]);
}
