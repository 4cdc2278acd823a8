//! The scmProvider generator's Gitea provider, as Argo's
//! `applicationset/services/scm_provider/gitea.go` reads Gitea's API v1 (through Gitea's Go
//! SDK): the owner's repositories, each one's labels, its default branch or all branches, and
//! `contents/{path}` for the path filters. Unlike Argo, which reads only the first page of each
//! listing, every page is read (up to `max_pages`).

use reqwest::Url;
use serde::Deserialize;

use super::forge::Forge;
use super::repository::Repository;
use crate::error::GeneratorError;

/// Gitea caps its pages at `[api] MAX_RESPONSE_ITEMS` (50 by default); asking for that many
/// keeps the number of calls down, and `Link` tells when there is more.
const PAGE_LIMIT: &str = "50";

#[derive(Deserialize)]
struct GiteaRepo {
    id: i64,
    name: String,
    #[serde(default)]
    ssh_url: String,
    #[serde(default)]
    html_url: String,
    #[serde(default)]
    default_branch: String,
    #[serde(default)]
    archived: bool,
}

#[derive(Deserialize)]
pub(crate) struct Named {
    pub(crate) name: String,
}

#[derive(Deserialize)]
struct GiteaBranch {
    name: String,
    commit: GiteaCommit,
}

#[derive(Deserialize)]
struct GiteaCommit {
    #[serde(default)]
    id: String,
}

/// One owner on one Gitea.
pub(crate) struct Gitea {
    pub(crate) forge: Forge,
    pub(crate) owner: String,
    pub(crate) all_branches: bool,
    pub(crate) exclude_archived: bool,
}

/// The API root of the Gitea at `api` (Gitea's SDK appends `/api/v1`).
pub(crate) fn api_base(api: &str, field: &str) -> Result<Url, GeneratorError> {
    let api = api.trim();
    if api.is_empty() {
        return Err(GeneratorError::Invalid(format!("{field}: required")));
    }
    let url = Url::parse(&format!("{}/api/v1/", api.trim_end_matches('/')))
        .map_err(|e| GeneratorError::Invalid(format!("{field}: {api:?} is no URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(GeneratorError::Invalid(format!(
            "{field}: {api:?} is not an http(s) URL"
        )));
    }
    Ok(url)
}

/// `segments` then a path split at `/` (Gitea's SDK sends branch names and file paths raw, and
/// Gitea's routes take them as the rest of the path).
fn with_path<'a>(segments: &[&'a str], path: &'a str) -> Vec<&'a str> {
    let mut out = segments.to_vec();
    out.extend(path.split('/').filter(|s| !s.is_empty()));
    out
}

impl Gitea {
    fn not_found(&self, url: &Url) -> GeneratorError {
        GeneratorError::Source(format!("Gitea {url}: HTTP 404 Not Found"))
    }

    pub(crate) async fn list_repos(
        &self,
        clone_protocol: &str,
    ) -> Result<Vec<Repository>, GeneratorError> {
        let url = self.forge.url(
            &["orgs", &self.owner, "repos"],
            &[("page", "1"), ("limit", PAGE_LIMIT)],
        );
        let repos: Vec<GiteaRepo> = self
            .forge
            .get_all(url.clone())
            .await?
            .ok_or_else(|| self.not_found(&url))?;
        let mut out = Vec::with_capacity(repos.len());
        for repo in repos {
            let url = match clone_protocol {
                "" | "ssh" => repo.ssh_url.clone(),
                "https" => repo.html_url.clone(),
                other => {
                    return Err(GeneratorError::Invalid(format!(
                        "unknown clone protocol for Gitea {other:?} (ssh or https)"
                    )));
                }
            };
            if self.exclude_archived && repo.archived {
                continue;
            }
            let labels = self.labels(&repo.name).await?;
            out.push(Repository {
                organization: self.owner.clone(),
                repository: repo.name,
                url,
                branch: repo.default_branch,
                sha: String::new(),
                labels,
                repository_id: repo.id,
            });
        }
        Ok(out)
    }

    async fn labels(&self, repo: &str) -> Result<Vec<String>, GeneratorError> {
        let url = self.forge.url(
            &["repos", &self.owner, repo, "labels"],
            &[("page", "1"), ("limit", PAGE_LIMIT)],
        );
        let labels: Vec<Named> = self
            .forge
            .get_all(url.clone())
            .await?
            .ok_or_else(|| self.not_found(&url))?;
        Ok(labels.into_iter().map(|l| l.name).collect())
    }

    pub(crate) async fn branches(
        &self,
        repo: &Repository,
    ) -> Result<Vec<Repository>, GeneratorError> {
        if !self.all_branches {
            let segments = with_path(
                &["repos", &self.owner, &repo.repository, "branches"],
                &repo.branch,
            );
            let url = self.forge.url(&segments, &[]);
            let Some(page) = self.forge.get::<GiteaBranch>(&url).await? else {
                return Err(GeneratorError::Source(format!(
                    "Gitea {url}: got 404 while getting default branch {:?} for repo {:?} - check your repo config",
                    repo.branch, repo.repository
                )));
            };
            return Ok(vec![
                repo.on_branch(repo.branch.clone(), page.body.commit.id),
            ]);
        }
        let url = self.forge.url(
            &["repos", &self.owner, &repo.repository, "branches"],
            &[("page", "1"), ("limit", PAGE_LIMIT)],
        );
        let branches: Vec<GiteaBranch> = self
            .forge
            .get_all(url.clone())
            .await?
            .ok_or_else(|| self.not_found(&url))?;
        Ok(branches
            .into_iter()
            .map(|b| repo.on_branch(b.name, b.commit.id))
            .collect())
    }

    pub(crate) async fn has_path(
        &self,
        repo: &Repository,
        path: &str,
    ) -> Result<bool, GeneratorError> {
        let segments = with_path(
            &["repos", &repo.organization, &repo.repository, "contents"],
            path,
        );
        let url = self.forge.url(&segments, &[("ref", &repo.branch)]);
        // A file answers with an object, a directory with an array: both mean "exists".
        Ok(self.forge.get::<serde_json::Value>(&url).await?.is_some())
    }
}
