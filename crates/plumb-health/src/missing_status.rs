//! Plumb's rule for custom resources their controller never answered: no `status` at all on an
//! object whose CRD has a status subresource, created longer ago than a grace period, reads
//! `Progressing` ("waiting for <kind> controller to report status") instead of no health.
//!
//! A CRD with a status subresource says a controller owns `status`; the API server drops
//! `status` from creates, so an object without one has never been looked at. Whether the kind has
//! the subresource is not in the object: the caller says it through [`ClusterFacts`] (the
//! controller answers from discovery). Without that knowledge the rule stays silent.

use std::str::FromStr;
use std::time::{Duration, SystemTime};

use plumb_model::duration::parse_duration;
use plumb_model::settings::{MISSING_STATUS, MISSING_STATUS_GRACE_PERIOD, Settings};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::status::{HealthCode, HealthStatus};

/// Kinds whose CRD has a status subresource although their controller writes a status only now
/// and then: Argo CD writes an AppProject's `status` only for project role tokens, so a project
/// without tokens never has one (and a sync wave gated on it would wait for ever).
const STATUS_OPTIONAL: [(&str, &str); 1] = [("argoproj.io", "AppProject")];

/// The default grace period before a status-less custom resource reads `Progressing`.
pub const DEFAULT_MISSING_STATUS_GRACE: Duration = Duration::from_secs(120);

/// What the health engine may know about the cluster an object lives in, beyond the object.
pub trait ClusterFacts {
    /// Whether the kind has a `status` subresource; `None` when the cluster does not serve it or
    /// it is not known.
    fn status_subresource(&self, group: &str, kind: &str) -> Option<bool>;

    /// The current time.
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// What to do with a custom resource that never got a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MissingStatus {
    /// `Progressing` once the grace period is over.
    #[default]
    Progressing,
    /// No health, as Argo CD does.
    None,
}

impl FromStr for MissingStatus {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "progressing" => Ok(MissingStatus::Progressing),
            "none" => Ok(MissingStatus::None),
            other => Err(Error::InvalidSetting {
                key: MISSING_STATUS.to_string(),
                value: other.to_string(),
                expected: "progressing or none",
            }),
        }
    }
}

/// The rule with its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MissingStatusRule {
    pub(crate) mode: MissingStatus,
    pub(crate) grace: Duration,
}

impl Default for MissingStatusRule {
    fn default() -> Self {
        Self {
            mode: MissingStatus::Progressing,
            grace: DEFAULT_MISSING_STATUS_GRACE,
        }
    }
}

impl MissingStatusRule {
    /// Reads `plumb.health.missingStatus` and `plumb.health.missingStatusGracePeriod`.
    pub(crate) fn from_settings(settings: &Settings) -> Result<Self> {
        let mut rule = Self::default();
        if let Some(mode) = settings.get(MISSING_STATUS) {
            rule.mode = mode.parse()?;
        }
        if let Some(grace) = settings.get(MISSING_STATUS_GRACE_PERIOD) {
            rule.grace = parse_duration(grace).ok_or_else(|| Error::InvalidSetting {
                key: MISSING_STATUS_GRACE_PERIOD.to_string(),
                value: grace.to_string(),
                expected: "a duration such as 90s, 2m or 1h30m",
            })?;
        }
        Ok(rule)
    }

    /// `Progressing` for an object that qualifies, `None` otherwise.
    pub(crate) fn health(
        &self,
        obj: &Value,
        group: &str,
        kind: &str,
        facts: &dyn ClusterFacts,
    ) -> Option<HealthStatus> {
        self.health_after(obj, group, kind, facts, self.grace)
    }

    /// The rule as a sync wave gate applies it: from the moment the object exists, without the
    /// grace period. The grace period keeps a just-created object from flashing `Progressing` in
    /// the Application's health; a wave that depends on it must wait for its controller anyway.
    pub(crate) fn health_for_wave(
        &self,
        obj: &Value,
        group: &str,
        kind: &str,
        facts: &dyn ClusterFacts,
    ) -> Option<HealthStatus> {
        self.health_after(obj, group, kind, facts, Duration::ZERO)
    }

    fn health_after(
        &self,
        obj: &Value,
        group: &str,
        kind: &str,
        facts: &dyn ClusterFacts,
        grace: Duration,
    ) -> Option<HealthStatus> {
        if self.mode == MissingStatus::None
            || has_status(obj)
            || STATUS_OPTIONAL.contains(&(group, kind))
        {
            return None;
        }
        if facts.status_subresource(group, kind) != Some(true) {
            return None;
        }
        let created = obj
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())?;
        let now = jiff::Timestamp::try_from(facts.now()).ok()?;
        let age = now.duration_since(created);
        if age.is_negative() || age.unsigned_abs() < grace {
            return None;
        }
        Some(HealthStatus::new(
            HealthCode::Progressing,
            format!("generic: waiting for {kind} controller to report status"),
        ))
    }
}

