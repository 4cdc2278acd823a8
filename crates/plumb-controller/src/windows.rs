//! Sync windows in the controller: whether the Application's project lets a sync start now.

use plumb_model::application::{AppProject, Application};

/// `Ok` when a sync (manual or automated) may start now; `Err` with the reason otherwise. A
/// window that cannot be evaluated (bad schedule or zone) blocks, with the error as the reason:
/// guessing would be worse.
pub(crate) fn allows(project: &AppProject, app: &Application, manual: bool) -> Result<(), String> {
    let windows = plumb_policy::windows::assigned(project, app);
    if windows.is_empty() {
        return Ok(());
    }
    match plumb_policy::windows::evaluate(&windows, jiff::Timestamp::now()) {
        Ok(state) => match state.blocked_message(manual) {
            None => Ok(()),
            Some(msg) => Err(msg),
        },
        Err(e) => Err(format!(
            "sync windows of project {}: {e}",
            project_name(project)
        )),
    }
}

fn project_name(p: &AppProject) -> &str {
    p.metadata.name.as_deref().unwrap_or_default()
}

/// How long until a window of the project opens or closes for this Application (a blocked
/// automated sync is looked at again then).
pub(crate) fn next_change(project: &AppProject, app: &Application) -> Option<std::time::Duration> {
    let windows = plumb_policy::windows::assigned(project, app);
    let now = jiff::Timestamp::now();
    let state = plumb_policy::windows::evaluate(&windows, now).ok()?;
    let next = state.next_change()?;
    let secs = next.duration_since(now).as_secs_f64();
    (secs > 0.0).then(|| std::time::Duration::from_secs_f64(secs + 1.0))
}
