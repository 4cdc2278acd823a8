//! Open pull requests from Gitea's API v1 (`GET /repos/{owner}/{repo}/pulls?state=open`), as
//! Argo's `services/pull_request/gitea.go`; every page is read (Argo reads the first only).

use serde::Deserialize;

use super::types::{ListError, PullRequest, has_labels};
use crate::error::GeneratorError;
use crate::generators::scm_provider::forge::Forge;

#[derive(Deserialize)]
struct GiteaPull {
    number: i64,
    #[serde(default)]
    title: String,
    head: Option<Ref>,
    base: Option<Ref>,
    #[serde(default)]
    labels: Option<Vec<Label>>,
    #[serde(default)]
    user: Option<User>,
}

#[derive(Deserialize)]
struct Ref {
    #[serde(default, rename = "ref")]
    name: String,
    #[serde(default)]
    sha: String,
}

#[derive(Deserialize)]
struct Label {
    name: String,
}

#[derive(Deserialize)]
struct User {
    #[serde(default)]
    login: String,
}

/// One repository on one Gitea.
pub(super) struct Gitea {
    pub(super) forge: Forge,
    pub(super) owner: String,
    pub(super) repo: String,
    pub(super) labels: Vec<String>,
}

impl Gitea {
    pub(super) async fn list(&self) -> Result<Vec<PullRequest>, ListError> {
        let url = self.forge.url(
            &["repos", &self.owner, &self.repo, "pulls"],
            &[("page", "1"), ("limit", "50"), ("state", "open")],
        );
        let Some(pulls) = self.forge.get_all::<GiteaPull>(url.clone()).await? else {
            return Err(ListError::RepoNotFound(GeneratorError::Source(format!(
                "Gitea {url}: HTTP 404 Not Found (repository {}/{})",
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
                    .map(|l| l.name)
                    .collect();
                if !has_labels(&self.labels, &labels) {
                    return None;
                }
                let head = p.head.unwrap_or(Ref {
                    name: String::new(),
                    sha: String::new(),
                });
                Some(PullRequest {
                    number: p.number,
                    title: p.title,
                    branch: head.name,
                    target_branch: p.base.map(|b| b.name).unwrap_or_default(),
                    head_sha: head.sha,
                    labels,
                    author: p.user.map(|u| u.login).unwrap_or_default(),
                })
            })
            .collect())
    }
}
