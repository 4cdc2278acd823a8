//! `-o json` wire types: a reviewed contract. One object per diffed resource, sorted by key;
//! attribution is always present (as `null` when nothing is recorded). Values are masked.

use serde::Serialize;
use serde_json::Value;

use crate::mask::MaskedDiff;

/// One resource in `-o json` output.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonDiff {
    /// API group (`""` for core).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace (`""` when cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `create`, `update`, `none` or `extra`.
    pub action: &'static str,
    /// Whether live differs from desired.
    pub modified: bool,
    /// `server-side` or `three-way`.
    pub strategy: &'static str,
    /// Why the strategy fell back, if it did.
    pub fallback_reason: Option<String>,
    /// The differing fields.
    pub changes: Vec<JsonChange>,
    /// Notes (skipped jq expressions, guard-rail refusals).
    pub notes: Vec<String>,
    /// Live after normalization (masked).
    pub normalized_live: Option<Value>,
    /// Predicted live (masked).
    pub predicted_live: Option<Value>,
}

/// One differing field.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonChange {
    /// `spec.template.spec.containers[name=x].image`.
    pub path: String,
    /// `added`, `removed` or `changed` (seen from live).
    pub op: &'static str,
    /// Live value.
    pub live: Option<Value>,
    /// Desired (predicted) value.
    pub desired: Option<Value>,
    /// Who last wrote it in live.
    pub attribution: Option<JsonAttribution>,
}

/// A field manager's last write.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonAttribution {
    /// Field manager.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// RFC 3339 time.
    pub time: String,
    /// False when attributed to the nearest remaining parent of a removed field.
    pub exact: bool,
}

/// The JSON document for a set of diffs (pretty-printed, keys sorted, trailing newline).
pub fn render_json(diffs: &[MaskedDiff]) -> String {
    let items: Vec<JsonDiff> = diffs.iter().map(to_json).collect();
    let value = serde_json::to_value(&items).unwrap_or(Value::Null);
    let mut text = serde_json::to_string_pretty(&sorted(value)).unwrap_or_default();
    text.push('\n');
    text
}

fn to_json(d: &MaskedDiff) -> JsonDiff {
    let k = d.key();
    JsonDiff {
        group: k.group.clone(),
        kind: k.kind.clone(),
        namespace: k.namespace.clone(),
        name: k.name.clone(),
        action: d.action().as_str(),
        modified: d.modified(),
        strategy: d.strategy().strategy.as_str(),
        fallback_reason: d.strategy().fallback_reason.clone(),
        changes: d
            .changes()
            .iter()
            .map(|c| JsonChange {
                path: c.path.to_string(),
                op: c.op.as_str(),
                live: c.live.clone(),
                desired: c.predicted.clone(),
                attribution: c.attribution.as_ref().map(|a| JsonAttribution {
                    manager: a.manager.clone(),
                    operation: a.operation.clone(),
                    time: a.time.clone(),
                    exact: a.exact,
                }),
            })
            .collect(),
        notes: d.notes().to_vec(),
        normalized_live: d.live().cloned(),
        predicted_live: d.predicted().cloned(),
    }
}

/// Rebuilds objects with sorted keys, whatever serde_json's map order is.
pub(crate) fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}
