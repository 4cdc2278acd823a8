//! What can go wrong reading the configuration, evaluating a trigger, rendering a template or
//! delivering a notification; each names the key, trigger, template or service concerned.

/// A notifications error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A key of `argocd-notifications-cm` does not parse.
    #[error("argocd-notifications-cm key {key}: {message}")]
    Config { key: String, message: String },
    /// A trigger condition does not compile, fails or is out of bounds.
    #[error("trigger {trigger}: {message}")]
    Trigger { trigger: String, message: String },
    /// A template does not parse or does not render.
    #[error("template {template}: {message}")]
    Template { template: String, message: String },
    /// A service refused, failed or is not configured.
    #[error("service {service}: {message}")]
    Service { service: String, message: String },
    /// The Kubernetes API failed.
    #[error("{what}")]
    Kube {
        what: String,
        #[source]
        source: Box<kube::Error>,
    },
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn config(key: &str, message: impl Into<String>) -> Error {
    Error::Config {
        key: key.to_string(),
        message: message.into(),
    }
}
