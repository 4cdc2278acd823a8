//! The rollout waits until every Application has been compared again after a change was seen,
//! so that a step is never judged on a stale sync status (Argo CD's
//! `ensureApplicationsReconciled`, with its refresh grace period).

use std::time::Duration;

use jiff::Timestamp;
use plumb_model::annotations::REFRESH;
use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSetApplicationStatus;

use super::status::{REVISION_AND_SPEC_CHANGED, REVISION_CHANGED, SPEC_CHANGED, parse_time, phase};

/// The latest transition to Waiting caused by a change (not by a new Application).
pub(crate) fn latest_waiting(statuses: &[ApplicationSetApplicationStatus]) -> Option<Timestamp> {
    statuses
        .iter()
        .filter(|s| s.status == phase::WAITING)
        .filter(|s| {
            [REVISION_CHANGED, REVISION_AND_SPEC_CHANGED, SPEC_CHANGED]
                .contains(&s.message.as_str())
        })
        .filter_map(|s| parse_time(s.last_transition_time.as_deref()))
        .max()
}

/// Whether the rollout may go on, and which Applications to ask for a refresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    pub ready: bool,
    pub refresh: Vec<String>,
}

/// `since`: when the latest change was seen. Within `grace` of it the rollout just waits (the
/// application controller usually compares on its own); after it, every Application not
/// compared since gets a refresh request, and the rollout waits for all of them.
pub(crate) fn check(
    live: &[Application],
    since: Option<Timestamp>,
    grace: Duration,
    now: Timestamp,
) -> Check {
    let Some(since) = since else {
        return Check {
            ready: true,
            refresh: Vec::new(),
        };
    };
    let elapsed = now.duration_since(since);
    if !grace.is_zero() && elapsed.as_secs_f64() < grace.as_secs_f64() {
        return Check {
            ready: false,
            refresh: Vec::new(),
        };
    }
    let mut ready = true;
    let mut refresh = Vec::new();
    for app in live {
        let reconciled = parse_time(app.status.as_ref().and_then(|s| s.reconciled_at.as_deref()));
        if reconciled.is_some_and(|r| r >= since) {
            continue;
        }
        ready = false;
        if app.metadata.annotation(REFRESH).is_none_or(str::is_empty) {
            refresh.push(app.name().to_string());
        }
    }
    Check { ready, refresh }
}

/// How long until the grace period after `since` ends (at least a second once it has).
pub(crate) fn grace_remaining(since: Timestamp, grace: Duration, now: Timestamp) -> Duration {
    let elapsed = now.duration_since(since).as_secs_f64().max(0.0);
    let remaining = grace.as_secs_f64() - elapsed;
    if remaining <= 0.0 {
        Duration::from_secs(1)
    } else {
        Duration::from_secs_f64(remaining)
    }
}
