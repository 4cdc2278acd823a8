//! The deletion brake (beyond Argo CD): a reconcile that would delete too many of a set's
//! Applications, or any while a generator fails, deletes none of them until someone confirms.
//!
//! Argo's controller deletes every Application its generators stop producing. When the output
//! shrinks by mistake (an SCM outage, a typo in a path glob, a removed cluster label), that
//! deletes the Applications and everything they deployed. Plumb holds such deletions back:
//! - while any generator or template failed, nothing is deleted (not even when confirmed);
//! - when one reconcile would delete more than a share of the set's Applications (default:
//!   more than half and more than 2), nothing is deleted;
//! - the set then carries the condition `DeletionHeld` naming the Applications and why;
//! - `plumb appset confirm-deletion NAME` writes the annotation `plumb.dev/confirm-deletion`
//!   (`a,b` or `all`), which lets those named go; the controller removes it after acting.
//!
//! [`decide`] is pure: the controller passes what it would delete and writes what comes back.

mod settings;

use plumb_model::applicationset::{ApplicationSet, ApplicationSetCondition, condition};

pub use settings::{
    BRAKE_ANNOTATION, MIN_KEY, SHARE_KEY, Settings, exceeds, parse_share, share_rule_on,
};

/// Annotation on an ApplicationSet that lets held deletions go: comma-separated Application
/// names, or `all` (everything held now). While a generator fails it lets nothing go.
pub const CONFIRM_ANNOTATION: &str = "plumb.dev/confirm-deletion";
/// The value of [`CONFIRM_ANNOTATION`] that confirms every held deletion.
pub const CONFIRM_ALL: &str = "all";
/// Reason of the `DeletionHeld: False` condition once nothing is held any more.
pub const REASON_NONE_HELD: &str = "NoDeletionHeld";
/// Message of the `DeletionHeld: False` condition.
pub const MESSAGE_NONE_HELD: &str = "No deletions are held";
/// Names listed in the condition message at most (the rest are counted).
const MAX_NAMES: usize = 100;

/// What the controller would delete in one reconcile.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The ApplicationSet (its name and annotations).
    pub set: &'a ApplicationSet,
    /// How many Applications the set has in the cluster now.
    pub current: usize,
    /// The Applications the reconcile would delete (any order).
    pub candidates: &'a [String],
    /// Generator and template errors of this reconcile, each naming the generator
    /// (`generator 2 (git) failed: ...`); any holds every deletion.
    pub generator_errors: &'a [String],
    /// The controller's thresholds.
    pub settings: &'a Settings,
}

/// Why deletions were held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// A generator or template failed: its output is not to be trusted.
    GeneratorFailed,
    /// More than the share and the minimum of the set's Applications.
    TooMany,
    /// A brake setting could not be read (fail closed), with the reason.
    BadSetting(String),
}

/// What to do with the candidates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    /// Delete these now (sorted).
    pub delete: Vec<String>,
    /// Keep these (sorted).
    pub held: Vec<String>,
    /// Why anything was held (`None`: the brake let everything through).
    pub hold: Option<Hold>,
    /// `Some`: record this `DeletionHeld` condition: `True` naming what is held, or `False`
    /// (`No deletions are held`) when the set's condition was `True` and nothing is held now;
    /// `None`: leave the conditions as they are (nothing held, before or now).
    pub condition: Option<ApplicationSetCondition>,
    /// Remove [`CONFIRM_ANNOTATION`] from the set, if it still has this value (a confirmation
    /// is used once, so that it never lets later, unseen deletions through).
    pub consume_confirmation: Option<String>,
}

