//! The crate's error type.

use plumb_model::ResourceKey;

use crate::ignore::SensitiveFinding;

/// Errors from pairing, rule compilation and diffing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two desired objects have the same group, kind, namespace and name.
    #[error("{key}: defined twice, in {first} and in {second}")]
    DuplicateDesired {
        /// The object's key.
        key: Box<ResourceKey>,
        /// Where the first definition came from.
        first: String,
        /// Where the second definition came from.
        second: String,
    },
    /// An object has no kind, apiVersion or name.
    #[error("{source_name}: object has no {missing}")]
    UnidentifiedObject {
        /// Where the object came from.
        source_name: String,
        /// The missing field (`kind`, `apiVersion`, `metadata.name`).
        missing: &'static str,
    },
    /// An ignore rule is malformed (bad pointer, jq syntax).
    #[error("ignore rule {origin}: {reason}")]
    BadIgnoreRule {
        /// Where the rule came from.
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An ignore rule would hide a sensitive field and sensitive ignores are not allowed.
    #[error(
        "ignore rule {}: {} would hide {} {}; set plumb.ignoreDifferences.allowSensitive: \"true\" or pass --allow-sensitive-ignores to allow it",
        .0.origin, .0.expression, .0.kind, .0.field
    )]
    SensitiveIgnoreRule(Box<SensitiveFinding>),
    /// A settings key holds a value that does not parse.
    #[error("settings key {key}: {reason}")]
    BadSetting {
        /// The key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The server-side strategy was asked for a pair that has no live object.
    #[error("{key}: server-side diff needs a live object (a new object is diffed offline)")]
    MissingLive {
        /// The object's key.
        key: ResourceKey,
    },
    /// Neither side of a pair holds an object.
    #[error("{key}: nothing to compare")]
    EmptyPair {
        /// The object's key.
        key: ResourceKey,
    },
    /// Running or talking to the external diff program failed.
    #[error("external diff {program:?}")]
    ExternalDiff {
        /// The program from `KUBECTL_EXTERNAL_DIFF`.
        program: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
