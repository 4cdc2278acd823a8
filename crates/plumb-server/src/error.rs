//! Errors, and how the API reports them: Argo CD's gateway error body `{"error", "code",
//! "message"}` with the gRPC code, under the HTTP status grpc-gateway maps it to.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The gRPC status code of an error answer, for the request metrics.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GrpcCode(pub(crate) i32);

/// The result of this crate's functions.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error of the server (starting it, or answering a request).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object does not exist (gRPC NotFound).
    #[error("{0}")]
    NotFound(String),
    /// The request is malformed (gRPC InvalidArgument).
    #[error("{0}")]
    InvalidArgument(String),
    /// The request is refused in the object's current state (gRPC FailedPrecondition).
    #[error("{0}")]
    FailedPrecondition(String),
    /// The object exists already (gRPC AlreadyExists).
    #[error("{0}")]
    AlreadyExists(String),
    /// The object changed since the version the request was based on (gRPC Aborted).
    #[error("{0}")]
    Conflict(String),
    /// No valid credentials (gRPC Unauthenticated).
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller may not do this (gRPC PermissionDenied).
    #[error("{0}")]
    PermissionDenied(String),
    /// The Kubernetes API failed.
    #[error("{context}: {source}")]
    Kube {
        /// What was being done.
        context: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Comparing the Application failed.
    #[error("{0}")]
    Compare(String),
    /// TLS setup: certificate or key unreadable or invalid.
    #[error("{0}")]
    Tls(String),
    /// Binding or serving.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Anything else internal (encoding).
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// A Kubernetes API error, mapped by status as Argo's `kubeErrToGRPC` maps it
    /// (`util/grpc/errors.go`): NotFound, AlreadyExists, InvalidArgument, and PermissionDenied
    /// for the API server's 403 (a write the impersonated ServiceAccount may not make).
    pub(crate) fn kube(context: impl Into<String>, source: kube::Error) -> Self {
        let context = context.into();
        match &source {
            kube::Error::Api(s) if s.code == 403 => {
                Self::PermissionDenied(format!("{context}: {}", s.message))
            }
            kube::Error::Api(s) if s.code == 404 => {
                Self::NotFound(format!("{context}: {}", s.message))
            }
            kube::Error::Api(s) if s.code == 409 && s.reason == "AlreadyExists" => {
                Self::AlreadyExists(format!("{context}: {}", s.message))
            }
            // Argo's kubeErrToGRPC: any other conflict (a stale resourceVersion) is Aborted.
            kube::Error::Api(s) if s.code == 409 => {
                Self::Conflict(format!("{context}: {}", s.message))
            }
            kube::Error::Api(s) if s.code == 422 || s.code == 400 => {
                Self::InvalidArgument(format!("{context}: {}", s.message))
            }
            _ => Self::Kube { context, source },
        }
    }

    /// The gRPC status code and HTTP status of this error, as Argo's gateway answers.
    fn codes(&self) -> (i32, StatusCode) {
        match self {
            Self::NotFound(_) => (5, StatusCode::NOT_FOUND),
            Self::InvalidArgument(_) => (3, StatusCode::BAD_REQUEST),
            Self::FailedPrecondition(_) => (9, StatusCode::BAD_REQUEST),
            Self::AlreadyExists(_) => (6, StatusCode::CONFLICT),
            Self::Conflict(_) => (10, StatusCode::CONFLICT),
            Self::Unauthenticated(_) => (16, StatusCode::UNAUTHORIZED),
            Self::PermissionDenied(_) => (7, StatusCode::FORBIDDEN),
            Self::Kube { .. }
            | Self::Compare(_)
            | Self::Tls(_)
            | Self::Io { .. }
            | Self::Internal(_) => (2, StatusCode::INTERNAL_SERVER_ERROR),
        }
    }
}

impl From<plumb_app::request::Refused> for Error {
    fn from(r: plumb_app::request::Refused) -> Self {
        Self::FailedPrecondition(r.0)
    }
}

impl From<plumb_app::repo_admin::Error> for Error {
    fn from(e: plumb_app::repo_admin::Error) -> Self {
        use plumb_app::repo_admin::Error as E;
        match e {
            E::Invalid { .. } | E::InvalidRequest(_) => Self::InvalidArgument(e.to_string()),
            E::AlreadyExists(m) => Self::AlreadyExists(m),
            E::NotFound(m) => Self::NotFound(m),
            // The repository server's error reaches Argo's gateway as gRPC Unknown (500).
            E::Connection(m) => Self::Internal(m),
            E::Kube { context, source } => Self::kube(context, source),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let (code, status) = self.codes();
        let message = self.to_string();
        if status.is_server_error() {
            tracing::warn!("request failed: {message}");
        }
        let mut response = (
            status,
            axum::Json(json!({"error": message, "code": code, "message": message})),
        )
            .into_response();
        response.extensions_mut().insert(GrpcCode(code));
        response
    }
}
