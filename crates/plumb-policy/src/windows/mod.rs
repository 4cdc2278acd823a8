//! Sync windows (AppProject `spec.syncWindows[]`): which windows apply to an Application
//! ([`assigned`]), which are open at an instant ([`evaluate`]), and whether a sync may start
//! ([`WindowState::can_sync`]) or go on ([`WindowState::can_continue`]).
//!
//! The semantics are Argo CD's (`pkg/apis/application/v1alpha1/types.go`, `SyncWindows`): no
//! window, any sync; an active deny window blocks (it beats allow windows); when allow windows
//! apply, syncs need one of them open; `manualSync` lets manual syncs through. Where Plumb
//! differs is time: schedules are read in the window's own time zone on the calendar of each day,
//! so windows do not move around daylight-saving changes (see [`evaluate`]).
//!
//! ```
//! use plumb_model::application::{AppProject, Application};
//! use plumb_policy::windows::{assigned, evaluate};
//!
//! let project: AppProject = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "payments", "namespace": "argocd"},
//!     "spec": {"syncWindows": [{"kind": "deny", "schedule": "0 22 * * *", "duration": "8h",
//!                               "timeZone": "Europe/Berlin", "namespaces": ["payments"]}]}
//! }))?;
//! let app: Application = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "payments-api", "namespace": "argocd"},
//!     "spec": {"project": "payments", "destination": {"name": "in-cluster", "namespace": "payments"}}
//! }))?;
//! // 23:30 in Berlin on a July night.
//! let state = evaluate(&assigned(&project, &app), "2026-07-20T21:30:00Z".parse()?)?;
//! assert!(!state.can_sync(false));
//! assert_eq!(state.label(), "Sync Denied");
//! assert_eq!(
//!     state.blocked_message(false).as_deref(),
//!     Some("Blocked by sync window deny:0 22 * * *:8h (active until 2026-07-21 06:00 Europe/Berlin)")
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cron;
mod duration;
mod error;
mod evaluate;
mod select;
mod zone;

pub use cron::CronError;
pub use duration::DurationError;
pub use error::WindowError;
pub use evaluate::{ActiveWindow, WindowKind, WindowState, evaluate, validate};
pub use select::{assigned, matches};

#[cfg(test)]
mod tests;
