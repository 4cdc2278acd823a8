//! The status the controller writes: built from a [`Comparison`] (or a comparison failure), with
//! transition times kept from the previous status and a change test so unchanged status is not
//! rewritten.

use plumb_model::application::{Application, ApplicationCondition, SyncStatusCode};
use serde_json::{Map, Value, json};

use crate::compare::Comparison;

/// The health written when nothing could be assessed.
const UNKNOWN_HEALTH: &str = "Unknown";

/// A point in time as Kubernetes writes it (`2026-07-20T10:15:32Z`).
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The `status` fields a comparison determines (everything but operation state and history).
pub fn from_comparison(app: &Application, cmp: &Comparison, now: &str) -> Map<String, Value> {
    let prev = app.status.as_ref();
    let mut status = Map::new();
    let compared_to = compared_to(app, cmp);
    let revisions = (cmp.revisions.len() > 1).then(|| cmp.revisions.clone());
    let sync = json!({"status": cmp.sync.as_str(), "comparedTo": compared_to, "revision": cmp.revision, "revisions": revisions});
    status.insert("sync".into(), sync);

    let health_code = cmp.health.code.as_str();
    let since = prev
        .and_then(|s| s.health.as_ref())
        .filter(|h| h.status.as_deref() == Some(health_code))
        .and_then(|h| h.last_transition_time.clone())
        .unwrap_or_else(|| now.to_string());
    // Merge patches keep absent keys: an empty message must be written as null to clear it.
    let message = (!cmp.health.message.is_empty()).then(|| cmp.health.message.clone());
    let health = json!({"status": health_code, "message": message, "lastTransitionTime": since});
    status.insert("health".into(), health);

    // As Argo CD, a hook is listed only when it exists: one Git declares but the cluster does not
    // hold (yet, or under a generated name) would be a row for an object that is not there.
    let mut resources: Vec<(&plumb_model::ResourceKey, Value)> = cmp
        .resources
        .iter()
        .filter(|r| !(r.hook && r.live.is_none()))
        .map(|r| {
            let mut v = json!({
                "group": r.key.group, "version": r.version, "kind": r.key.kind,
                "namespace": r.key.namespace, "name": r.key.name,
            });
            let m = v.as_object_mut().expect("object literal");
            // Argo omits empty group/namespace; keep the same shape.
            for f in ["group", "namespace"] {
                if m.get(f).and_then(Value::as_str).is_some_and(str::is_empty) {
                    m.remove(f);
                }
            }
            if let Some(s) = r.status {
                m.insert("status".into(), json!(s.as_str()));
            }
            if let Some(h) = &r.health {
                let mut hv = json!({"status": h.code.as_str()});
                if !h.message.is_empty() {
                    hv["message"] = json!(h.message);
                }
                m.insert("health".into(), hv);
            } else if r.live.is_none() && r.desired.is_some() && !r.hook {
                m.insert("health".into(), json!({"status": "Missing"}));
            }
            if r.hook {
                m.insert("hook".into(), json!(true));
            }
            // Argo CD reconciles hooks apart from the objects Git declares, so a live hook never
            // has a target there and is marked `requiresPruning` (it is not pruned: a sync never
            // prunes hooks) -- unless its name was generated: its tracking id then names no
            // object, and Argo does not count it as its own.
            let named_hook = r.hook
                && r.live.as_ref().is_some_and(|l| {
                    l.pointer("/metadata/generateName")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                });
            if r.requires_pruning || named_hook {
                m.insert("requiresPruning".into(), json!(true));
            }
            if r.sync_wave != 0 {
                m.insert("syncWave".into(), json!(r.sync_wave));
            }
            (&r.key, v)
        })
        .collect();
    // Objects marked `Skip` are listed, without status or health, as Argo CD lists them.
    for s in &cmp.skipped {
        let mut v = json!({"version": s.version, "kind": s.key.kind, "name": s.key.name});
        if !s.key.group.is_empty() {
            v["group"] = json!(s.key.group);
        }
        if !s.key.namespace.is_empty() {
            v["namespace"] = json!(s.key.namespace);
        }
        if s.sync_wave != 0 {
            v["syncWave"] = json!(s.sync_wave);
        }
        resources.push((&s.key, v));
    }
    resources.sort_by(|a, b| a.0.cmp(b.0));
    let resources: Vec<Value> = resources.into_iter().map(|(_, v)| v).collect();
    status.insert("resources".into(), json!(resources));

    let conditions: Vec<(String, String)> = cmp.warnings.clone();
    status.insert(
        "conditions".into(),
        conditions_value(app, &conditions, &[], now),
    );
    let images = (!cmp.images.is_empty()).then(|| cmp.images.clone());
    status.insert("summary".into(), json!({"images": images}));
    status.insert("sourceType".into(), json!(cmp.source_types.first()));
    let types = (cmp.source_types.len() > 1).then(|| cmp.source_types.clone());
    status.insert("sourceTypes".into(), json!(types));
    status.insert("reconciledAt".into(), json!(now));
    status.insert("observedAt".into(), json!(now));
    status
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
) -> Map<String, Value> {
    let mut status = Map::new();
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
    status.insert(
        "sync".into(),
        json!({"status": SyncStatusCode::Unknown.as_str(), "comparedTo": strip_nulls(compared_to), "revision": revision}),
    );
    let since = app
        .status
        .as_ref()
        .and_then(|s| s.health.as_ref())
        .filter(|h| h.status.as_deref() == Some(UNKNOWN_HEALTH))
        .and_then(|h| h.last_transition_time.clone())
        .unwrap_or_else(|| now.to_string());
    status.insert(
        "health".into(),
        json!({"status": UNKNOWN_HEALTH, "message": message, "lastTransitionTime": since}),
    );
    status.insert(
        "conditions".into(),
        conditions_value(
            app,
            &[(condition_type.to_string(), message.to_string())],
            &[],
            now,
        ),
    );
    status.insert("reconciledAt".into(), json!(now));
    status.insert("observedAt".into(), json!(now));
    status
}

