//! The per-Application state machine of a RollingSync (`status.applicationStatus`):
//! Waiting → Pending → Progressing → Healthy, with Argo CD's messages and transition times
//! (`UpdateApplicationSetApplicationStatus` and `UpdateApplicationSetApplicationStatusProgress`).

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use plumb_model::application::{Application, OperationPhase, SyncStatusCode};
use plumb_model::applicationset::{ApplicationSetApplicationStatus, ApplicationSetRolloutStep};

use super::max_update;
use super::steps::{InvalidMaxUpdate, StepMap};

/// `applicationStatus[].status` values.
pub mod phase {
    /// Changes are pending; the step has not reached the Application yet.
    pub const WAITING: &str = "Waiting";
    /// The controller asked for a sync and waits for it to start.
    pub const PENDING: &str = "Pending";
    /// A sync ran; waiting for Synced and Healthy.
    pub const PROGRESSING: &str = "Progressing";
    /// Synced and Healthy at the recorded revisions.
    pub const HEALTHY: &str = "Healthy";
}

pub(crate) const REVISION_AND_SPEC_CHANGED: &str =
    "Application has pending changes (revision and spec differ), setting status to Waiting";
pub(crate) const REVISION_CHANGED: &str =
    "Application has pending changes, setting status to Waiting";
pub(crate) const SPEC_CHANGED: &str =
    "Application has pending changes (spec differs), setting status to Waiting";
const NEW_APPLICATION: &str = "No Application status found, defaulting status to Waiting";
const PENDING_MESSAGE: &str = "Application moved to Pending status, watching for the Application resource to start Progressing";

/// Argo's metav1.Time: RFC 3339 in UTC, whole seconds.
pub(crate) fn format_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub(crate) fn parse_time(t: Option<&str>) -> Option<Timestamp> {
    t?.parse().ok()
}

/// `status.sync.revisions`, else `[status.sync.revision]`, else nothing (Argo's `GetRevisions`).
pub(crate) fn revisions(app: &Application) -> Vec<String> {
    let Some(sync) = app.status.as_ref().and_then(|s| s.sync.as_ref()) else {
        return Vec::new();
    };
    match (&sync.revisions, &sync.revision) {
        (Some(many), _) if !many.is_empty() => many.clone(),
        (_, Some(one)) if !one.is_empty() => vec![one.clone()],
        _ => Vec::new(),
    }
}

fn health(app: &Application) -> Option<&str> {
    app.status.as_ref()?.health.as_ref()?.status.as_deref()
}

fn synced(app: &Application) -> bool {
    app.status
        .as_ref()
        .and_then(|s| s.sync.as_ref())
        .is_some_and(|s| s.status == SyncStatusCode::Synced)
}

/// An `InvalidSpecError` or `UnknownError` condition: the Application cannot sync at all.
fn has_error(app: &Application) -> bool {
    app.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "InvalidSpecError" || c.type_ == "UnknownError")
}

/// How the live Application differs from what the set generates now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Changes {
    pub revisions: bool,
    pub spec: bool,
}

/// Step one of a reconcile: each live Application's status moved on from `previous` by what the
/// Application reports. `spec_changed[name]` says whether the generated spec differs from the
/// live one (absent: not generated, or the comparison failed). Sorted by name, as Argo writes it.
pub(crate) fn update(
    previous: &[ApplicationSetApplicationStatus],
    live: &[Application],
    spec_changed: &BTreeMap<String, bool>,
    steps: &StepMap,
    now: Timestamp,
) -> Vec<ApplicationSetApplicationStatus> {
    let mut out: Vec<_> = live
        .iter()
        .map(|app| {
            let current = previous.iter().find(|s| s.application == app.name());
            let changed = spec_changed.get(app.name()).copied().unwrap_or(false);
            update_one(current, app, changed, steps.step_label(app.name()), now)
        })
        .collect();
    out.sort_by(|a, b| a.application.cmp(&b.application));
    out
}

