//! Progressive syncs: `strategy.type: RollingSync` and `deletionOrder: Reverse`, as Argo CD's
//! `applicationset/progressivesync` does them (own code: the step and status rules are Argo's,
//! with its messages, so that `status.applicationStatus` reads the same).
//!
//! Everything here is pure: the controller passes the set, the live and generated Applications
//! and the time, and writes what comes back. One reconcile:
//! 1. [`plan`] moves `status.applicationStatus` on from what the Applications report, decides
//!    which steps are open and which Waiting Applications become Pending (within `maxUpdate`),
//!    and returns the `InvalidRolloutConfig` and `RolloutProgressing` conditions;
//! 2. [`Rollout::prepare`] switches automated sync off on every generated Application and sets
//!    the sync operation on the Pending ones the rollout has reached; the controller then writes
//!    them as usual (copying `operation` onto the live Application when it is set).
//!
//! When the set is deleted with `deletionOrder: Reverse`, [`reverse_deletion_next`] names the
//! next Application to delete, last step first, one at a time.

mod max_update;
mod reconciled;
mod status;
mod steps;
mod sync;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::Timestamp;
use plumb_model::application::Application;
use plumb_model::applicationset::{
    ApplicationSet, ApplicationSetApplicationStatus, ApplicationSetCondition, condition,
};

pub use status::phase;
pub use steps::{InvalidMaxUpdate, StepMap, ValidationIssues};
pub use sync::{INITIATOR, REASON, disable_automated_sync, sync_operation};

/// `spec.strategy.type` of a rolling sync.
pub const ROLLING_SYNC: &str = "RollingSync";
/// `spec.strategy.deletionOrder` that deletes the last step first.
pub const REVERSE: &str = "Reverse";
/// How long to wait before looking again at a reverse deletion in progress (Argo's 10 s).
pub const REVERSE_DELETION_REQUEUE: Duration = Duration::from_secs(10);

/// The controller's progressive sync settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `applicationsetcontroller.enable.progressive.syncs` (Argo's default: off, and then a
    /// `RollingSync` strategy is ignored and `applicationStatus` cleared).
    pub enabled: bool,
    /// How long after a change the rollout waits before asking Applications to refresh
    /// (Argo's `--refresh-grace-period-seconds`, default 30 s).
    pub refresh_grace_period: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            enabled: false,
            refresh_grace_period: Duration::from_secs(30),
        }
    }
}

impl Settings {
    /// From `argocd-cmd-params-cm` data: `applicationsetcontroller.enable.progressive.syncs`
    /// (`"true"` turns it on, as Go's ParseBool reads it) and Plumb's
    /// `applicationsetcontroller.refresh.grace.period.seconds` (Argo has only the flag/env).
    pub fn from_params(data: &BTreeMap<String, String>) -> Self {
        let enabled = data
            .get("applicationsetcontroller.enable.progressive.syncs")
            .is_some_and(|v| matches!(v.trim(), "true" | "True" | "TRUE" | "t" | "T" | "1"));
        let refresh_grace_period = data
            .get("applicationsetcontroller.refresh.grace.period.seconds")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(Self::default().refresh_grace_period, Duration::from_secs);
        Self {
            enabled,
            refresh_grace_period,
        }
    }
}

/// Whether the set asks for a rolling sync (type `RollingSync` with a `rollingSync` block).
pub fn is_rolling_sync(set: &ApplicationSet) -> bool {
    set.spec
        .strategy
        .as_ref()
        .is_some_and(|s| s.r#type.as_deref() == Some(ROLLING_SYNC) && s.rolling_sync.is_some())
}

/// Whether the set asks for a rolling sync with at least one step.
pub fn rolling_sync_enabled(set: &ApplicationSet) -> bool {
    is_rolling_sync(set) && !steps_of(set).is_empty()
}

/// Whether the set's Applications are deleted last step first (case-insensitive `Reverse`).
pub fn deletion_order_reversed(set: &ApplicationSet) -> bool {
    rolling_sync_enabled(set)
        && set
            .spec
            .strategy
            .as_ref()
            .and_then(|s| s.deletion_order.as_deref())
            .is_some_and(|o| o.eq_ignore_ascii_case(REVERSE))
}

/// Whether the set must carry `resources-finalizer.argocd.argoproj.io` so that its deletion
/// waits for the reverse deletion (Argo adds it only with progressive syncs enabled).
pub fn needs_finalizer(set: &ApplicationSet, settings: &Settings) -> bool {
    settings.enabled && deletion_order_reversed(set)
}

fn steps_of(set: &ApplicationSet) -> &[plumb_model::applicationset::ApplicationSetRolloutStep] {
    set.spec
        .strategy
        .as_ref()
        .and_then(|s| s.rolling_sync.as_ref())
        .and_then(|r| r.steps.as_deref())
        .unwrap_or_default()
}

/// What one reconcile does about progressive syncs.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// No rolling sync (progressive syncs off, or another strategy): generated Applications are
    /// written as they are.
    Off {
        /// Write an empty `status.applicationStatus` (it has entries from an earlier rollout).
        clear_application_status: bool,
        /// Remove the `RolloutProgressing` and `InvalidRolloutConfig` conditions (Argo does so
        /// only when the set is not a RollingSync one, whether or not progressive syncs are on).
        remove_conditions: bool,
    },
    /// A `RollingSync` without steps: set this `ErrorOccurred` condition and stop the reconcile
    /// there (nothing created, updated or deleted), requeueing as after a validation error.
    NoSteps(ApplicationSetCondition),
    /// A rolling sync in progress (or complete).
    Rollout(Rollout),
}

