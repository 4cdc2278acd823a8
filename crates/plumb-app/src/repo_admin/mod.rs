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
mod error;
pub mod fields;
mod pem_check;
pub mod service;
pub mod store;

pub use certs::{CertAdmin, Selector};
pub use error::Error;
pub use fields::{RepoSpec, Role, secret_name};
pub use service::{Described, RepoAdmin};
pub use store::Stored;