/// Decides which of the candidates to delete.
pub fn decide(input: Input<'_>) -> Decision {
    let mut candidates = input.candidates.to_vec();
    candidates.sort();
    candidates.dedup();
    let confirmation = input
        .set
        .metadata
        .annotation(CONFIRM_ANNOTATION)
        .map(str::to_string);
    let Some(hold) = hold_reason(&input, candidates.len()) else {
        return Decision {
            delete: candidates,
            condition: released(input.set),
            consume_confirmation: confirmation,
            ..Decision::default()
        };
    };
    // A generator error never deletes, confirmed or not: what is missing from the output may
    // be the failure's doing. The confirmation is used up all the same, so that it does not
    // let later deletions through that nobody has seen.
    let confirmed = if hold == Hold::GeneratorFailed {
        Confirmed::Nothing
    } else {
        Confirmed::parse(confirmation.as_deref())
    };
    let (delete, held): (Vec<String>, Vec<String>) = candidates
        .into_iter()
        .partition(|name| confirmed.covers(name));
    let condition = if held.is_empty() {
        released(input.set)
    } else {
        Some(held_condition(&input, &hold, &held))
    };
    Decision {
        delete,
        held,
        hold: Some(hold),
        condition,
        consume_confirmation: confirmation,
    }
}

/// `DeletionHeld: False` when the set's condition says deletions are held: they no longer are.
fn released(set: &ApplicationSet) -> Option<ApplicationSetCondition> {
    let held = set
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.r#type == condition::DELETION_HELD && c.status == condition::TRUE);
    held.then(|| ApplicationSetCondition {
        r#type: condition::DELETION_HELD.to_string(),
        message: MESSAGE_NONE_HELD.to_string(),
        last_transition_time: None,
        status: condition::FALSE.to_string(),
        reason: REASON_NONE_HELD.to_string(),
    })
}

fn hold_reason(input: &Input<'_>, count: usize) -> Option<Hold> {
    if count == 0 {
        return None;
    }
    if !input.generator_errors.is_empty() {
        return Some(Hold::GeneratorFailed);
    }
    if let Some(why) = &input.settings.invalid {
        return Some(Hold::BadSetting(why.clone()));
    }
    match share_rule_on(input.set) {
        Err(why) => Some(Hold::BadSetting(why)),
        Ok(false) => None,
        Ok(true) => exceeds(input.settings, count, input.current).then_some(Hold::TooMany),
    }
}

/// What a confirmation lets go.
enum Confirmed {
    Nothing,
    All,
    Names(Vec<String>),
}

impl Confirmed {
    /// Comma-separated names, or `all` for every candidate.
    fn parse(value: Option<&str>) -> Self {
        let Some(value) = value.map(str::trim) else {
            return Self::Nothing;
        };
        if value == CONFIRM_ALL {
            return Self::All;
        }
        Self::Names(
            value
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect(),
        )
    }

    fn covers(&self, name: &str) -> bool {
        match self {
            Self::Nothing => false,
            Self::All => true,
            Self::Names(names) => names.iter().any(|n| n == name),
        }
    }
}

fn held_condition(input: &Input<'_>, hold: &Hold, held: &[String]) -> ApplicationSetCondition {
    let why = match hold {
        Hold::GeneratorFailed => input.generator_errors.join("; "),
        Hold::TooMany => format!(
            "the deletion brake holds deletions of more than {} and more than {} of an ApplicationSet's Applications",
            input.settings.share_percent(),
            input.settings.min
        ),
        Hold::BadSetting(why) => format!("{why}, so every deletion is held"),
    };
    let mut names = held
        .iter()
        .take(MAX_NAMES)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if held.len() > MAX_NAMES {
        names.push_str(&format!(" and {} more", held.len() - MAX_NAMES));
    }
    let next = if *hold == Hold::GeneratorFailed {
        "nothing is deleted while a generator fails".to_string()
    } else {
        format!(
            "confirm with `plumb appset confirm-deletion {}` or the annotation {CONFIRM_ANNOTATION}",
            input.set.name()
        )
    };
    let message = format!(
        "{why}; would delete {} of {} Applications: {names}; {next}",
        held.len(),
        input.current.max(held.len()),
    );
    ApplicationSetCondition {
        r#type: condition::DELETION_HELD.to_string(),
        message,
        last_transition_time: None,
        status: condition::TRUE.to_string(),
        reason: condition::reason::DELETION_HELD.to_string(),
    }
}

#[cfg(test)]
mod tests;
