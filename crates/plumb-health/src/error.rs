//! Errors building an [`Assessor`](crate::Assessor): bad settings or unreadable script sources.
//! Evaluating an object never fails: a broken script gives `Unknown`, as in Argo.

use std::path::PathBuf;

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
    /// A customizations directory could not be listed.
    #[error("reading customizations directory {}", path.display())]
    ReadCustomizations {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A `health.lua` file could not be read.
    #[error("reading health script {}", path.display())]
    ReadScript {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Result with the health engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
