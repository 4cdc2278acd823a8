//! `status.history`: the deployments an operation records.

use plumb_app::compare::Comparison;
use plumb_model::application::{Application, RevisionHistory};

pub(super) fn history_entry(
    app: &Application,
    cmp: &Comparison,
    started_at: &str,
    finished_at: &str,
) -> RevisionHistory {
    let next_id = app
        .status
        .as_ref()
        .and_then(|s| s.history.as_ref())
        .and_then(|h| h.iter().map(|e| e.id).max())
        .map_or(0, |m| m + 1);
    let multi = cmp.sources.len() > 1;
    RevisionHistory {
        // Local manifests have no revision: Argo CD records none (`omitempty`).
        revision: Some(cmp.revision.clone()).filter(|r| !r.is_empty()),
        deployed_at: finished_at.to_string(),
        id: next_id,
        source: if multi {
            None
        } else {
            cmp.sources.first().cloned()
        },
        deploy_started_at: Some(started_at.to_string()),
        sources: multi.then(|| cmp.sources.clone()),
        revisions: (cmp.revisions.len() > 1).then(|| cmp.revisions.clone()),
        initiated_by: app.operation.as_ref().and_then(|o| o.initiated_by.clone()),
    }
}

/// The history after appending `entry`, capped by `spec.revisionHistoryLimit` (default 10).
pub(super) fn history_with(app: &Application, entry: RevisionHistory) -> Vec<RevisionHistory> {
    let mut h = app
        .status
        .as_ref()
        .and_then(|s| s.history.clone())
        .unwrap_or_default();
    h.push(entry);
    let limit = usize::try_from(app.spec.revision_history_limit.unwrap_or(10).max(1)).unwrap_or(10);
    if h.len() > limit {
        h.drain(..h.len() - limit);
    }
    h
}
