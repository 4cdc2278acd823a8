//! Open pull requests from GitHub's REST API v3 (`GET /repos/{owner}/{repo}/pulls`, "List pull
//! requests": open ones by default, 100 a page, paged by `Link`), as Argo's
//! `services/pull_request/github.go` reads them through go-github.

use serde::Deserialize;

use super::types::{ListError, PullRequest, has_labels};
use crate::error::GeneratorError;
use crate::generators::scm_provider::forge::Forge;

#[derive(Deserialize)]
struct GithubPull {
    number: i64,
    #[serde(default)]
    title: Option<String>,
    head: Ref,
    base: Ref,
    #[serde(default)]
    labels: Option<Vec<Label>>,
    #[serde(default)]
    user: Option<User>,
}

#[derive(Deserialize)]
struct Ref {
    #[serde(default, rename = "ref")]
    name: Option<String>,
    #[serde(default)]
    sha: Option<String>,
}

#[derive(Deserialize)]
struct Label {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct User {
    #[serde(default)]
    login: Option<String>,
}

/// One repository on GitHub or a GitHub Enterprise server.
pub(super) struct Github {
    pub(super) forge: Forge,
    pub(super) owner: String,
    pub(super) repo: String,
    pub(super) labels: Vec<String>,
}

impl Github {
    pub(super) async fn list(&self) -> Result<Vec<PullRequest>, ListError> {
        let url = self.forge.url(
            &["repos", &self.owner, &self.repo, "pulls"],
            &[("per_page", "100")],
        );
        let Some(pulls) = self.forge.get_all::<GithubPull>(url.clone()).await? else {
            return Err(ListError::RepoNotFound(GeneratorError::Source(format!(
                "GitHub {url}: HTTP 404 Not Found (repository {}/{})",
                self.owner, self.repo
            ))));
        };
        Ok(pulls
            .into_iter()
            .filter_map(|p| {
                let labels: Vec<String> = p
                    .labels
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|l| l.name)
                    .collect();
                if !has_labels(&self.labels, &labels) {
                    return None;
                }
                Some(PullRequest {
                    number: p.number,
                    title: p.title.unwrap_or_default(),
                    branch: p.head.name.unwrap_or_default(),
                    target_branch: p.base.name.unwrap_or_default(),
                    head_sha: p.head.sha.unwrap_or_default(),
                    labels,
                    author: p.user.and_then(|u| u.login).unwrap_or_default(),
                })
            })
            .collect())
    }
}