/// The message of a failed comparison, as Argo CD words it.
pub fn comparison_error_message(e: &crate::error::Error) -> String {
    format!(
        "Failed to compare desired state to live state: {}",
        crate::error::chain(e)
    )
}

/// [`from_failure`] for a failed comparison (`ComparisonError`).
pub fn from_comparison_error(
    app: &Application,
    e: &crate::error::Error,
    now: &str,
) -> Map<String, Value> {
    from_failure(
        app,
        plumb_model::application::condition::COMPARISON_ERROR,
        &comparison_error_message(e),
        now,
    )
}

fn compared_to(app: &Application, cmp: &Comparison) -> Value {
    let mut v = json!({"destination": app.spec.destination});
    if app.spec.sources.as_ref().is_some_and(|s| !s.is_empty()) {
        v["sources"] = json!(app.spec.sources);
    } else if let Some(s) = &app.spec.source {
        v["source"] = json!(s);
    }
    if let Some(ign) = &app.spec.ignore_differences {
        v["ignoreDifferences"] = json!(ign);
    }
    let _ = cmp;
    strip_nulls(v)
}

/// Conditions with Argo's `lastTransitionTime` kept for conditions that were already there.
/// `keep` lists condition types owned by someone else (the operation runner) that survive.
pub fn conditions_value(
    app: &Application,
    new: &[(String, String)],
    keep: &[&str],
    now: &str,
) -> Value {
    let prev: Vec<ApplicationCondition> = app
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let mut out: Vec<Value> = Vec::new();
    for c in prev.iter().filter(|c| keep.contains(&c.type_.as_str())) {
        out.push(json!(c));
    }
    for (t, m) in new {
        let since = prev
            .iter()
            .find(|c| &c.type_ == t && &c.message == m)
            .and_then(|c| c.last_transition_time.clone())
            .unwrap_or_else(|| now.to_string());
        out.push(json!({"type": t, "message": m, "lastTransitionTime": since}));
    }
    if out.is_empty() {
        Value::Null
    } else {
        Value::Array(out)
    }
}

/// The JSON merge patch (RFC 7386) that turns `old` into exactly `new`: what `old` holds and
/// `new` does not is cleared with `null`, so one write replaces a record that a plain merge
/// would blend into the previous one (an operation's state over the last operation's).
pub fn replacing(old: &Value, new: &Value) -> Value {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch: Map<String, Value> = o
                .keys()
                .filter(|k| !n.contains_key(*k))
                .map(|k| (k.clone(), Value::Null))
                .collect();
            for (k, v) in n {
                let v = match o.get(k) {
                    Some(before) => replacing(before, v),
                    None => v.clone(),
                };
                patch.insert(k.clone(), v);
            }
            Value::Object(patch)
        }
        _ => new.clone(),
    }
}

/// Whether writing `new` would change anything but the reconcile timestamps.
pub fn changes_anything(app: &Application, new: &Map<String, Value>) -> bool {
    let old = app
        .status
        .as_ref()
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    new.iter().any(|(k, v)| {
        if k == "reconciledAt" || k == "observedAt" {
            return false;
        }
        let before = old.get(k).cloned().unwrap_or(Value::Null);
        normalize(&before) != normalize(v)
    })
}

fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Number(n) => n.as_f64().map(|f| json!(f)).unwrap_or_else(|| v.clone()),
        other => other.clone(),
    }
}

fn strip_nulls(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7386's application of a merge patch, to check what a patch does.
    fn merge(target: &Value, patch: &Value) -> Value {
        match patch {
            Value::Object(p) => {
                let mut out = target.as_object().cloned().unwrap_or_default();
                for (k, v) in p {
                    if v.is_null() {
                        out.remove(k);
                    } else {
                        let merged = merge(out.get(k).unwrap_or(&Value::Null), v);
                        out.insert(k.clone(), merged);
                    }
                }
                Value::Object(out)
            }
            _ => patch.clone(),
        }
    }

    #[test]
    fn one_patch_replaces_the_previous_operation_state_without_blending() {
        let old = json!({
            "operation": {"sync": {"revision": "abc", "prune": true, "resources": [{"kind": "X"}]},
                          "initiatedBy": {"username": "alice"}},
            "phase": "Succeeded", "message": "successfully synced",
            "startedAt": "2026-12-02T01:00:00Z", "finishedAt": "2026-12-02T01:00:05Z",
            "syncResult": {"revision": "abc", "resources": [{"kind": "ConfigMap"}]},
            "retryCount": 2,
        });
        let new = json!({
            "operation": {"sync": {"syncStrategy": {"hook": {}}},
                          "initiatedBy": {"automated": true}},
            "phase": "Running", "message": "one or more tasks are running",
            "startedAt": "2026-12-02T02:00:00Z", "finishedAt": null, "syncResult": null,
            "retryCount": null,
        });
        let patch = replacing(&old, &new);
        assert_eq!(merge(&old, &patch), strip_nulls(new.clone()));
        // Nothing to replace: the patch is the new state.
        assert_eq!(
            merge(&Value::Null, &replacing(&Value::Null, &new)),
            strip_nulls(new)
        );
    }
}