/// A rolling sync's decisions for this reconcile.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    /// The new `status.applicationStatus`, sorted by Application name.
    pub application_status: Vec<ApplicationSetApplicationStatus>,
    /// Applications of the open steps (the first incomplete step and those before it).
    pub to_sync: BTreeSet<String>,
    /// Applications to annotate with `argocd.argoproj.io/refresh: normal` so they are compared
    /// again before the rollout judges them.
    pub refresh: Vec<String>,
    /// True while the rollout waits for Applications to be compared again: nothing is synced
    /// and the rollout conditions are left as they are.
    pub waiting_for_refresh: bool,
    /// `InvalidRolloutConfig` and `RolloutProgressing`, in that order (empty while waiting).
    pub conditions: Vec<ApplicationSetCondition>,
    /// Reconcile again after this long: the rest of the refresh grace period after the latest
    /// change (at least a second), as Argo's `getMinRequeueAfter`.
    pub requeue_after: Option<Duration>,
}

/// Plans the progressive sync of one reconcile. `live`: the set's Applications in the cluster,
/// with their status; `desired`: the generated ones; `spec_changed`: per live Application,
/// whether the generated spec differs from the live one (see [`spec_changes`]).
pub fn plan(
    set: &ApplicationSet,
    live: &[Application],
    desired: &[Application],
    spec_changed: &BTreeMap<String, bool>,
    settings: &Settings,
    now: Timestamp,
) -> Plan {
    let previous = set
        .status
        .as_ref()
        .and_then(|s| s.application_status.as_deref())
        .unwrap_or_default();
    if !settings.enabled || !is_rolling_sync(set) {
        return Plan::Off {
            clear_application_status: !previous.is_empty(),
            remove_conditions: !is_rolling_sync(set),
        };
    }
    if steps_of(set).is_empty() {
        return Plan::NoSteps(condition_of(
            condition::ERROR_OCCURRED,
            condition::TRUE,
            condition::reason::ROLLOUT_ERROR,
            "No steps defined for rollout",
        ));
    }
    let rollout_steps = steps_of(set);
    let (step_map, mut issues) = steps::build(rollout_steps, desired);
    let previous_waiting = reconciled::latest_waiting(previous);
    let mut statuses = status::update(previous, live, spec_changed, &step_map, now);
    let since = previous_waiting.or_else(|| reconciled::latest_waiting(&statuses));
    let check = reconciled::check(live, since, settings.refresh_grace_period, now);
    if !check.ready {
        let requeue_after = grace_requeue(&statuses, settings, now);
        return Plan::Rollout(Rollout {
            application_status: statuses,
            to_sync: BTreeSet::new(),
            refresh: check.refresh,
            waiting_for_refresh: true,
            conditions: Vec::new(),
            requeue_after,
        });
    }
    let to_sync = sync::open_steps(&step_map, live, &statuses);
    issues.invalid_max_updates =
        status::progress(&mut statuses, rollout_steps, &step_map, &to_sync, now);
    let conditions = vec![
        invalid_config_condition(&issues),
        progressing_condition(rollout_steps.len(), &statuses),
    ];
    let requeue_after = grace_requeue(&statuses, settings, now);
    Plan::Rollout(Rollout {
        application_status: statuses,
        to_sync,
        refresh: Vec::new(),
        waiting_for_refresh: false,
        conditions,
        requeue_after,
    })
}

fn grace_requeue(
    statuses: &[ApplicationSetApplicationStatus],
    settings: &Settings,
    now: Timestamp,
) -> Option<Duration> {
    if settings.refresh_grace_period.is_zero() {
        return None;
    }
    let since = reconciled::latest_waiting(statuses)?;
    Some(reconciled::grace_remaining(
        since,
        settings.refresh_grace_period,
        now,
    ))
}

