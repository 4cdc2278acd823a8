//! What can go wrong while observing or acting on an Application (the controller, the API
//! server and the CLI share these).

use plumb_model::ResourceKey;

/// What went wrong while reconciling an Application.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Talking to a cluster failed.
    #[error("cluster request failed")]
    Kube(#[source] Box<plumb_kube::Error>),
    /// A raw kube-rs request failed.
    #[error("Kubernetes API request failed: {what}")]
    Api {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: Box<kube::Error>,
    },
    /// The settings ConfigMap has a value an engine cannot use.
    #[error("invalid settings")]
    Settings(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// An Application object could not be read as an Application.
    #[error("Application {name} is not a valid argoproj.io/v1alpha1 Application: {reason}")]
    InvalidApplication {
        /// Its name.
        name: String,
        /// Why.
        reason: String,
    },
    /// An AppProject object could not be read as an AppProject.
    #[error("AppProject {name} is not valid: {message}")]
    InvalidProject {
        /// `namespace/name`.
        name: String,
        /// Why.
        message: String,
    },
    /// The destination cluster is not known.
    #[error("destination cluster {0} is not configured (no cluster Secret names it)")]
    UnknownCluster(String),
    /// A cluster Secret's `config` cannot be used (the field is named; never its value).
    #[error("cluster {server}: {reason}")]
    ClusterConfig {
        /// The cluster's URL.
        server: String,
        /// What is wrong.
        reason: String,
    },
    /// Fetching or rendering the source failed.
    #[error("rendering the source failed")]
    Source(#[source] Box<plumb_source::Error>),
    /// Comparing one object failed.
    #[error("comparing {key} failed")]
    Diff {
        /// The object.
        key: ResourceKey,
        /// The cause.
        #[source]
        source: Box<plumb_diff::Error>,
    },
    /// Pairing desired and live objects failed (for example a duplicate in Git).
    #[error("pairing desired and live objects failed")]
    Pair(#[source] Box<plumb_diff::Error>),
    /// Objects of the Application belong to an API group version the server lists but does not
    /// serve now (an aggregated API whose backend does not answer).
    #[error(
        "API group version {group_versions} is unavailable (the API server lists it as Stale: the aggregated API server behind its APIService does not answer), so {objects} cannot be compared; nothing is synced or pruned for this Application until it is served again"
    )]
    Unavailable {
        /// The group versions (`group/version`), comma-separated.
        group_versions: String,
        /// The objects of those groups this Application has, comma-separated.
        objects: String,
    },
    /// The live state cannot be loaded for what the Application declares: an object outside
    /// the namespaces a namespaced cluster manages (gitops-engine's `GetManagedLiveObjs`).
    #[error("Failed to load live state: {0}")]
    LiveState(String),
    /// A background task died.
    #[error("a worker task failed: {0}")]
    Task(String),
}

impl From<plumb_kube::Error> for Error {
    fn from(e: plumb_kube::Error) -> Self {
        Self::Kube(Box::new(e))
    }
}

impl From<plumb_source::Error> for Error {
    fn from(e: plumb_source::Error) -> Self {
        Self::Source(Box::new(e))
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error and its causes on one line, for status conditions and events.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let s_text = s.to_string();
        if !msg.contains(&s_text) {
            msg.push_str(": ");
            msg.push_str(&s_text);
        }
        src = s.source();
    }
    msg
}
