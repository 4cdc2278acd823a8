//! Errors of the ApplicationSet operations.

/// Why an operation failed; each message names the object.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The ApplicationSet is not acceptable (Argo's messages where Argo has one).
    #[error("{0}")]
    Invalid(String),
    /// It does not exist.
    #[error("{0}")]
    NotFound(String),
    /// It kept changing while being written.
    #[error("{0}")]
    Conflict(String),
    /// The Kubernetes API failed.
    #[error("{context}: {source}")]
    Kube {
        /// What was being done.
        context: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
}

impl ApiError {
    pub(crate) fn kube(context: impl Into<String>, source: kube::Error) -> Self {
        Self::Kube {
            context: context.into(),
            source,
        }
    }
}
