//! Secret masking, the only way to a [`MaskedDiff`] (and renderers take nothing else, so an
//! unmasked Secret cannot be printed by mistake).
//!
//! As Argo CD (`gitops-engine` `HideSecretData`): for every key of a Secret's `data`, each
//! distinct value across predicted, last-applied and live gets a run of `+` — the first
//! `++++++++`, the next four longer — so equal values look equal and a changed value looks
//! different, without showing either. The last-applied annotation inside the Secret, and the
//! values of field changes, are masked with the same runs.

use std::collections::HashMap;

use base64::Engine;

use plumb_model::ResourceKey;
use plumb_model::annotations::LAST_APPLIED;
use serde_json::Value;

use crate::path::Segment;
use crate::result::{Action, DiffResult, FieldChange, StrategyUsed};

/// A diff that is safe to show. Only [`mask`] builds one.
#[derive(Debug, Clone, PartialEq)]
pub struct MaskedDiff {
    key: ResourceKey,
    action: Action,
    modified: bool,
    strategy: StrategyUsed,
    live: Option<Value>,
    predicted: Option<Value>,
    changes: Vec<FieldChange>,
    notes: Vec<String>,
}

impl MaskedDiff {
    /// The object.
    pub fn key(&self) -> &ResourceKey {
        &self.key
    }
    /// What applying would do.
    pub fn action(&self) -> Action {
        self.action
    }
    /// Whether live and predicted differ.
    pub fn modified(&self) -> bool {
        self.modified
    }
    /// The strategy that ran.
    pub fn strategy(&self) -> &StrategyUsed {
        &self.strategy
    }
    /// Normalized live, masked.
    pub fn live(&self) -> Option<&Value> {
        self.live.as_ref()
    }
    /// Predicted live, masked.
    pub fn predicted(&self) -> Option<&Value> {
        self.predicted.as_ref()
    }
    /// Field changes, masked.
    pub fn changes(&self) -> &[FieldChange] {
        &self.changes
    }
    /// Notes.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// Masks a result (only Secrets carry anything to mask; other kinds pass through).
pub fn mask(result: &DiffResult) -> MaskedDiff {
    let mut masked = MaskedDiff {
        key: result.key.clone(),
        action: result.action,
        modified: result.modified,
        strategy: result.strategy.clone(),
        live: result.normalized_live.clone(),
        predicted: result.predicted_live.clone(),
        changes: result.changes.clone(),
        notes: result.notes.clone(),
    };
    if result.key.group.is_empty() && result.key.kind == "Secret" {
        let mut masker = Masker::default();
        // Argo's order: target, last-applied, live.
        let base = masked.live.as_ref().and_then(last_applied_of);
        if let Some(p) = masked.predicted.as_mut() {
            masker.mask_object(p);
        }
        if let Some(mut b) = base {
            masker.mask_object(&mut b);
        }
        if let Some(l) = masked.live.as_mut() {
            masker.mask_object(l);
        }
        for c in &mut masked.changes {
            masker.mask_change(c);
        }
    }
    masked
}

#[derive(Default)]
struct Masker {
    /// Per data key: value → mask.
    by_key: HashMap<String, HashMap<String, String>>,
}

impl Masker {
    fn replacement(&mut self, key: &str, value: &Value) -> Value {
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let map = self.by_key.entry(key.to_string()).or_default();
        let next = "+".repeat(8 + 4 * map.len());
        Value::String(map.entry(text).or_insert(next).clone())
    }

    fn mask_data(&mut self, obj: &mut Value) {
        if let Some(data) = obj.get_mut("data").and_then(Value::as_object_mut) {
            for (k, v) in data.iter_mut() {
                *v = self.replacement(k, v);
            }
        }
        // stringData (left in a last-applied annotation) holds the decoded value: compare it as
        // the API server stores it, so an unchanged value gets the same mask as in `data`.
        if let Some(data) = obj.get_mut("stringData").and_then(Value::as_object_mut) {
            for (k, v) in data.iter_mut() {
                let text = v
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string());
                let encoded = Value::String(base64::engine::general_purpose::STANDARD.encode(text));
                *v = self.replacement(k, &encoded);
            }
        }
    }

    fn mask_object(&mut self, obj: &mut Value) {
        self.mask_data(obj);
        if let Some(ann) = obj
            .pointer_mut("/metadata/annotations")
            .and_then(Value::as_object_mut)
            && let Some(Value::String(text)) = ann.get_mut(LAST_APPLIED)
        {
            *text = self.mask_annotation(text);
        }
    }

