//! Errors building an [`Assessor`](crate::Assessor): bad settings or unreadable script sources.
//! Evaluating an object never fails: a broken script gives `Unknown`, as in Argo.

/// Why the health engine could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A settings key had a value the health engine does not accept.
    #[error("settings key {key}: invalid value {value:?} (expected {expected})")]
    InvalidSetting {
        /// The key, with the entry inside it for YAML-valued keys.
        key: String,
        /// The value found.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// The legacy `resource.customizations` key is not a YAML map of customizations.
    #[error("settings key {key}: not a YAML map of <group>/<kind> to customizations")]
    LegacyCustomizations {
        /// The key (`resource.customizations`).
        key: &'static str,
        /// The YAML error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A customizations directory, or a script in it, could not be read (or was refused: a link
    /// leading outside the directory, a script too large).
    #[error("customizations directory: {0}")]
    Directory(#[from] crate::customizations_dir::DirError),
}

/// Result with the health engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
