//! The conditions of an ApplicationSet as Argo CD writes them
//! (`setApplicationSetStatusCondition` and `ApplicationSetStatus.SetConditions`): the
//! evaluated types replaced, the dependent ones derived (`ResourcesUpToDate` true implies
//! `ErrorOccurred` false, an error implies not up to date), unchanged ones keeping their
//! transition time, sorted by type, status, reason, message; and the set's health from them.

use std::collections::BTreeMap;

use plumb_model::application::HealthStatus;
use plumb_model::applicationset::{ApplicationSetCondition, condition};

/// A condition to record: type, status, reason, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cond {
    /// Condition type.
    pub kind: &'static str,
    /// `True` or `False`.
    pub status: &'static str,
    /// Reason.
    pub reason: String,
    /// Message.
    pub message: String,
}

impl Cond {
    /// `ErrorOccurred: True` with `reason` and `message`.
    pub fn error(reason: &str, message: impl Into<String>) -> Self {
        Self {
            kind: condition::ERROR_OCCURRED,
            status: condition::TRUE,
            reason: reason.to_string(),
            message: message.into(),
        }
    }

    /// `ResourcesUpToDate: True`, Argo's message.
    pub fn up_to_date() -> Self {
        Self {
            kind: condition::RESOURCES_UP_TO_DATE,
            status: condition::TRUE,
            reason: condition::reason::APPLICATION_SET_UP_TO_DATE.to_string(),
            message: "All applications have been generated successfully".to_string(),
        }
    }

    fn to_condition(&self, now: &str) -> ApplicationSetCondition {
        ApplicationSetCondition {
            r#type: self.kind.to_string(),
            message: self.message.clone(),
            last_transition_time: Some(now.to_string()),
            status: self.status.to_string(),
            reason: self.reason.clone(),
        }
    }
}

