//! The two call points of one reconcile that progressive syncs and the deletion brake
//! (helper modules `crate::progressive` and `crate::brake`, pure functions) take over. Until
//! they are wired, the bodies here keep Argo's behaviour, plus the one rule that must hold
//! without them: nothing is deleted when generation failed.

use serde_json::Value;

use plumb_model::application::Application;
use plumb_model::applicationset::{ApplicationSet, ApplicationSetApplicationStatus};

use super::conditions::Cond;

/// What the brake is asked before anything is deleted.
#[derive(Debug)]
pub struct DeletionInput<'a> {
    /// The set (its annotations carry a confirmation, `plumb.dev/confirm-deletion`).
    pub set: &'a ApplicationSet,
    /// Owned Applications no longer generated, sorted by name.
    pub candidates: Vec<String>,
    /// Whether generation failed this reconcile (then nothing may be deleted).
    pub generation_failed: bool,
    /// Owned Applications before this reconcile.
    pub previous_count: usize,
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

/// Call point 1: before deleting. Without the brake every candidate goes, except on a
/// generation failure, when all are held.
pub fn decide_deletions(input: &DeletionInput<'_>) -> DeletionDecision {
    if input.generation_failed {
        return DeletionDecision {
            held: input.candidates.clone(),
            ..DeletionDecision::default()
        };
    }
    DeletionDecision {
        delete_now: input.candidates.clone(),
        ..DeletionDecision::default()
    }
}

/// What progressive syncs are given, before create/update (Argo performs its progressive
/// sync step there too: it decides which generated Applications may sync this round).
#[derive(Debug)]
pub struct ProgressiveInput<'a> {
    /// The set.
    pub set: &'a ApplicationSet,
    /// Whether `applicationsetcontroller.enable.progressive.syncs` is on.
    pub enabled: bool,
    /// The owned Applications as they are in the cluster (JSON, with status).
    pub current: &'a [Value],
    /// The valid generated Applications, sorted by name.
    pub generated: Vec<Application>,
}

/// What progressive syncs decided.
#[derive(Debug)]
pub struct ProgressiveOutcome {
    /// The Applications to create/update (e.g. automated sync withheld from later steps).
    pub generated: Vec<Application>,
    /// `status.applicationStatus` to write; `None` leaves it as it is.
    pub application_status: Option<Vec<ApplicationSetApplicationStatus>>,
    /// Conditions to record (`RolloutProgressing`, `InvalidRolloutConfig`).
    pub conditions: Vec<Cond>,
}

/// Call point 2: progressive syncs. Without them the Applications go as generated and a
/// stale `applicationStatus` is cleared, as Argo does when progressive syncs are off or the
/// set does not use `RollingSync`.
pub fn progressive(input: ProgressiveInput<'_>) -> ProgressiveOutcome {
    let stale = input
        .set
        .status
        .as_ref()
        .and_then(|s| s.application_status.as_ref())
        .is_some_and(|s| !s.is_empty());
    ProgressiveOutcome {
        generated: input.generated,
        application_status: stale.then(Vec::new),
        conditions: Vec::new(),
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
            generation_failed: true,
            previous_count: 2,
        });
        assert!(d.delete_now.is_empty());
        assert_eq!(d.held, vec!["a", "b"]);
    }
}
