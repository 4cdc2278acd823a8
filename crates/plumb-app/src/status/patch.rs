//! The typed merge patch of `status`. Each field is written only when set (`None` leaves the
//! status's field as it is); the `Option<Option<_>>` fields write `null` (clearing the field)
//! with `Some(None)`, because a merge patch keeps what it does not name.

use plumb_model::application::{Application, ApplicationCondition, RevisionHistory};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// One write of an Application's `status`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusPatch {
    /// `status.sync`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncPatch>,
    /// `status.health`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthPatch>,
    /// `status.resources`, ordered by key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<ResourceRow>>,
    /// `status.conditions` (`Some(None)`: none left, cleared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Option<Vec<ApplicationCondition>>>,
    /// `status.summary`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// `status.sourceType` of the first source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_type: Option<Option<String>>,
    /// `status.sourceTypes`, written only for several sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_types: Option<Option<Vec<String>>>,
    /// `status.reconciledAt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reconciled_at: Option<String>,
    /// `status.observedAt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<String>,
    /// `status.operationState`: a merge patch of its own (the operation's record is replaced
    /// or updated field by field, see [`replacing`]); `Value::Null` clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_state: Option<Value>,
    /// `status.history`, whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<RevisionHistory>>,
}

/// `status.sync`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncPatch {
    /// `Synced`, `OutOfSync` or `Unknown`.
    pub status: String,
    /// What was compared: destination, sources, ignore rules.
    pub compared_to: Value,
    /// The first source's commit.
    pub revision: String,
    /// Every source's commit (`Some(None)` clears it: one source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Option<Vec<String>>>,
}

/// `status.health`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthPatch {
    /// The health code.
    pub status: String,
    /// Why (`null` clears the previous message).
    pub message: Option<String>,
    /// When the code last changed.
    pub last_transition_time: String,
}

/// One row of `status.resources`, in Argo CD's shape (empty group, namespace, false flags and
/// wave 0 left out).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRow {
    /// API group.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Sync status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Health.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthRow>,
    /// A sync hook.
    #[serde(skip_serializing_if = "is_false")]
    pub hook: bool,
    /// Tracked here and no longer declared.
    #[serde(skip_serializing_if = "is_false")]
    pub requires_pruning: bool,
    /// Sync wave.
    #[serde(skip_serializing_if = "is_zero")]
    pub sync_wave: i64,
}

/// A row's health.
#[derive(Debug, Clone, Serialize)]
pub struct HealthRow {
    /// The health code.
    pub status: String,
    /// Why.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// `status.summary`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Images of the live workloads (`null` when none).
    pub images: Option<Vec<String>>,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

impl StatusPatch {
    /// A patch that writes only `operationState`.
    pub fn operation_state(state: Value) -> Self {
        Self {
            operation_state: Some(state),
            ..Self::default()
        }
    }

    /// The patch as the JSON object written under `status`.
    pub fn to_fields(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            // A struct of strings, numbers and JSON values always serialises to an object.
            _ => Map::new(),
        }
    }
}

/// A point in time as Kubernetes writes it (`2026-07-20T10:15:32Z`).
pub fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
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
pub fn changes_anything(app: &Application, new: &StatusPatch) -> bool {
    let old = app
        .status
        .as_ref()
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or(Value::Null);
    new.to_fields().iter().any(|(k, v)| {
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

/// `v` without its `null` fields, at every depth.
pub(crate) fn strip_nulls(v: Value) -> Value {
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
    use serde_json::json;

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
