//! The one error of onboarding repositories and certificates.

/// What went wrong onboarding a repository or certificate. Messages name the field, never a
/// credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A field of the request is refused.
    #[error("{field}: {detail}")]
    Invalid {
        /// The field (Argo's JSON name).
        field: String,
        /// Why.
        detail: String,
    },
    /// The request is refused as a whole (Argo's InvalidArgument messages).
    #[error("{0}")]
    InvalidRequest(String),
    /// The object exists already.
    #[error("{0}")]
    AlreadyExists(String),
    /// No such object.
    #[error("{0}")]
    NotFound(String),
    /// The repository did not answer as it should (Argo's connection-check message).
    #[error("{0}")]
    Connection(String),
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
