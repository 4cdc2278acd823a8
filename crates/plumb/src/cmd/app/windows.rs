//! The `SyncWindow:` / `Assigned Windows:` header lines (Argo's `printAppSummaryTable`).
//!
//! Evaluating whether a window is active (cron schedule, duration, time zone) belongs to the sync
//! windows work, which the controller will enforce; until it lands Plumb does not block syncs on
//! windows, so the honest answer is `Sync Allowed` and the assigned windows are listed for the
//! reader. [`window_summary`] is the one place to extend with `Manual Allowed` / `Sync Denied`.

use plumb_model::application::{AppProject, Application, SyncWindow};

use crate::output::wide::WindowSummary;

/// Whether a window's selectors name this Application (applications, namespaces, clusters;
/// OR'ed unless `andOperator`), with Argo's glob matching on `*`.
pub fn window_matches(window: &SyncWindow, app: &Application) -> bool {
    let server = app.spec.destination.server.as_deref().unwrap_or_default();
    let cluster_name = app.spec.destination.name.as_deref().unwrap_or_default();
    let namespace = app
        .spec
        .destination
        .namespace
        .as_deref()
        .unwrap_or_default();
    let checks = [
        window
            .applications
            .as_ref()
            .map(|pats| pats.iter().any(|p| glob(p, app.name()))),
        window
            .namespaces
            .as_ref()
            .map(|pats| pats.iter().any(|p| glob(p, namespace))),
        window.clusters.as_ref().map(|pats| {
            pats.iter()
                .any(|p| glob(p, server) || glob(p, cluster_name))
        }),
    ];
    let given: Vec<bool> = checks.into_iter().flatten().collect();
    if given.is_empty() {
        return false;
    }
    if window.and_operator == Some(true) {
        given.iter().all(|b| *b)
    } else {
        given.iter().any(|b| *b)
    }
}

/// `*` matches any run of characters; everything else literally.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// The SyncWindow summary of an Application in its project.
pub fn window_summary(app: &Application, project: Option<&AppProject>) -> WindowSummary {
    let windows: Vec<&SyncWindow> = project
        .and_then(|p| p.spec.sync_windows.as_ref())
        .into_iter()
        .flatten()
        .filter(|w| window_matches(w, app))
        .collect();
    WindowSummary {
        status: "Sync Allowed".to_string(),
        assigned: windows
            .iter()
            .map(|w| {
                format!(
                    "{}:{}:{}",
                    w.kind.as_deref().unwrap_or_default(),
                    w.schedule.as_deref().unwrap_or_default(),
                    w.duration.as_deref().unwrap_or_default()
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_project_or_no_windows_is_sync_allowed_and_matching_windows_are_listed() {
        let app: Application = serde_json::from_value(json!({
            "metadata": {"name": "payments-api", "namespace": "argocd"},
            "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments"}}
        }))
        .unwrap();
        assert_eq!(window_summary(&app, None), WindowSummary::default());
        let project: AppProject = serde_json::from_value(json!({
            "metadata": {"name": "default", "namespace": "argocd"},
            "spec": {"syncWindows": [
                {"kind": "deny", "schedule": "0 2 * * *", "duration": "1h", "applications": ["payments-*"]},
                {"kind": "allow", "schedule": "0 8 * * *", "duration": "8h", "namespaces": ["billing"]},
                {"kind": "deny", "schedule": "0 0 * * 6", "duration": "48h", "namespaces": ["payments"], "clusters": ["other"], "andOperator": true}
            ]}
        }))
        .unwrap();
        let s = window_summary(&app, Some(&project));
        assert_eq!(s.status, "Sync Allowed");
        assert_eq!(s.assigned, ["deny:0 2 * * *:1h"]);
        assert!(glob("*", ""));
        assert!(glob("pay*api", "payments-api"));
        assert!(!glob("pay*api", "payments"));
    }
}
