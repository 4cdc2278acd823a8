//! The supported providers behind one interface.

use super::gitea::Gitea;
use super::github::Github;
use super::repository::Repository;
use crate::error::GeneratorError;

/// The supported providers (a closed set: an enum rather than a trait object).
pub(crate) enum Provider {
    Gitea(Gitea),
    Github(Github),
}

impl Provider {
    pub(super) async fn list_repos(
        &self,
        clone_protocol: &str,
    ) -> Result<Vec<Repository>, GeneratorError> {
        match self {
            Self::Gitea(p) => p.list_repos(clone_protocol).await,
            Self::Github(p) => p.list_repos(clone_protocol).await,
        }
    }

    pub(super) async fn branches(
        &self,
        repo: &Repository,
    ) -> Result<Vec<Repository>, GeneratorError> {
        match self {
            Self::Gitea(p) => p.branches(repo).await,
            Self::Github(p) => p.branches(repo).await,
        }
    }

    pub(super) async fn has_path(
        &self,
        repo: &Repository,
        path: &str,
    ) -> Result<bool, GeneratorError> {
        match self {
            Self::Gitea(p) => p.has_path(repo, path).await,
            Self::Github(p) => p.has_path(repo, path).await,
        }
    }
}