/// The conditions after recording `conds` on `previous`, at time `now` (RFC 3339).
/// `parameters_generated`: whether the generators succeeded; `rolling_sync`: whether the set
/// uses `RollingSync` (otherwise its rollout conditions are removed).
pub fn apply(
    previous: &[ApplicationSetCondition],
    conds: &[Cond],
    parameters_generated: bool,
    rolling_sync: bool,
    now: &str,
) -> Vec<ApplicationSetCondition> {
    let mut evaluated: BTreeMap<&str, bool> = BTreeMap::from([
        (condition::PARAMETERS_GENERATED, true),
        (condition::ERROR_OCCURRED, false),
        (condition::RESOURCES_UP_TO_DATE, false),
        (condition::ROLLOUT_PROGRESSING, !rolling_sync),
        (condition::INVALID_ROLLOUT_CONFIG, !rolling_sync),
    ]);
    let mut new: Vec<Cond> = Vec::new();
    if !conds
        .iter()
        .any(|c| c.kind == condition::PARAMETERS_GENERATED)
    {
        let message = conds
            .iter()
            .rev()
            .find(|c| c.kind == condition::ERROR_OCCURRED)
            .map_or("progressive sync".to_string(), |c| c.message.clone());
        new.push(parameters_condition(parameters_generated, message));
    }
    for c in conds {
        evaluated.insert(c.kind, true);
        new.push(c.clone());
        match (c.kind, c.status) {
            (condition::RESOURCES_UP_TO_DATE, condition::TRUE) => {
                evaluated.insert(condition::ERROR_OCCURRED, true);
                new.push(Cond {
                    kind: condition::ERROR_OCCURRED,
                    status: condition::FALSE,
                    reason: c.reason.clone(),
                    message: c.message.clone(),
                });
            }
            (condition::ERROR_OCCURRED, condition::TRUE) => {
                evaluated.insert(condition::RESOURCES_UP_TO_DATE, true);
                new.push(Cond {
                    kind: condition::RESOURCES_UP_TO_DATE,
                    status: condition::FALSE,
                    reason: condition::reason::ERROR_OCCURRED.to_string(),
                    message: c.message.clone(),
                });
            }
            (condition::ROLLOUT_PROGRESSING | condition::INVALID_ROLLOUT_CONFIG, _)
                if !rolling_sync =>
            {
                evaluated.insert(c.kind, false);
            }
            _ => {}
        }
    }
    let is_evaluated = |t: &str| evaluated.get(t).copied();
    let mut out: Vec<ApplicationSetCondition> = previous
        .iter()
        .filter(|c| is_evaluated(&c.r#type) != Some(true))
        .cloned()
        .map(|mut c| {
            c.last_transition_time
                .get_or_insert_with(|| now.to_string());
            c
        })
        .collect();
    for c in &new {
        if is_evaluated(c.kind) == Some(false) {
            continue;
        }
        match previous.iter().find(|p| p.r#type == c.kind) {
            Some(p) if p.message == c.message && p.reason == c.reason && p.status == c.status => {
                out.push(p.clone());
            }
            _ => out.push(c.to_condition(now)),
        }
    }
    out.sort_by(|a, b| {
        (
            &a.r#type,
            &a.status,
            &a.reason,
            &a.message,
            &a.last_transition_time,
        )
            .cmp(&(
                &b.r#type,
                &b.status,
                &b.reason,
                &b.message,
                &b.last_transition_time,
            ))
    });
    out
}

fn parameters_condition(generated: bool, message: String) -> Cond {
    if generated {
        Cond {
            kind: condition::PARAMETERS_GENERATED,
            status: condition::TRUE,
            reason: condition::reason::PARAMETERS_GENERATED.to_string(),
            message: "All parameters have been generated successfully".to_string(),
        }
    } else {
        Cond {
            kind: condition::PARAMETERS_GENERATED,
            status: condition::FALSE,
            reason: condition::reason::ERROR_OCCURRED.to_string(),
            message,
        }
    }
}

/// Whether two condition lists differ in what Argo compares (type, reason, status, message).
pub fn changed(a: &[ApplicationSetCondition], b: &[ApplicationSetCondition]) -> bool {
    a.len() != b.len()
        || a.iter().zip(b).any(|(x, y)| {
            x.r#type != y.r#type
                || x.reason != y.reason
                || x.status != y.status
                || x.message != y.message
        })
}

/// The set's health from its conditions (Argo's `CalculateHealth`).
pub fn health(conditions: &[ApplicationSetCondition]) -> HealthStatus {
    let status = |s: &str, m: &str| HealthStatus {
        status: Some(s.to_string()),
        message: Some(m.to_string()),
        last_transition_time: None,
    };
    if conditions.is_empty() {
        return status("Unknown", "No status conditions found for ApplicationSet");
    }
    let true_of = |t: &str| {
        conditions
            .iter()
            .find(|c| c.status == condition::TRUE && c.r#type == t)
    };
    if let Some(c) = true_of(condition::ERROR_OCCURRED) {
        return status("Degraded", &c.message);
    }
    if let Some(c) = true_of(condition::ROLLOUT_PROGRESSING) {
        return status("Progressing", &c.message);
    }
    if let Some(c) = true_of(condition::RESOURCES_UP_TO_DATE) {
        return status("Healthy", &c.message);
    }
    status("Unknown", "Unknown status")
}

/// The reason of the `ResourcesUpToDate` condition (`argocd_appset_info`'s
/// `resource_update_status`), `Unknown` without one.
pub fn update_status(conditions: &[ApplicationSetCondition]) -> &str {
    conditions
        .iter()
        .rev()
        .find(|c| c.r#type == condition::RESOURCES_UP_TO_DATE)
        .map_or("Unknown", |c| c.reason.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(cs: &[ApplicationSetCondition]) -> Vec<(String, String, String)> {
        cs.iter()
            .map(|c| (c.r#type.clone(), c.status.clone(), c.reason.clone()))
            .collect()
    }

    #[test]
    fn up_to_date_as_argo_writes_it() {
        let cs = apply(&[], &[Cond::up_to_date()], true, false, "t1");
        assert_eq!(
            types(&cs),
            vec![
                (
                    "ErrorOccurred".into(),
                    "False".into(),
                    "ApplicationSetUpToDate".into()
                ),
                (
                    "ParametersGenerated".into(),
                    "True".into(),
                    "ParametersGenerated".into()
                ),
                (
                    "ResourcesUpToDate".into(),
                    "True".into(),
                    "ApplicationSetUpToDate".into()
                ),
            ]
        );
        assert_eq!(
            cs[0].message,
            "All applications have been generated successfully"
        );
        assert_eq!(health(&cs).status.as_deref(), Some("Healthy"));
        // Unchanged: same transition times, nothing to write.
        let again = apply(&cs, &[Cond::up_to_date()], true, false, "t2");
        assert_eq!(again, cs);
        assert!(!changed(&cs, &again));
    }

    #[test]
    fn generator_error_marks_parameters_not_generated() {
        let ok = apply(&[], &[Cond::up_to_date()], true, false, "t1");
        let err = Cond::error(
            condition::reason::APPLICATION_PARAMS_GENERATION_ERROR,
            "boom",
        );
        let cs = apply(&ok, &[err], false, false, "t2");
        assert_eq!(
            types(&cs),
            vec![
                (
                    "ErrorOccurred".into(),
                    "True".into(),
                    "ApplicationGenerationFromParamsError".into()
                ),
                (
                    "ParametersGenerated".into(),
                    "False".into(),
                    "ErrorOccurred".into()
                ),
                (
                    "ResourcesUpToDate".into(),
                    "False".into(),
                    "ErrorOccurred".into()
                ),
            ]
        );
        assert!(cs.iter().all(|c| c.message == "boom"));
        assert_eq!(cs[0].last_transition_time.as_deref(), Some("t2"));
        assert_eq!(health(&cs).status.as_deref(), Some("Degraded"));
        assert_eq!(update_status(&cs), "ErrorOccurred");
    }

    #[test]
    fn unevaluated_conditions_stay_rollout_ones_go_without_rolling_sync() {
        let previous = vec![
            ApplicationSetCondition {
                r#type: "DeletionHeld".into(),
                status: "True".into(),
                reason: "DeletionHeld".into(),
                message: "held".into(),
                last_transition_time: Some("t0".into()),
            },
            ApplicationSetCondition {
                r#type: "RolloutProgressing".into(),
                status: "True".into(),
                reason: "x".into(),
                message: "y".into(),
                last_transition_time: Some("t0".into()),
            },
        ];
        let cs = apply(&previous, &[Cond::up_to_date()], true, false, "t1");
        assert!(cs.iter().any(|c| c.r#type == "DeletionHeld"));
        assert!(!cs.iter().any(|c| c.r#type == "RolloutProgressing"));
    }
}
