//! Onboarding repositories, credential templates and certificates as Argo CD stores them: what
//! the API server's `RepositoryService`, `RepoCredsService` and `CertificateService` do, and what
//! `plumb repo`, `plumb repocreds` and `plumb cert` do in core mode.
//!
//! - [`fields`]: Argo's fields, one table: request in, Secret data out and in, masked answer out.
//! - [`store`]: the `repository` / `repo-creds` Secrets (Argo's names, labels, annotation).
//! - [`service`]: create (with the connection check and `upsert`), update, list, delete.
//! - [`connection`]: the connection check through plumb-source.
//! - [`certs`]: `argocd-ssh-known-hosts-cm` and `argocd-tls-certs-cm`.
//!
//! Credentials never leave through an answer, an error or a log: answers are built by
//! [`RepoSpec::sanitized`] only, and errors name fields, never values.

pub mod certs;
pub mod connection;
pub mod fields;
mod pem_check;
pub mod service;
pub mod store;

pub use certs::{CertAdmin, Selector};
pub use fields::{RepoSpec, Role, secret_name};
pub use service::{Described, RepoAdmin};
pub use store::Stored;

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
