//! The two call points of one reconcile that progressive syncs ([`crate::progressive`]) and
//! the deletion brake ([`crate::brake`]) take over: both are pure, and these adapters turn the
//! controller's view (owned Applications as JSON, its conditions) into their inputs and back.

use std::time::Duration;

use serde_json::Value;

use plumb_model::application::Application;
use plumb_model::applicationset::{
    ApplicationSet, ApplicationSetApplicationStatus, ApplicationSetCondition, condition,
};

use super::conditions::Cond;
use super::update::{self, Rules};
use crate::{brake, progressive};

/// What the brake is asked before anything is deleted.
#[derive(Debug)]
pub struct DeletionInput<'a> {
    /// The set (its annotations carry a confirmation, `plumb.dev/confirm-deletion`).
    pub set: &'a ApplicationSet,
    /// Owned Applications no longer generated, sorted by name.
    pub candidates: Vec<String>,
    /// Generator and template errors of this reconcile (any: nothing is deleted).
    pub generator_errors: Vec<String>,
    /// Owned Applications before this reconcile.
    pub previous_count: usize,
    /// The brake's thresholds.
    pub brake: &'a brake::Settings,
}

/// What the brake decided.
#[derive(Debug, Default, PartialEq)]
pub struct DeletionDecision {
    /// Deleted now.
    pub delete_now: Vec<String>,
    /// Kept until confirmed (named in the `DeletionHeld` condition).
    pub held: Vec<String>,
    /// Condition to record (`DeletionHeld` true or false); `None` leaves it as it is.
    pub condition: Option<Cond>,
    /// Whether the confirmation annotation was consumed (the controller removes it).
    pub clear_confirmation: bool,
}

/// Call point 1: before deleting, the brake decides what goes.
pub fn decide_deletions(input: &DeletionInput<'_>) -> DeletionDecision {
    let decision = brake::decide(brake::Input {
        set: input.set,
        current: input.previous_count,
        candidates: &input.candidates,
        generator_errors: &input.generator_errors,
        settings: input.brake,
    });
    DeletionDecision {
        delete_now: decision.delete,
        held: decision.held,
        condition: decision.condition.as_ref().map(to_cond),
        clear_confirmation: decision.consume_confirmation.is_some(),
    }
}

/// A condition of the pure modules as the controller records it (their types and statuses are
/// all known constants).
fn to_cond(c: &ApplicationSetCondition) -> Cond {
    let kind = [
        condition::DELETION_HELD,
        condition::ROLLOUT_PROGRESSING,
        condition::INVALID_ROLLOUT_CONFIG,
        condition::ERROR_OCCURRED,
    ]
    .into_iter()
    .find(|k| *k == c.r#type)
    .unwrap_or(condition::ERROR_OCCURRED);
    let status = if c.status == condition::TRUE {
        condition::TRUE
    } else {
        condition::FALSE
    };
    Cond {
        kind,
        status,
        reason: c.reason.clone(),
        message: c.message.clone(),
    }
}

/// What progressive syncs are given, before create/update (Argo performs its progressive
/// sync step there too: it decides which generated Applications may sync this round).
pub struct ProgressiveInput<'a> {
    /// The set.
    pub set: &'a ApplicationSet,
    /// Progressive sync settings (`applicationsetcontroller.enable.progressive.syncs`, grace).
    pub settings: progressive::Settings,
    /// The owned Applications as they are in the cluster (JSON, with status).
    pub current: &'a [Value],
    /// The valid generated Applications, sorted by name.
    pub generated: Vec<Application>,
    /// The set's update rules (the spec comparison honours `ignoreApplicationDifferences`).
    pub rules: &'a Rules,
    /// Now.
    pub now: jiff::Timestamp,
}

/// What progressive syncs decided.
#[derive(Debug, Default)]
pub struct ProgressiveOutcome {
    /// The Applications to create/update: automated sync off, sync operations on those the
    /// rollout lets go.
    pub generated: Vec<Application>,
    /// `status.applicationStatus` to write; `None` leaves it as it is.
    pub application_status: Option<Vec<ApplicationSetApplicationStatus>>,
    /// Conditions to record (`RolloutProgressing`, `InvalidRolloutConfig`).
    pub conditions: Vec<Cond>,
    /// Applications to annotate with `argocd.argoproj.io/refresh: normal`.
    pub refresh: Vec<String>,
    /// Stop the reconcile with this error condition (a `RollingSync` without steps).
    pub stop: Option<Cond>,
    /// Applications given a sync operation this round.
    pub synced: Vec<String>,
    /// Reconcile again after this long (the refresh grace period of a waiting rollout).
    pub requeue_after: Option<Duration>,
}

/// Call point 2: progressive syncs.
pub fn progressive(input: ProgressiveInput<'_>) -> ProgressiveOutcome {
    let live: Vec<Application> = input
        .current
        .iter()
        .filter_map(|v| match serde_json::from_value::<Application>(v.clone()) {
            Ok(app) => Some(app),
            Err(e) => {
                tracing::warn!(set = %input.set.name(), "an owned Application cannot be read: {e}");
                None
            }
        })
        .collect();
    let spec_changed = progressive::spec_changes(&live, &input.generated, |_, desired| {
        let name = desired.metadata.name.as_deref().unwrap_or_default();
        let live_value = input
            .current
            .iter()
            .find(|v| v.pointer("/metadata/name").and_then(Value::as_str) == Some(name));
        update::plan(input.set, desired, live_value, input.rules)
            .map(|p| !matches!(p, update::Plan::Patch(patch) if patch.get("spec").is_some()))
    });
    let plan = progressive::plan(
        input.set,
        &live,
        &input.generated,
        &spec_changed,
        &input.settings,
        input.now,
    );
    let mut generated = input.generated;
    match plan {
        progressive::Plan::Off {
            clear_application_status,
            ..
        } => ProgressiveOutcome {
            generated,
            application_status: clear_application_status.then(Vec::new),
            ..ProgressiveOutcome::default()
        },
        progressive::Plan::NoSteps(c) => ProgressiveOutcome {
            generated,
            stop: Some(to_cond(&c)),
            ..ProgressiveOutcome::default()
        },
        progressive::Plan::Rollout(rollout) => {
            let synced = rollout.prepare(&mut generated);
            ProgressiveOutcome {
                generated,
                conditions: rollout.conditions.iter().map(to_cond).collect(),
                refresh: rollout.refresh.clone(),
                synced,
                requeue_after: rollout.requeue_after,
                application_status: Some(rollout.application_status),
                stop: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_failure_holds_every_deletion() {
        let set: ApplicationSet = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "s", "namespace": "argocd"},
            "spec": {"generators": [], "template": {"metadata": {}, "spec": {}}}
        }))
        .unwrap();
        let d = decide_deletions(&DeletionInput {
            set: &set,
            candidates: vec!["a".into(), "b".into()],
            generator_errors: vec!["generator 1 (git) failed: x".into()],
            previous_count: 9,
            brake: &brake::Settings::default(),
        });
        assert!(d.delete_now.is_empty());
        assert_eq!(d.held, vec!["a", "b"]);
        let c = d.condition.unwrap();
        assert_eq!(
            (c.kind, c.status),
            (condition::DELETION_HELD, condition::TRUE)
        );
        assert!(
            c.message
                .starts_with("generator 1 (git) failed: x; would delete 2 of 9")
        );
    }
}
