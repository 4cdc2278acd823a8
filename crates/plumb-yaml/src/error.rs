//! The crate's error type.

/// Errors from reading YAML or JSON documents.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A YAML document could not be read (syntax error, duplicate key, alias limit...).
    #[error("{source_name}:{line}: {message}")]
    Yaml {
        /// The file (or other source) the text came from.
        source_name: String,
        /// 1-based line in the whole stream where the problem is (or where the document starts
        /// when the parser gave no position).
        line: usize,
        /// What the YAML reader said, without its position.
        message: String,
    },
    /// A JSON document could not be read (syntax error or duplicate key).
    #[error("{source_name}:{line}: invalid JSON")]
    Json {
        /// The file (or other source) the text came from.
        source_name: String,
        /// 1-based line where the problem is.
        line: usize,
        /// The JSON reader's error.
        #[source]
        source: serde_json::Error,
    },
    /// A document nests mappings and sequences deeper than [`crate::MAX_DEPTH`] (the same bound
    /// for YAML and JSON).
    #[error("{source_name}:{line}: document nests deeper than {limit} levels")]
    TooDeep {
        /// The file (or other source) the text came from.
        source_name: String,
        /// 1-based line where the document starts.
        line: usize,
        /// The bound.
        limit: usize,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
