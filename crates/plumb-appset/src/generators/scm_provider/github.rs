//! The scmProvider generator's GitHub provider, as Argo's
//! `applicationset/services/scm_provider/github.go` reads GitHub's REST API v3 (through
//! go-github): `GET /orgs/{org}/repos`, `GET /repos/{owner}/{repo}/branches[/{branch}]` and
//! `GET /repos/{owner}/{repo}/contents/{path}?ref=`, paged by `Link` headers; the headers and the
//! GitHub Enterprise base URL rule are go-github's.

use reqwest::Url;
use serde::Deserialize;

use super::forge::Forge;
use super::repository::Repository;
use crate::context::Limits;
use crate::error::GeneratorError;

/// go-github asks for 100 items a page, GitHub's largest.
const PER_PAGE: &str = "100";

#[derive(Deserialize)]
struct GithubRepo {
    id: i64,
    name: String,
    #[serde(default)]
    owner: Option<Owner>,
    #[serde(default)]
    ssh_url: Option<String>,
    #[serde(default)]
    clone_url: Option<String>,
    #[serde(default)]
    default_branch: Option<String>,
    #[serde(default)]
    topics: Option<Vec<String>>,
    #[serde(default)]
    archived: Option<bool>,
}

#[derive(Deserialize)]
pub(crate) struct Owner {
    #[serde(default)]
    pub(crate) login: Option<String>,
}

#[derive(Deserialize)]
struct GithubBranch {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    commit: Option<BranchCommit>,
}

#[derive(Deserialize)]
struct BranchCommit {
    #[serde(default)]
    sha: Option<String>,
}

/// One organisation on GitHub or a GitHub Enterprise server.
pub(crate) struct Github {
    pub(crate) forge: Forge,
    pub(crate) organization: String,
    pub(crate) all_branches: bool,
    pub(crate) exclude_archived: bool,
}

/// go-github's base URL: `https://api.github.com/` without `api`; for GitHub Enterprise
/// (`WithEnterpriseURLs`) the URL with a trailing `/` and `api/v3/` appended unless it already
/// ends so or its host is an `api.` one.
pub(crate) fn api_base(api: Option<&str>, field: &str) -> Result<Url, GeneratorError> {
    let api = api.map(str::trim).unwrap_or_default();
    if api.is_empty() {
        return Url::parse("https://api.github.com/")
            .map_err(|e| GeneratorError::Invalid(format!("{field}: {e}")));
    }
    let mut url = Url::parse(api)
        .map_err(|e| GeneratorError::Invalid(format!("{field}: {api:?} is no URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(GeneratorError::Invalid(format!(
            "{field}: {api:?} is not an http(s) URL"
        )));
    }
    let mut path = url.path().to_owned();
    if !path.ends_with('/') {
        path.push('/');
    }
    let host = url.host_str().unwrap_or_default();
    if !path.ends_with("/api/v3/") && !host.starts_with("api.") && !host.contains(".api.") {
        path.push_str("api/v3/");
    }
    url.set_path(&path);
    Ok(url)
}

/// The forge for GitHub's API at `base`, with go-github's headers.
pub(crate) fn forge(
    http: &reqwest::Client,
    base: Url,
    token: Option<String>,
    limits: &Limits,
) -> Result<Forge, GeneratorError> {
    Ok(
        Forge::new("GitHub", http, base, token, "Bearer", false, limits)?
            .with_header("accept", "application/vnd.github.v3+json")
            .with_header("x-github-api-version", "2022-11-28"),
    )
}

impl Github {
    pub(crate) async fn list_repos(
        &self,
        clone_protocol: &str,
    ) -> Result<Vec<Repository>, GeneratorError> {
        let url = self.forge.url(
            &["orgs", &self.organization, "repos"],
            &[("per_page", PER_PAGE)],
        );
        let repos: Vec<GithubRepo> = self.forge.get_all(url.clone()).await?.ok_or_else(|| {
            GeneratorError::Source(format!(
                "GitHub {url}: HTTP 404 Not Found (error listing repositories for {})",
                self.organization
            ))
        })?;
        let mut out = Vec::with_capacity(repos.len());
        for repo in repos {
            let url = match clone_protocol {
                "" | "ssh" => repo.ssh_url,
                "https" => repo.clone_url,
                other => {
                    return Err(GeneratorError::Invalid(format!(
                        "unknown clone protocol for GitHub {other:?} (ssh or https)"
                    )));
                }
            };
            if self.exclude_archived && repo.archived.unwrap_or(false) {
                continue;
            }
            out.push(Repository {
                organization: repo.owner.and_then(|o| o.login).unwrap_or_default(),
                repository: repo.name,
                url: url.unwrap_or_default(),
                branch: repo.default_branch.unwrap_or_default(),
                sha: String::new(),
                labels: repo.topics.unwrap_or_default(),
                repository_id: repo.id,
            });
        }
        Ok(out)
    }

    pub(crate) async fn branches(
        &self,
        repo: &Repository,
    ) -> Result<Vec<Repository>, GeneratorError> {
        let segments = ["repos", &repo.organization, &repo.repository, "branches"];
        let branches: Vec<GithubBranch> = if self.all_branches {
            let url = self.forge.url(&segments, &[("per_page", PER_PAGE)]);
            self.forge.get_all(url.clone()).await?.ok_or_else(|| {
                GeneratorError::Source(format!(
                    "GitHub {url}: HTTP 404 Not Found (error listing branches for {}/{})",
                    repo.organization, repo.repository
                ))
            })?
        } else {
            // go-github escapes the branch as one path segment; a 404 means an empty
            // repository (no default branch yet): no branches, not an error.
            let mut all = segments.to_vec();
            all.push(&repo.branch);
            let url = self.forge.url(&all, &[]);
            match self.forge.get::<GithubBranch>(&url).await? {
                Some(page) => vec![page.body],
                None => Vec::new(),
            }
        };
        Ok(branches
            .into_iter()
            .map(|b| {
                let sha = b.commit.and_then(|c| c.sha).unwrap_or_default();
                repo.on_branch(b.name.unwrap_or_default(), sha)
            })
            .collect())
    }

    pub(crate) async fn has_path(
        &self,
        repo: &Repository,
        path: &str,
    ) -> Result<bool, GeneratorError> {
        let mut segments = vec!["repos", &repo.organization, &repo.repository, "contents"];
        segments.extend(path.split('/').filter(|s| !s.is_empty()));
        let url = self.forge.url(&segments, &[("ref", &repo.branch)]);
        Ok(self.forge.get::<serde_json::Value>(&url).await?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::api_base;

    #[test]
    fn enterprise_base_urls_as_go_github() {
        let base = |api: Option<&str>| api_base(api, "api").ok().map(|u| u.to_string());
        assert_eq!(base(None).as_deref(), Some("https://api.github.com/"));
        assert_eq!(
            base(Some("https://ghe.example.com")).as_deref(),
            Some("https://ghe.example.com/api/v3/")
        );
        assert_eq!(
            base(Some("https://ghe.example.com/api/v3")).as_deref(),
            Some("https://ghe.example.com/api/v3/")
        );
        assert_eq!(
            base(Some("https://api.ghe.example.com")).as_deref(),
            Some("https://api.ghe.example.com/")
        );
        assert_eq!(
            base(Some("https://x.api.example.com/")).as_deref(),
            Some("https://x.api.example.com/")
        );
        assert!(base(Some("ftp://x")).is_none());
        assert!(base(Some("not a url")).is_none());
    }
}
