//! What a diff of one object says: [`DiffResult`] and its parts.

use plumb_model::ResourceKey;
use serde_json::Value;

use crate::path::FieldPath;

/// How the predicted live object was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DiffStrategy {
    /// The API server's server-side-apply dry-run of the desired object.
    ServerSide,
    /// Offline: desired merged onto live with the last-applied configuration as the base.
    ThreeWay,
}

impl DiffStrategy {
    /// `server-side` or `three-way`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ServerSide => "server-side",
            Self::ThreeWay => "three-way",
        }
    }
}

/// Which strategy ran, and why it is not the preferred one when it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyUsed {
    /// The strategy that produced the result.
    pub strategy: DiffStrategy,
    /// Set when the strategy could not run as intended (no last-applied annotation, ...).
    pub fallback_reason: Option<String>,
}

/// What applying the desired state would do to the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Action {
    /// The object does not exist yet.
    Create,
    /// It exists and differs.
    Update,
    /// It exists and matches.
    None,
    /// It exists but is not desired (a prune candidate; not a difference by itself).
    Extra,
}

impl Action {
    /// Lower-case name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::None => "none",
            Self::Extra => "extra",
        }
    }
}

/// How one field differs, seen from live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ChangeOp {
    /// Desired has it and live does not (it was removed from live, or is new).
    Added,
    /// Live has it and desired does not.
    Removed,
    /// Both have it with different values.
    Changed,
}

impl ChangeOp {
    /// Lower-case name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Changed => "changed",
        }
    }
}

/// Who last wrote a field, from the live object's managedFields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribution {
    /// Field manager.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// RFC 3339 time of the write.
    pub time: String,
    /// False when the field is gone from live and the manager is that of its nearest remaining
    /// parent.
    pub exact: bool,
}

/// One differing field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// Where.
    pub path: FieldPath,
    /// How.
    pub op: ChangeOp,
    /// The live value (normalized), if any.
    pub live: Option<Value>,
    /// The predicted value, if any.
    pub predicted: Option<Value>,
    /// Who last wrote it in live (empty when attribution is off or nothing is recorded).
    pub attribution: Option<Attribution>,
}

/// The diff of one object. Holds unmasked values: render it only through
/// [`crate::mask::mask`], which is what every renderer takes.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffResult {
    /// The object.
    pub key: ResourceKey,
    /// What applying would do.
    pub action: Action,
    /// Whether normalized live and predicted live differ (a new object counts as modified).
    pub modified: bool,
    /// The strategy that ran.
    pub strategy: StrategyUsed,
    /// Live after normalization and ignore rules (`None` when the object does not exist).
    pub normalized_live: Option<Value>,
    /// What live would be after applying desired (`None` for an extra object).
    pub predicted_live: Option<Value>,
    /// The differing fields, in path order.
    pub changes: Vec<FieldChange>,
    /// Things the user should know: skipped jq expressions, guard-rail refusals.
    pub notes: Vec<String>,
}
