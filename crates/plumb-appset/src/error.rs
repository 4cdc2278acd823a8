//! Errors of generators.

/// Why a generator produced no parameters. A generator error never deletes anything: the
/// controller keeps every Application it has and reports the error as a condition.
#[derive(Debug, thiserror::Error)]
pub enum GeneratorError {
    /// The generator's configuration is wrong (the message names the field).
    #[error("{0}")]
    Invalid(String),
    /// A Secret or ConfigMap the generator names could not be read.
    #[error("{what}: {message}")]
    Reference {
        /// What was read, e.g. `secret "gitea-token" key "token"`.
        what: String,
        /// Why it failed (never the value).
        message: String,
    },
    /// A source the generator reads failed (Git, a forge, a plugin service).
    #[error("{0}")]
    Source(String),
    /// A bound of [`crate::Limits`] was exceeded.
    #[error("{0}")]
    Limit(String),
}
