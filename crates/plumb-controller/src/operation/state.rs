//! The record of an operation: the state written when it starts, and the controls (terminate,
//! deletion approval) read back from the Application while it runs.

use plumb_model::annotations::DELETION_APPROVED;
use plumb_model::application::Application;
use plumb_sync::Control;
use serde_json::{Value, json};

/// Message recorded for an operation interrupted by a controller restart.
pub const INTERRUPTED: &str = "Operation was interrupted by a controller restart before it finished; it was not run again. Request the sync again.";

/// The message of an operation that has started (Argo CD's).
pub(super) const RUNNING_MESSAGE: &str = "one or more tasks are running";

/// The `operationState` written when an operation starts.
pub fn started(app: &Application, now: &str) -> Value {
    // Written as a merge patch over the previous operation's state: clear what belonged to it.
    json!({
        "operation": app.operation,
        "phase": "Running",
        "message": RUNNING_MESSAGE,
        "startedAt": now,
        "finishedAt": null,
        "syncResult": null,
        "retryCount": null,
    })
}

/// The control a running operation gets from the Application as last seen: `Terminating`
/// written by `terminate-op`, and a deletion approval newer than the operation's start.
pub fn control_of(app: &Value) -> Control {
    let state = app.pointer("/status/operationState");
    let terminate =
        state.and_then(|s| s.get("phase")).and_then(Value::as_str) == Some("Terminating");
    let started = state
        .and_then(|s| s.get("startedAt"))
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    let approved = app
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(DELETION_APPROVED))
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok());
    Control {
        terminate,
        prune_confirmed: matches!((approved, started), (Some(a), Some(s)) if a >= s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminate_and_deletion_approval_come_from_the_application() {
        let app = json!({
            "metadata": {"annotations": {DELETION_APPROVED: "2026-11-30T10:00:05Z"}},
            "status": {"operationState": {"phase": "Terminating", "startedAt": "2026-11-30T10:00:00Z"}}
        });
        assert_eq!(
            control_of(&app),
            Control {
                terminate: true,
                prune_confirmed: true
            }
        );
        let stale = json!({
            "metadata": {"annotations": {DELETION_APPROVED: "2026-11-30T09:00:00Z"}},
            "status": {"operationState": {"phase": "Running", "startedAt": "2026-11-30T10:00:00Z"}}
        });
        assert_eq!(control_of(&stale), Control::default());
    }
}
