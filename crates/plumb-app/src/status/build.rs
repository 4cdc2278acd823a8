//! The status a comparison (or a failure to compare) determines.

use plumb_model::ResourceKey;
use plumb_model::application::{Application, ApplicationCondition, SyncStatusCode, condition};
use serde_json::{Value, json};

use super::patch::{
    HealthPatch, HealthRow, ResourceRow, StatusPatch, Summary, SyncPatch, strip_nulls,
};
use crate::compare::{ComparedResource, Comparison, SkippedObject};
use crate::error::{Error, chain};

/// The health written when nothing could be assessed.
const UNKNOWN_HEALTH: &str = "Unknown";

/// The `status` fields a comparison determines (everything but operation state and history).
pub fn from_comparison(app: &Application, cmp: &Comparison, now: &str) -> StatusPatch {
    let revisions = (cmp.revisions.len() > 1).then(|| cmp.revisions.clone());
    let images = (!cmp.images.is_empty()).then(|| cmp.images.clone());
    let types = (cmp.source_types.len() > 1).then(|| cmp.source_types.clone());
    StatusPatch {
        sync: Some(SyncPatch {
            status: cmp.sync.as_str().to_string(),
            compared_to: compared_to(app),
            revision: cmp.revision.clone(),
            revisions: Some(revisions),
        }),
        health: Some(health_of(app, cmp, now)),
        resources: Some(resource_rows(cmp)),
        conditions: Some(conditions(app, &cmp.warnings, &[], now)),
        summary: Some(Summary { images }),
        source_type: Some(cmp.source_types.first().cloned()),
        source_types: Some(types),
        reconciled_at: Some(now.to_string()),
        observed_at: Some(now.to_string()),
        ..StatusPatch::default()
    }
}

/// The Application's health, with its transition time kept while the code is unchanged.
fn health_of(app: &Application, cmp: &Comparison, now: &str) -> HealthPatch {
    let code = cmp.health.code.as_str();
    // Merge patches keep absent keys: an empty message must be written as null to clear it.
    let message = (!cmp.health.message.is_empty()).then(|| cmp.health.message.clone());
    HealthPatch {
        status: code.to_string(),
        message,
        last_transition_time: health_since(app, code, now),
    }
}

/// When the Application's health became `code`: kept from the previous status, else `now`.
fn health_since(app: &Application, code: &str, now: &str) -> String {
    app.status
        .as_ref()
        .and_then(|s| s.health.as_ref())
        .filter(|h| h.status.as_deref() == Some(code))
        .and_then(|h| h.last_transition_time.clone())
        .unwrap_or_else(|| now.to_string())
}

/// `status.resources`: the compared objects and the skipped ones, ordered by key.
fn resource_rows(cmp: &Comparison) -> Vec<ResourceRow> {
    // As Argo CD, a hook is listed only when it exists: one Git declares but the cluster does not
    // hold (yet, or under a generated name) would be a row for an object that is not there.
    let mut rows: Vec<(&ResourceKey, ResourceRow)> = cmp
        .resources
        .iter()
        .filter(|r| !(r.hook && r.live.is_none()))
        .map(|r| (&r.key, compared_row(r)))
        .collect();
    // Objects marked `Skip` are listed, without status or health, as Argo CD lists them.
    rows.extend(cmp.skipped.iter().map(|s| (&s.key, skipped_row(s))));
    rows.sort_by(|a, b| a.0.cmp(b.0));
    rows.into_iter().map(|(_, row)| row).collect()
}

fn compared_row(r: &ComparedResource) -> ResourceRow {
    let health = match &r.health {
        Some(h) => Some(HealthRow {
            status: h.code.as_str().to_string(),
            message: h.message.clone(),
        }),
        None if r.live.is_none() && r.desired.is_some() && !r.hook => Some(HealthRow {
            status: "Missing".to_string(),
            message: String::new(),
        }),
        None => None,
    };
    ResourceRow {
        group: r.key.group.clone(),
        version: r.version.clone(),
        kind: r.key.kind.clone(),
        namespace: r.key.namespace.clone(),
        name: r.key.name.clone(),
        status: r.status.map(|s| s.as_str().to_string()),
        health,
        hook: r.hook,
        requires_pruning: r.requires_pruning || is_named_hook(r),
        sync_wave: r.sync_wave,
    }
}

/// Argo CD reconciles hooks apart from the objects Git declares, so a live hook never has a
/// target there and is marked `requiresPruning` (it is not pruned: a sync never prunes hooks) --
/// unless its name was generated: its tracking id then names no object, and Argo does not count
/// it as its own.
fn is_named_hook(r: &ComparedResource) -> bool {
    r.hook
        && r.live.as_ref().is_some_and(|l| {
            l.pointer("/metadata/generateName")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        })
}

