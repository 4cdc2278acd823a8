//! What one comparison is asked to do.

use plumb_model::application::{AppProject, ApplicationSource};
use plumb_source::Refresh;

/// Options of one comparison.
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// Compare against this revision instead of the Application's target (a sync's `revision`).
    pub revision: Option<String>,
    /// Cache use for the render.
    pub refresh: Refresh,
    /// When the refresh or operation was asked for: with a refresh that needs fresh refs, a
    /// ref listing started since answers (`None`: one started after the render began).
    pub refs_asked_at: Option<std::time::Instant>,
    /// Name managers of drifted fields (diff attribution).
    pub attribution: bool,
    /// Read every live object from the API server instead of the live cache (right after a
    /// sync, when the cache may not have seen the writes yet).
    pub fresh_reads: bool,
    /// Compare against these sources instead of the Application's (an operation's
    /// `sync.source`, or `sync.sources` of a multi-source rollback, with its revisions applied).
    pub sources: Option<Vec<ApplicationSource>>,
    /// The project's `sourceRepos`, which kustomize remote bases must match. Not optional: every
    /// caller (controller, `plumb app diff/manifests`, the API server) loads the Application's
    /// AppProject first and refuses to render without it.
    pub source_repos: Vec<String>,
    /// The project's effective source integrity when signatures are verified
    /// ([`crate::signatures::required_integrity`]): the render verifies every Git revision it
    /// renders against the policy selecting its repository, and a failure is a
    /// ComparisonError. `None`: not verified.
    pub source_integrity: Option<plumb_model::application::SourceIntegrity>,
}

impl CompareOptions {
    /// The options every comparison of an Application of `project` starts from: drift
    /// attributed, live objects from the cache, kustomize remote bases checked against the
    /// project's `sourceRepos`, revisions verified against its `sourceIntegrity` (and `signatureKeys`).
    pub fn for_project(project: &AppProject, refresh: Refresh) -> Self {
        Self {
            source_integrity: crate::signatures::required_integrity(project),
            ..Self::new(
                refresh,
                project.spec.source_repos.clone().unwrap_or_default(),
            )
        }
    }

    /// [`CompareOptions::for_project`] with the project's `sourceRepos` already read.
    pub fn new(refresh: Refresh, source_repos: Vec<String>) -> Self {
        Self {
            refresh,
            attribution: true,
            source_repos,
            ..Self::default()
        }
    }
}
