//! What the providers hand back: pull requests, or why there are none.

use crate::error::GeneratorError;

/// One pull request, as Argo's `pull_request.PullRequest`.
#[derive(Debug, Clone)]
pub(crate) struct PullRequest {
    pub(super) number: i64,
    pub(super) title: String,
    pub(super) branch: String,
    pub(super) target_branch: String,
    pub(super) head_sha: String,
    pub(super) labels: Vec<String>,
    pub(super) author: String,
}

/// Why listing failed: the repository is missing (which `continueOnRepoNotFoundError` may
/// forgive), or anything else.
pub(crate) enum ListError {
    RepoNotFound(GeneratorError),
    Other(GeneratorError),
}

impl From<GeneratorError> for ListError {
    fn from(e: GeneratorError) -> Self {
        Self::Other(e)
    }
}

/// Argo's label rule: every label the generator lists must be on the pull request.
pub(super) fn has_labels(expected: &[String], got: &[String]) -> bool {
    expected.iter().all(|e| got.iter().any(|g| g == e))
}