impl Rollout {
    /// Switches automated sync off on every generated Application and sets the sync operation
    /// on the Pending ones of the open steps. Returns the names given an operation.
    pub fn prepare(&self, desired: &mut [Application]) -> Vec<String> {
        sync::prepare(desired, &self.to_sync, &self.application_status)
    }
}

/// Per live Application that is generated too: whether its spec differs from the generated one
/// once automated sync is switched off on the latter. `equivalent(live, desired)` is the
/// controller's own comparison (normalised, `ignoreApplicationDifferences` applied); when it
/// fails the Application is left out, so its status stays as it is (Argo does the same).
pub fn spec_changes<E>(
    live: &[Application],
    desired: &[Application],
    mut equivalent: impl FnMut(&Application, &Application) -> Result<bool, E>,
) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for app in live {
        let Some(want) = desired.iter().find(|d| d.name() == app.name()) else {
            continue;
        };
        let mut want = want.clone();
        disable_automated_sync(&mut want);
        if let Ok(same) = equivalent(app, &want) {
            out.insert(app.name().to_string(), !same);
        }
    }
    out
}

/// When to reconcile again for the refresh grace period of a rollout waiting on a change.
pub fn requeue_after(
    set: &ApplicationSet,
    settings: &Settings,
    now: Timestamp,
) -> Option<Duration> {
    if !settings.enabled || settings.refresh_grace_period.is_zero() || !rolling_sync_enabled(set) {
        return None;
    }
    let statuses = set.status.as_ref()?.application_status.as_deref()?;
    let since = reconciled::latest_waiting(statuses)?;
    Some(reconciled::grace_remaining(
        since,
        settings.refresh_grace_period,
        now,
    ))
}

fn condition_of(kind: &str, status: &str, reason: &str, message: &str) -> ApplicationSetCondition {
    ApplicationSetCondition {
        r#type: kind.to_string(),
        message: message.to_string(),
        last_transition_time: None,
        status: status.to_string(),
        reason: reason.to_string(),
    }
}

fn invalid_config_condition(issues: &ValidationIssues) -> ApplicationSetCondition {
    if issues.has_issues() {
        condition_of(
            condition::INVALID_ROLLOUT_CONFIG,
            condition::TRUE,
            condition::reason::INVALID_ROLLOUT_CONFIG,
            &issues.message(),
        )
    } else {
        condition_of(
            condition::INVALID_ROLLOUT_CONFIG,
            condition::FALSE,
            condition::reason::VALID_ROLLOUT_CONFIG,
            "Rolling Sync Configured correctly",
        )
    }
}

/// `RolloutProgressing`: True while some step (with Applications) is not all Healthy.
fn progressing_condition(
    step_count: usize,
    statuses: &[ApplicationSetApplicationStatus],
) -> ApplicationSetCondition {
    let incomplete = (1..=step_count).map(|s| s.to_string()).find(|step| {
        let mut of_step = statuses.iter().filter(|s| &s.step == step).peekable();
        of_step.peek().is_some() && of_step.any(|s| s.status != phase::HEALTHY)
    });
    match incomplete {
        Some(step) => condition_of(
            condition::ROLLOUT_PROGRESSING,
            condition::TRUE,
            condition::reason::APPLICATION_SET_MODIFIED,
            &format!("ApplicationSet is performing rollout of step {step}"),
        ),
        None => condition_of(
            condition::ROLLOUT_PROGRESSING,
            condition::FALSE,
            condition::reason::ROLLOUT_COMPLETE,
            "ApplicationSet Rollout has completed",
        ),
    }
}

/// The next step of a reverse deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReverseDeletion {
    /// Delete this Application, then look again after [`REVERSE_DELETION_REQUEUE`].
    Delete(String),
    /// This Application is being deleted: look again after [`REVERSE_DELETION_REQUEUE`].
    Wait(String),
    /// Every Application a step selects is gone: the set's finalizer may be removed (those no
    /// step selects go with the set, through their ownerReference, as in Argo).
    Done,
}

/// The next Application to delete when the set is deleted with `deletionOrder: Reverse`: the
/// last step's Applications first, one at a time, each waited for until it is gone.
pub fn reverse_deletion_next(set: &ApplicationSet, live: &[Application]) -> ReverseDeletion {
    let (step_map, _) = steps::build(steps_of(set), live);
    let mut order: Vec<(usize, &String)> = step_map.step_of.iter().map(|(n, s)| (*s, n)).collect();
    // Last step first; by name within a step so that the order is stable.
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    for (_, name) in order {
        let Some(app) = live.iter().find(|a| a.name() == name) else {
            continue;
        };
        if app.metadata.other.contains_key("deletionTimestamp") {
            return ReverseDeletion::Wait(name.clone());
        }
        return ReverseDeletion::Delete(name.clone());
    }
    ReverseDeletion::Done
}

#[cfg(test)]
mod tests;
