//! The one error type of plumb-kube.

use std::path::PathBuf;

use plumb_model::{GroupKind, ResourceKey};

/// Errors from the Kubernetes layer. Each says what was being done and to which object; the cause
/// is in the source chain.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the kubeconfig file failed.
    #[error("reading kubeconfig {}", path.display())]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// Cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// No usable configuration was found (no kubeconfig, not in a cluster).
    #[error("inferring the Kubernetes client configuration (kubeconfig or in-cluster)")]
    InferConfig(#[source] kube::config::InferConfigError),
    /// Building the HTTP client from a valid configuration failed.
    #[error("building the Kubernetes client")]
    Client(#[source] kube::Error),
    /// API discovery failed.
    #[error("discovering the API server's resources")]
    Discovery(#[source] kube::Error),
    /// The API server does not serve this group/kind (or version).
    #[error("{gk}: kind not served by the API server{}", version.as_deref().map(|v| format!(" in version {v}")).unwrap_or_default())]
    UnknownKind {
        /// The kind asked for.
        gk: GroupKind,
        /// The version asked for, if any.
        version: Option<String>,
    },
    /// The object has no `apiVersion`, `kind` or `metadata.name`.
    #[error("{key}: object lacks {field}")]
    MissingField {
        /// The object (as far as it could be read).
        key: ResourceKey,
        /// The missing field's path.
        field: &'static str,
    },
    /// A namespaced object has no namespace, or a cluster-scoped one has one.
    #[error("{key}: {reason}")]
    Scope {
        /// The object.
        key: ResourceKey,
        /// What is wrong.
        reason: &'static str,
    },
    /// A request about one object failed (apply, dry-run, delete, get, field-manager migration).
    #[error("{key}: {action} failed")]
    Request {
        /// The object.
        key: ResourceKey,
        /// What was being done (`server-side apply`, `server-side dry-run apply`, `delete`, ...).
        action: &'static str,
        /// Cause (the API server's status is inside).
        #[source]
        source: Box<kube::Error>,
    },
    /// A watch of one kind failed; the live cache retries it with backoff.
    #[error("{gk}: watching failed (retrying)")]
    Watch {
        /// The kind watched.
        gk: GroupKind,
        /// Cause.
        #[source]
        source: Box<kube::runtime::watcher::Error>,
    },
}

/// Result with plumb-kube's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The HTTP status code the API server answered with, when the failure was an API response.
    pub fn status_code(&self) -> Option<u16> {
        match self {
            Self::Request { source, .. } => match source.as_ref() {
                kube::Error::Api(status) => Some(status.code),
                _ => None,
            },
            _ => None,
        }
    }

    /// The API server's own message (`namespaces "shop" not found`), when the failure was an
    /// API response: what kubectl prints, without the request context around it.
    pub fn api_message(&self) -> Option<&str> {
        match self {
            Self::Request { source, .. } => match source.as_ref() {
                kube::Error::Api(status) if !status.message.is_empty() => {
                    Some(status.message.as_str())
                }
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_responses_expose_code_and_message() {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 404, "reason": "NotFound",
            "message": "namespaces \"shop\" not found"
        }))
        .expect("status");
        let e = Error::Request {
            key: ResourceKey::new("", "ConfigMap", "shop", "cfg"),
            action: "server-side apply",
            source: Box::new(kube::Error::Api(Box::new(status))),
        };
        assert_eq!(e.status_code(), Some(404));
        assert_eq!(e.api_message(), Some("namespaces \"shop\" not found"));
        let other = Error::UnknownKind {
            gk: GroupKind::new("example.com", "Widget"),
            version: None,
        };
        assert_eq!(other.api_message(), None);
    }
}
