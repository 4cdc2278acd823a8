//! The `SyncWindow:` / `Assigned Windows:` header lines (Argo's `printAppSummaryTable`): the
//! project's windows that apply to the Application, evaluated at the current time by
//! [`plumb_policy::windows`], the same code the controller enforces them with.
//!
//! A window that cannot be evaluated (bad schedule, duration, kind or time zone) blocks syncs, as
//! in Argo, so the label says `Sync Denied` and names the window and the problem in
//! parentheses; Argo's CLI would print a label computed as if the window did not exist.

use jiff::Timestamp;
use plumb_model::application::{AppProject, Application, SyncWindow};
use plumb_policy::windows::{assigned, evaluate};

use crate::output::wide::WindowSummary;

/// `kind:schedule:duration`, as Argo lists assigned windows.
pub fn window_label(w: &SyncWindow) -> String {
    format!(
        "{}:{}:{}",
        w.kind.as_deref().unwrap_or_default(),
        w.schedule.as_deref().unwrap_or_default(),
        w.duration.as_deref().unwrap_or_default()
    )
}

/// The SyncWindow summary of an Application in its project, now.
pub fn window_summary(app: &Application, project: Option<&AppProject>) -> WindowSummary {
    window_summary_at(app, project, Timestamp::now())
}

/// The SyncWindow summary of an Application in its project at `now`.
pub fn window_summary_at(
    app: &Application,
    project: Option<&AppProject>,
    now: Timestamp,
) -> WindowSummary {
    let windows = project.map(|p| assigned(p, app)).unwrap_or_default();
    let status = match evaluate(&windows, now) {
        Ok(state) => state.label().to_string(),
        Err(e) => format!("Sync Denied ({:#})", anyhow::Error::new(e)),
    };
    WindowSummary {
        status,
        assigned: windows.iter().map(|w| window_label(w)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app() -> Application {
        serde_json::from_value(json!({
            "metadata": {"name": "payments-api", "namespace": "argocd"},
            "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"}}
        }))
        .unwrap()
    }

    fn project(windows: serde_json::Value) -> AppProject {
        serde_json::from_value(json!({
            "metadata": {"name": "default", "namespace": "argocd"},
            "spec": {"syncWindows": windows}
        }))
        .unwrap()
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn no_project_or_no_windows_is_sync_allowed_and_matching_windows_are_listed() {
        let now = at("2026-07-20T10:16:00Z");
        assert_eq!(
            window_summary_at(&app(), None, now),
            WindowSummary::default()
        );
        let p = project(json!([
            {"kind": "deny", "schedule": "0 2 * * *", "duration": "1h", "applications": ["payments-*"]},
            {"kind": "allow", "schedule": "0 8 * * *", "duration": "8h", "namespaces": ["billing"]},
            {"kind": "deny", "schedule": "0 0 * * 6", "duration": "48h", "namespaces": ["payments"], "clusters": ["other"], "andOperator": true}
        ]));
        let s = window_summary_at(&app(), Some(&p), now);
        assert_eq!(s.status, "Sync Allowed");
        assert_eq!(s.assigned, ["deny:0 2 * * *:1h"]);
        // At 02:30 UTC the deny window is open.
        let s = window_summary_at(&app(), Some(&p), at("2026-07-20T02:30:00Z"));
        assert_eq!(s.status, "Sync Denied");
    }

    #[test]
    fn manual_allowed_and_an_honest_label_for_a_bad_window() {
        let now = at("2026-07-20T02:30:00Z");
        let p = project(json!([
            {"kind": "deny", "schedule": "0 2 * * *", "duration": "1h", "manualSync": true, "applications": ["*"]}
        ]));
        assert_eq!(
            window_summary_at(&app(), Some(&p), now).status,
            "Manual Allowed"
        );
        let p = project(json!([
            {"kind": "deny", "schedule": "0 26 * * *", "duration": "1h", "applications": ["*"]}
        ]));
        let s = window_summary_at(&app(), Some(&p), now);
        assert_eq!(
            s.status,
            "Sync Denied (sync window 0 (deny:0 26 * * *:1h): cannot parse schedule '0 26 * * *': \
             hour field '26': end of range (26) above maximum (23): 26)"
        );
        assert_eq!(s.assigned, ["deny:0 26 * * *:1h"]);
    }
}