fn update_one(
    current: Option<&ApplicationSetApplicationStatus>,
    app: &Application,
    spec_changed: bool,
    step: String,
    now: Timestamp,
) -> ApplicationSetApplicationStatus {
    let now_s = format_time(now);
    let current = current
        .cloned()
        .unwrap_or_else(|| ApplicationSetApplicationStatus {
            application: app.name().to_string(),
            last_transition_time: Some(now_s.clone()),
            message: NEW_APPLICATION.to_string(),
            status: phase::WAITING.to_string(),
            step: step.clone(),
            target_revisions: revisions(app),
        });
    let mut next = current.clone();
    next.step = step;
    let live_revisions = revisions(app);
    let changes = Changes {
        revisions: current.target_revisions != live_revisions,
        spec: spec_changed,
    };
    if changes.revisions || changes.spec {
        let message = match (changes.revisions, changes.spec) {
            (true, true) => REVISION_AND_SPEC_CHANGED,
            (true, false) => REVISION_CHANGED,
            _ => SPEC_CHANGED,
        };
        transition(&mut next, phase::WAITING, message, &now_s);
    }
    let waiting = next.status == phase::WAITING;
    let moved = if waiting && synced(app) {
        // A Waiting Application that is already Synced needs no sync from the rollout.
        Some(if health(app) == Some("Healthy") {
            (
                phase::HEALTHY,
                "Application resource has synced, updating status to Healthy",
            )
        } else {
            (
                phase::PROGRESSING,
                "Application resource has synced, updating status to Progressing",
            )
        })
    } else if !waiting && current.status == phase::PENDING {
        pending_progress(&current, app).map(|m| (phase::PROGRESSING, m))
    } else if !waiting
        && current.status == phase::PROGRESSING
        && health(app) == Some("Healthy")
        && synced(app)
    {
        Some((
            phase::HEALTHY,
            "Application resource became Healthy, updating status from Progressing to Healthy",
        ))
    } else {
        None
    };
    if let Some((status, message)) = moved {
        transition(&mut next, status, message, &now_s);
    }
    if changes.revisions || changes.spec {
        next.target_revisions = live_revisions;
    }
    next
}

fn transition(s: &mut ApplicationSetApplicationStatus, status: &str, message: &str, now: &str) {
    s.status = status.to_string();
    s.message = message.to_string();
    s.last_transition_time = Some(now.to_string());
}

/// Whether a Pending Application has started Progressing, and Argo's message for it: a sync
/// started after the Pending transition (seen by a reconcile after it), or an error that stops
/// it from ever syncing.
fn pending_progress(
    current: &ApplicationSetApplicationStatus,
    app: &Application,
) -> Option<&'static str> {
    let status = app.status.as_ref();
    let since = parse_time(current.last_transition_time.as_deref());
    let reconciled = parse_time(status.and_then(|s| s.reconciled_at.as_deref()));
    let seen_since = match (reconciled, since) {
        (None, _) => true,
        (Some(r), Some(s)) => r > s,
        (Some(_), None) => false,
    };
    if !seen_since {
        return None;
    }
    let operation = status.and_then(|s| s.operation_state.as_ref());
    let started_after = operation.is_some_and(|op| {
        // Go would dereference a nil transition time here; any start counts as after it.
        match (parse_time(Some(&op.started_at)), since) {
            (Some(started), Some(s)) => started > s,
            (Some(_), None) => true,
            (None, _) => false,
        }
    });
    if let (true, Some(op)) = (started_after, operation) {
        return Some(match op.phase {
            OperationPhase::Succeeded => {
                "Application resource completed a sync successfully, updating status from Pending to Progressing"
            }
            p if p.is_completed() => {
                "Application resource completed a sync, updating status from Pending to Progressing"
            }
            _ => {
                "Application resource became Progressing, updating status from Pending to Progressing"
            }
        });
    }
    has_error(app)
        .then_some("Application resource has error and cannot sync, updating status to Progressing")
}

/// Step two: Waiting Applications the rollout has reached move to Pending, at most `maxUpdate`
/// of a step at a time (counting those already Pending or Progressing).
pub(crate) fn progress(
    statuses: &mut [ApplicationSetApplicationStatus],
    rollout_steps: &[ApplicationSetRolloutStep],
    steps: &StepMap,
    to_sync: &BTreeSet<String>,
    now: Timestamp,
) -> Vec<InvalidMaxUpdate> {
    let mut invalid: Vec<InvalidMaxUpdate> = Vec::new();
    let mut updating = vec![0_i64; rollout_steps.len()];
    let mut total = vec![0_usize; rollout_steps.len()];
    for s in statuses.iter() {
        let i = steps.index_for_counts(&s.application);
        total[i] += 1;
        if s.status == phase::PENDING || s.status == phase::PROGRESSING {
            updating[i] += 1;
        }
    }
    for s in statuses.iter_mut() {
        let i = steps.index_for_counts(&s.application);
        let value = rollout_steps[i].max_update.as_ref();
        let limit = match max_update::limit(value, total[i]) {
            Ok(limit) => limit,
            Err(limit) => {
                if let Some(v) = value.filter(|_| !invalid.iter().any(|x| x.step == i)) {
                    invalid.push(InvalidMaxUpdate {
                        step: i,
                        value: max_update::display(v),
                    });
                }
                Some(limit)
            }
        };
        let allowed = limit.is_none_or(|l| updating[i] < l);
        if s.status == phase::WAITING && to_sync.contains(&s.application) && allowed {
            s.status = phase::PENDING.to_string();
            s.message = PENDING_MESSAGE.to_string();
            s.last_transition_time = Some(format_time(now));
            updating[i] += 1;
        }
    }
    invalid
}