fn skipped_row(s: &SkippedObject) -> ResourceRow {
    ResourceRow {
        group: s.key.group.clone(),
        version: s.version.clone(),
        kind: s.key.kind.clone(),
        namespace: s.key.namespace.clone(),
        name: s.key.name.clone(),
        sync_wave: s.sync_wave,
        ..ResourceRow::default()
    }
}

/// The `status` fields after a failed comparison: sync `Unknown`, health `Unknown` with the
/// reason as its message, and a condition saying why. (Argo CD writes `Healthy` here by design,
/// argo-cd#10682; Plumb does not claim a health it did not assess: docs/compatibility.md.)
/// Resources stay as they were: a failed comparison proves nothing about them, and nothing is
/// ever pruned from it.
pub fn from_failure(
    app: &Application,
    condition_type: &str,
    message: &str,
    now: &str,
) -> StatusPatch {
    let compared_to = json!({
        "destination": app.spec.destination,
        "source": app.spec.source,
        "sources": app.spec.sources,
    });
    let revision = app
        .status
        .as_ref()
        .and_then(|s| s.sync.as_ref())
        .and_then(|s| s.revision.clone())
        .unwrap_or_default();
    let failed = [(condition_type.to_string(), message.to_string())];
    StatusPatch {
        sync: Some(SyncPatch {
            status: SyncStatusCode::Unknown.as_str().to_string(),
            compared_to: strip_nulls(compared_to),
            revision,
            revisions: None,
        }),
        health: Some(HealthPatch {
            status: UNKNOWN_HEALTH.to_string(),
            message: Some(message.to_string()),
            last_transition_time: health_since(app, UNKNOWN_HEALTH, now),
        }),
        conditions: Some(conditions(app, &failed, &[], now)),
        reconciled_at: Some(now.to_string()),
        observed_at: Some(now.to_string()),
        ..StatusPatch::default()
    }
}

/// The message of a failed comparison, as Argo CD words it.
pub fn comparison_error_message(e: &Error) -> String {
    if let Error::LiveState(_) = e {
        // Argo's own wording for this step (`CompareAppState`: "Failed to load live state").
        return e.to_string();
    }
    format!(
        "Failed to compare desired state to live state: {}",
        chain(e)
    )
}

/// [`from_failure`] for a failed comparison (`ComparisonError`).
pub fn from_comparison_error(app: &Application, e: &Error, now: &str) -> StatusPatch {
    from_failure(
        app,
        condition::COMPARISON_ERROR,
        &comparison_error_message(e),
        now,
    )
}

fn compared_to(app: &Application) -> Value {
    let mut v = json!({"destination": app.spec.destination});
    if app.spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
        v["sources"] = json!(app.spec.sources);
    } else if let Some(s) = &app.spec.source {
        v["source"] = json!(s);
    }
    if let Some(ign) = &app.spec.ignore_differences {
        v["ignoreDifferences"] = json!(ign);
    }
    strip_nulls(v)
}

/// Conditions with Argo's `lastTransitionTime` kept for conditions that were already there;
/// `None` when none are left. `keep` lists condition types owned by someone else (the operation
/// runner) that survive.
pub fn conditions(
    app: &Application,
    new: &[(String, String)],
    keep: &[&str],
    now: &str,
) -> Option<Vec<ApplicationCondition>> {
    let prev: Vec<ApplicationCondition> = app
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let mut out: Vec<ApplicationCondition> = prev
        .iter()
        .filter(|c| keep.contains(&c.type_.as_str()))
        .cloned()
        .collect();
    for (t, m) in new {
        let since = prev
            .iter()
            .find(|c| &c.type_ == t && &c.message == m)
            .and_then(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| now.to_string());
        out.push(ApplicationCondition {
            type_: t.clone(),
            message: m.clone(),
            last_transition_time: Some(since),
        });
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A namespaced cluster's refusal reads as Argo's `CompareAppState` words it; other errors
    /// keep the "Failed to compare" prefix.
    #[test]
    fn a_live_state_refusal_is_argos_failed_to_load_live_state() {
        let refusal = Error::LiveState(r#"namespace "c" for ConfigMap "x" is not managed"#.into());
        assert_eq!(
            comparison_error_message(&refusal),
            r#"Failed to load live state: namespace "c" for ConfigMap "x" is not managed"#
        );
        let other = Error::UnknownCluster("https://x".into());
        assert!(
            comparison_error_message(&other)
                .starts_with("Failed to compare desired state to live state: ")
        );
    }
}