/// Whether the object has a status with anything in it (`status: {}` counts as none).
fn has_status(obj: &Value) -> bool {
    match obj.get("status") {
        None | Some(Value::Null) => false,
        Some(Value::Object(m)) => !m.is_empty(),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Facts {
        subresource: Option<bool>,
        now: &'static str,
    }

    impl ClusterFacts for Facts {
        fn status_subresource(&self, _: &str, _: &str) -> Option<bool> {
            self.subresource
        }
        fn now(&self) -> SystemTime {
            let t: jiff::Timestamp = self.now.parse().unwrap();
            SystemTime::from(t)
        }
    }

    fn widget(status: Option<Value>) -> Value {
        let mut w = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "shop", "generation": 1,
                         "creationTimestamp": "2026-12-01T10:00:00Z"},
            "spec": {"size": 3}
        });
        if let Some(s) = status {
            w["status"] = s;
        }
        w
    }

    const LATE: Facts = Facts {
        subresource: Some(true),
        now: "2026-12-01T10:02:00Z",
    };

    #[test]
    fn status_less_after_the_grace_period_is_progressing() {
        let h = MissingStatusRule::default()
            .health(&widget(None), "example.com", "Widget", &LATE)
            .unwrap();
        assert_eq!(h.code, HealthCode::Progressing);
        assert_eq!(
            h.message,
            "generic: waiting for Widget controller to report status"
        );
        // An empty status is no status.
        let empty = widget(Some(json!({})));
        assert!(
            MissingStatusRule::default()
                .health(&empty, "example.com", "Widget", &LATE)
                .is_some()
        );
    }

    #[test]
    fn silent_within_the_grace_period_with_a_status_or_without_the_subresource() {
        let rule = MissingStatusRule::default();
        let early = Facts {
            subresource: Some(true),
            now: "2026-12-01T10:01:59Z",
        };
        assert_eq!(
            rule.health(&widget(None), "example.com", "Widget", &early),
            None
        );
        let with_status = widget(Some(json!({"phase": "Active"})));
        assert_eq!(
            rule.health(&with_status, "example.com", "Widget", &LATE),
            None
        );
        for subresource in [Some(false), None] {
            let facts = Facts {
                subresource,
                now: LATE.now,
            };
            assert_eq!(
                rule.health(&widget(None), "example.com", "Widget", &facts),
                None
            );
        }
        // Created in the future (clock skew): no verdict rather than a wrong one.
        let skewed = Facts {
            subresource: Some(true),
            now: "2026-12-01T09:00:00Z",
        };
        assert_eq!(
            rule.health(&widget(None), "example.com", "Widget", &skewed),
            None
        );
    }

    #[test]
    fn a_wave_gate_waits_from_the_start_unless_the_rule_is_off() {
        let rule = MissingStatusRule::default();
        let just_created = Facts {
            subresource: Some(true),
            now: "2026-12-01T10:00:01Z",
        };
        assert_eq!(
            rule.health(&widget(None), "example.com", "Widget", &just_created),
            None
        );
        let h = rule
            .health_for_wave(&widget(None), "example.com", "Widget", &just_created)
            .unwrap();
        assert_eq!(h.code, HealthCode::Progressing);
        assert_eq!(
            h.message,
            "generic: waiting for Widget controller to report status"
        );
        // A status, no status subresource, or the rule turned off: no verdict.
        let with_status = widget(Some(json!({"phase": "Active"})));
        assert_eq!(
            rule.health_for_wave(&with_status, "example.com", "Widget", &just_created),
            None
        );
        let project = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "team-a", "creationTimestamp": "2026-12-01T10:00:00Z"},
            "spec": {"sourceRepos": ["*"]}});
        assert_eq!(
            rule.health_for_wave(&project, "argoproj.io", "AppProject", &just_created),
            None,
            "Argo CD gives an AppProject a status only for role tokens"
        );
        assert_eq!(
            rule.health(&project, "argoproj.io", "AppProject", &LATE),
            None
        );
        let no_subresource = Facts {
            subresource: Some(false),
            now: just_created.now,
        };
        assert_eq!(
            rule.health_for_wave(&widget(None), "example.com", "Widget", &no_subresource),
            None
        );
        let off = MissingStatusRule {
            mode: MissingStatus::None,
            ..rule
        };
        assert_eq!(
            off.health_for_wave(&widget(None), "example.com", "Widget", &just_created),
            None
        );
    }

    #[test]
    fn settings_choose_the_mode_and_grace_period() {
        let settings = |pairs: &[(&str, &str)]| {
            Settings::from_data(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        let off = MissingStatusRule::from_settings(&settings(&[(MISSING_STATUS, "none")])).unwrap();
        assert_eq!(
            off.health(&widget(None), "example.com", "Widget", &LATE),
            None
        );

        let short =
            MissingStatusRule::from_settings(&settings(&[(MISSING_STATUS_GRACE_PERIOD, "10s")]))
                .unwrap();
        assert_eq!(short.grace, Duration::from_secs(10));
        let soon = Facts {
            subresource: Some(true),
            now: "2026-12-01T10:00:10Z",
        };
        assert!(
            short
                .health(&widget(None), "example.com", "Widget", &soon)
                .is_some()
        );

        let bad = MissingStatusRule::from_settings(&settings(&[(MISSING_STATUS, "degraded")]))
            .unwrap_err();
        assert!(bad.to_string().contains(MISSING_STATUS), "{bad}");
        let bad =
            MissingStatusRule::from_settings(&settings(&[(MISSING_STATUS_GRACE_PERIOD, "soon")]))
                .unwrap_err();
        assert!(bad.to_string().contains("soon"), "{bad}");
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("45"), Some(Duration::from_secs(45)));
        assert_eq!(parse_duration("0s"), Some(Duration::ZERO));
        for bad in ["", "m", "2x", "-1s", "1.5m", "s2"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
