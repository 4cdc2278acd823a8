//! The scmProvider generator's `filters`, with Argo's semantics
//! (`applicationset/services/scm_provider/utils.go`): a filter is a repository filter when it has
//! only `repositoryMatch`/`labelMatch`, a branch filter when it has any of `branchMatch`,
//! `pathsExist`, `pathsDoNotExist`, and is ignored when it has none. A repository must pass at
//! least one repository filter (when there are any), then each of its branches at least one
//! branch filter (when there are any); within one filter every condition must hold.

use regex::Regex;

use super::provider::Provider;
use super::repository::Repository;
use crate::error::GeneratorError;
use plumb_model::applicationset::ScmProviderGeneratorFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    None,
    Repo,
    Branch,
}

/// One compiled filter.
pub(crate) struct Filter {
    repository: Option<Regex>,
    label: Option<Regex>,
    branch: Option<Regex>,
    paths_exist: Vec<String>,
    paths_do_not_exist: Vec<String>,
    kind: Kind,
}

/// Argo compiles with Go's RE2; Rust's `regex` has the same syntax and linear-time guarantee.
fn compile(field: &str, pattern: Option<&String>) -> Result<Option<Regex>, GeneratorError> {
    pattern
        .map(|p| {
            regex::RegexBuilder::new(p)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    GeneratorError::Invalid(format!("error compiling {field} regexp {p:?}: {e}"))
                })
        })
        .transpose()
}

pub(crate) fn compile_all(
    filters: &[ScmProviderGeneratorFilter],
) -> Result<Vec<Filter>, GeneratorError> {
    filters
        .iter()
        .map(|f| {
            let repository = compile("RepositoryMatch", f.repository_match.as_ref())?;
            let label = compile("LabelMatch", f.label_match.as_ref())?;
            let branch = compile("BranchMatch", f.branch_match.as_ref())?;
            let kind =
                if branch.is_some() || f.paths_exist.is_some() || f.paths_do_not_exist.is_some() {
                    Kind::Branch
                } else if repository.is_some() || label.is_some() {
                    Kind::Repo
                } else {
                    Kind::None
                };
            Ok(Filter {
                repository,
                label,
                branch,
                paths_exist: f.paths_exist.clone().unwrap_or_default(),
                paths_do_not_exist: f.paths_do_not_exist.clone().unwrap_or_default(),
                kind,
            })
        })
        .collect()
}

impl Filter {
    /// Argo's `matchFilter`: every condition the filter has must hold.
    async fn matches(
        &self,
        provider: &Provider,
        repo: &Repository,
    ) -> Result<bool, GeneratorError> {
        if self
            .repository
            .as_ref()
            .is_some_and(|r| !r.is_match(&repo.repository))
        {
            return Ok(false);
        }
        if self
            .branch
            .as_ref()
            .is_some_and(|r| !r.is_match(&repo.branch))
        {
            return Ok(false);
        }
        if let Some(label) = &self.label
            && !repo.labels.iter().any(|l| label.is_match(l))
        {
            return Ok(false);
        }
        for path in &self.paths_exist {
            if !provider.has_path(repo, path.trim_end_matches('/')).await? {
                return Ok(false);
            }
        }
        for path in &self.paths_do_not_exist {
            if provider.has_path(repo, path.trim_end_matches('/')).await? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Argo's `ListRepos`: list, keep the repositories a repository filter passes, expand to
/// branches, keep the branches a branch filter passes. Order is the forge's.
pub(crate) async fn list(
    provider: &Provider,
    filters: &[Filter],
    clone_protocol: &str,
    max: usize,
) -> Result<Vec<Repository>, GeneratorError> {
    let repo_filters: Vec<&Filter> = filters.iter().filter(|f| f.kind == Kind::Repo).collect();
    let branch_filters: Vec<&Filter> = filters.iter().filter(|f| f.kind == Kind::Branch).collect();
    let mut passed = Vec::new();
    for repo in provider.list_repos(clone_protocol).await? {
        if repo_filters.is_empty() || any(provider, &repo_filters, &repo).await? {
            passed.push(repo);
        }
    }
    let mut out = Vec::new();
    for repo in &passed {
        for branch in provider.branches(repo).await? {
            if branch_filters.is_empty() || any(provider, &branch_filters, &branch).await? {
                out.push(branch);
            }
        }
        if out.len() > max {
            return Err(GeneratorError::Limit(format!(
                "scmProvider: more than {max} repositories and branches"
            )));
        }
    }
    Ok(out)
}

async fn any(
    provider: &Provider,
    filters: &[&Filter],
    repo: &Repository,
) -> Result<bool, GeneratorError> {
    for filter in filters {
        if filter.matches(provider, repo).await? {
            return Ok(true);
        }
    }
    Ok(false)
}
