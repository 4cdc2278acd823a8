//! A repository on one branch, what every provider lists.

/// A repository on one branch, as Argo's `scm_provider.Repository`.
#[derive(Debug, Clone)]
pub(crate) struct Repository {
    pub(super) organization: String,
    pub(super) repository: String,
    pub(super) url: String,
    pub(super) branch: String,
    pub(super) sha: String,
    pub(super) labels: Vec<String>,
    pub(super) repository_id: i64,
}

impl Repository {
    pub(super) fn on_branch(&self, branch: String, sha: String) -> Self {
        Self {
            branch,
            sha,
            ..self.clone()
        }
    }
}