    fn mask_annotation(&mut self, text: &str) -> String {
        match serde_json::from_str::<Value>(text) {
            Ok(mut v) => {
                self.mask_data(&mut v);
                let newline = if text.ends_with('\n') { "\n" } else { "" };
                format!("{}{newline}", serde_json::to_string(&v).unwrap_or_default())
            }
            // Not JSON: show nothing of it rather than risk a value.
            Err(_) => "+".repeat(8),
        }
    }

    fn mask_change(&mut self, c: &mut FieldChange) {
        let segs = &c.path.0;
        let key_of = |i: usize| match segs.get(i) {
            Some(Segment::Key(k)) => Some(k.as_str()),
            _ => None,
        };
        match (key_of(0), key_of(1), key_of(2)) {
            (Some("data" | "stringData"), Some(k), None) => {
                let k = k.to_string();
                for v in [&mut c.live, &mut c.predicted].into_iter().flatten() {
                    *v = self.replacement(&k, v);
                }
            }
            (Some("data" | "stringData"), None, None) => {
                for v in [&mut c.live, &mut c.predicted].into_iter().flatten() {
                    let mut wrapper = serde_json::json!({ "data": v.clone() });
                    self.mask_data(&mut wrapper);
                    *v = wrapper["data"].take();
                }
            }
            (Some("metadata"), Some("annotations"), Some(LAST_APPLIED)) => {
                for v in [&mut c.live, &mut c.predicted].into_iter().flatten() {
                    if let Value::String(s) = v {
                        *s = self.mask_annotation(s);
                    }
                }
            }
            (None, None, None) => {
                for v in [&mut c.live, &mut c.predicted].into_iter().flatten() {
                    self.mask_object(v);
                }
            }
            _ => {}
        }
    }
}

fn last_applied_of(live: &Value) -> Option<Value> {
    let text = live
        .pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()?;
    serde_json::from_str(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::FieldPath;
    use crate::result::{ChangeOp, DiffStrategy};
    use serde_json::json;

    fn secret_result(live_data: Value, predicted_data: Value) -> DiffResult {
        let la = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"password": "b2xk", "user": "YWRtaW4="}});
        let live = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s",
            "annotations": {LAST_APPLIED: format!("{la}\n")}}, "data": live_data});
        let mut predicted = live.clone();
        predicted["data"] = predicted_data;
        DiffResult {
            key: ResourceKey::new("", "Secret", "ns", "s"),
            action: Action::Update,
            modified: true,
            strategy: StrategyUsed {
                strategy: DiffStrategy::ThreeWay,
                fallback_reason: None,
            },
            changes: vec![FieldChange {
                path: FieldPath(vec![
                    Segment::Key("data".into()),
                    Segment::Key("password".into()),
                ]),
                op: ChangeOp::Changed,
                live: live["data"].get("password").cloned(),
                predicted: predicted["data"].get("password").cloned(),
                attribution: None,
            }],
            normalized_live: Some(live),
            predicted_live: Some(predicted),
            notes: vec![],
        }
    }

    #[test]
    fn equal_values_same_mask_changed_values_different_mask() {
        let r = secret_result(
            json!({"password": "b2xk", "user": "YWRtaW4="}),
            json!({"password": "bmV3", "user": "YWRtaW4="}),
        );
        let m = mask(&r);
        let (live, pred) = (m.live().unwrap(), m.predicted().unwrap());
        // Predicted is masked first: its values get the shortest runs.
        assert_eq!(pred["data"]["password"], "++++++++");
        assert_eq!(live["data"]["password"], "++++++++++++");
        assert_eq!(pred["data"]["user"], live["data"]["user"]);
        let text = format!("{m:?}");
        for secret in ["b2xk", "bmV3", "YWRtaW4="] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        // The last-applied annotation's old password equals live's: same mask.
        let ann = live["metadata"]["annotations"][LAST_APPLIED]
            .as_str()
            .unwrap();
        assert!(ann.contains("\"password\":\"++++++++++++\""), "{ann}");
        assert!(ann.ends_with('\n'));
        assert_eq!(m.changes()[0].live, Some(json!("++++++++++++")));
        assert_eq!(m.changes()[0].predicted, Some(json!("++++++++")));
    }

    #[test]
    fn non_secrets_pass_through() {
        let mut r = secret_result(json!({"a": "x"}), json!({"a": "y"}));
        r.key.kind = "ConfigMap".into();
        let m = mask(&r);
        assert_eq!(m.live().unwrap()["data"]["a"], "x");
    }
}
