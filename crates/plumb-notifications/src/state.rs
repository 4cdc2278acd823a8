//! What was already sent, kept on the object in the `notified.notifications.argoproj.io`
//! annotation exactly as notifications-engine writes it (`pkg/controller/state.go`): a JSON map
//! from `[oncePer:]trigger:conditionKey:service:recipient` to the Unix time it was sent, at most
//! 100 entries (the oldest dropped), Go's `json.Marshal` encoding (sorted keys, `<`, `>`, `&`
//! escaped).

use std::collections::BTreeMap;

use crate::subscriptions::Destination;
use crate::triggers::ConditionResult;

/// The annotation.
pub const NOTIFIED_ANNOTATION: &str = "notified.notifications.argoproj.io";
/// notifications-engine's `notifiedHistoryMaxSize`.
pub const MAX_ENTRIES: usize = 100;

/// notifications-engine's `StateItemKey` (without self-service namespaces).
pub fn state_key(trigger: &str, result: &ConditionResult, dest: &Destination) -> String {
    let key = format!(
        "{trigger}:{}:{}:{}",
        result.key, dest.service, dest.recipient
    );
    if result.once_per.is_empty() {
        key
    } else {
        format!("{}:{key}", result.once_per)
    }
}

/// The notified state of one object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State(pub BTreeMap<String, i64>);

impl State {
    /// From the annotation's value; an unreadable value is an empty state, as Argo reads it.
    pub fn parse(value: Option<&str>) -> State {
        value
            .filter(|v| !v.is_empty())
            .and_then(|v| serde_json::from_str(v).ok())
            .map(State)
            .unwrap_or_default()
    }

    /// notifications-engine's `SetAlreadyNotified`: records (or forgets) a delivery; true when
    /// the state changed (for `notified`: the notification is due).
    pub fn set_notified(
        &mut self,
        trigger: &str,
        result: &ConditionResult,
        dest: &Destination,
        notified: bool,
        now: i64,
    ) -> bool {
        let key = state_key(trigger, result, dest);
        if self.0.contains_key(&key) == notified {
            return false;
        }
        if notified {
            self.0.insert(key, now);
        } else {
            if !result.once_per.is_empty() {
                return false;
            }
            self.0.remove(&key);
        }
        true
    }

    /// Forgets a delivery that failed, `oncePer` or not, so the next pass retries it.
    /// notifications-engine keeps the entry of a failed `oncePer` condition (its
    /// `SetAlreadyNotified(false)` returns early), which loses that notification for good.
    pub fn forget(&mut self, trigger: &str, result: &ConditionResult, dest: &Destination) {
        self.0.remove(&state_key(trigger, result, dest));
    }

    /// The annotation's new value (`None`: remove it), after keeping the newest 100 entries.
    pub fn persist(&mut self) -> Option<String> {
        if self.0.len() > MAX_ENTRIES {
            let mut by_age: Vec<(i64, String)> =
                self.0.iter().map(|(k, v)| (*v, k.clone())).collect();
            by_age.sort();
            for (_, k) in by_age.iter().take(self.0.len() - MAX_ENTRIES) {
                self.0.remove(k);
            }
        }
        if self.0.is_empty() {
            return None;
        }
        let json = serde_json::to_string(&self.0).unwrap_or_default();
        Some(go_html_escape(&json))
    }
}

/// Go's `encoding/json` HTML-safe escaping of an already encoded document.
fn go_html_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(once_per: &str) -> ConditionResult {
        ConditionResult {
            key: "[0].abc".into(),
            once_per: once_per.into(),
            triggered: true,
            ..ConditionResult::default()
        }
    }

    #[test]
    fn keys_and_encoding_as_notifications_engine() {
        let dest = Destination {
            service: "hook".into(),
            recipient: "r".into(),
        };
        let mut s = State::default();
        assert!(s.set_notified("on-x", &result("<nil>"), &dest, true, 100));
        assert!(!s.set_notified("on-x", &result("<nil>"), &dest, true, 200));
        assert!(s.set_notified("on-y", &result(""), &dest, true, 100));
        assert_eq!(
            s.persist().unwrap(),
            r#"{"\u003cnil\u003e:on-x:[0].abc:hook:r":100,"on-y:[0].abc:hook:r":100}"#
        );
        // Untriggered: forgotten unless oncePer.
        assert!(!s.set_notified("on-x", &result("<nil>"), &dest, false, 0));
        assert!(s.set_notified("on-y", &result(""), &dest, false, 0));
        let back = State::parse(s.persist().as_deref());
        assert_eq!(back.0.len(), 1);
        assert_eq!(State::parse(Some("{garbage")), State::default());
    }

    #[test]
    fn keeps_the_newest_hundred() {
        let mut s = State((0..150).map(|i| (format!("k{i:03}"), i)).collect());
        let v = s.persist().unwrap();
        assert_eq!(s.0.len(), MAX_ENTRIES);
        assert!(!v.contains("k049") && v.contains("k050"));
        assert_eq!(State::default().persist(), None);
    }
}
