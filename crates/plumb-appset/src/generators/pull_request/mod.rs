//! The `pullRequest` generator: one parameter set per open pull request of a repository, as
//! Argo's `applicationset/generators/pull_request.go` and `services/pull_request/`. Gitea and
//! GitHub are supported; GitLab, Bitbucket, Bitbucket Server and Azure DevOps are refused with an
//! error that says so.

mod gitea;
mod github;
mod slug;
mod types;

use plumb_model::applicationset::{
    ApplicationSet, PullRequestGenerator, PullRequestGeneratorFilter,
};
use regex::Regex;
use serde_json::Value;

use super::scm_provider::forge::Forge;
use super::scm_provider::shared::{check_allowed, required, token, unsupported};
use super::values::{Mode, append_values};
use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;
use types::{ListError, PullRequest};

/// Where the pull requests come from.
enum Service {
    Gitea(gitea::Gitea),
    Github(github::Github),
}

/// The parameter sets of one `pullRequest` generator.
pub async fn generate(
    spec: &PullRequestGenerator,
    set: &ApplicationSet,
    ctx: &Context,
) -> Result<Vec<Params>, GeneratorError> {
    let service = service(spec, set, ctx).await?;
    let filters = compile_filters(spec.filters.as_deref().unwrap_or_default())?;
    let listed = match &service {
        Service::Gitea(s) => s.list().await,
        Service::Github(s) => s.list().await,
    };
    let pulls = match listed {
        Ok(pulls) => pulls,
        Err(ListError::RepoNotFound(e)) => {
            if spec.continue_on_repo_not_found_error.unwrap_or(false) {
                tracing::warn!(
                    applicationset = set.name(),
                    error = %e,
                    "skipping params generation for this repository since it was not found"
                );
                return Ok(Vec::new());
            }
            return Err(GeneratorError::Source(format!("error listing repos: {e}")));
        }
        Err(ListError::Other(e)) => return Err(e),
    };
    if pulls.len() > ctx.limits.max_params {
        return Err(GeneratorError::Limit(format!(
            "pullRequest: more than {} pull requests",
            ctx.limits.max_params
        )));
    }
    let mode = Mode::of(set);
    let mut out = Vec::new();
    for pull in pulls.into_iter().filter(|p| passes(&filters, p)) {
        let mut params = params(pull, mode.go_template);
        append_values(spec.values.as_ref(), &mut params, mode)?;
        out.push(params);
    }
    Ok(out)
}

/// Argo's parameters of one pull request; `labels` only with Go templates, as Argo.
fn params(pull: PullRequest, go_template: bool) -> Params {
    let short = |n: usize| pull.head_sha.chars().take(n).collect::<String>();
    let mut p = Params::new();
    let text = |s: &str| Value::String(s.to_owned());
    p.insert("number".into(), Value::String(pull.number.to_string()));
    p.insert("title".into(), text(&pull.title));
    p.insert("branch".into(), text(&pull.branch));
    p.insert(
        "branch_slug".into(),
        Value::String(slug::make(&pull.branch)),
    );
    p.insert("target_branch".into(), text(&pull.target_branch));
    p.insert(
        "target_branch_slug".into(),
        Value::String(slug::make(&pull.target_branch)),
    );
    p.insert("head_sha".into(), text(&pull.head_sha));
    p.insert("head_short_sha".into(), Value::String(short(8)));
    p.insert("head_short_sha_7".into(), Value::String(short(7)));
    p.insert("author".into(), text(&pull.author));
    if go_template {
        let labels = pull.labels.into_iter().map(Value::String).collect();
        p.insert("labels".into(), Value::Array(labels));
    }
    p
}

/// One compiled filter: every condition it has must hold.
struct Filter {
    branch: Option<Regex>,
    target_branch: Option<Regex>,
    title: Option<Regex>,
}

fn compile_filters(filters: &[PullRequestGeneratorFilter]) -> Result<Vec<Filter>, GeneratorError> {
    let compile = |field: &str, p: Option<&String>| {
        p.map(|p| {
            regex::RegexBuilder::new(p)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    GeneratorError::Invalid(format!("error compiling {field} regexp {p:?}: {e}"))
                })
        })
        .transpose()
    };
    filters
        .iter()
        .map(|f| {
            Ok(Filter {
                branch: compile("BranchMatch", f.branch_match.as_ref())?,
                target_branch: compile("TargetBranchMatch", f.target_branch_match.as_ref())?,
                title: compile("TitleMatch", f.title_match.as_ref())?,
            })
        })
        .collect()
}

/// Argo's `ListPullRequests`: no filters keep everything; otherwise any one filter must pass.
fn passes(filters: &[Filter], pull: &PullRequest) -> bool {
    let ok = |r: &Option<Regex>, s: &str| r.as_ref().is_none_or(|r| r.is_match(s));
    filters.is_empty()
        || filters.iter().any(|f| {
            ok(&f.branch, &pull.branch)
                && ok(&f.target_branch, &pull.target_branch)
                && ok(&f.title, &pull.title)
        })
}

/// Argo's `CustomApiUrl` of a pullRequest generator.
fn custom_api_url(spec: &PullRequestGenerator) -> &str {
    let api = if let Some(g) = &spec.github {
        g.api.as_deref()
    } else if let Some(g) = &spec.gitlab {
        g.api.as_deref()
    } else if let Some(g) = &spec.gitea {
        g.api.as_deref()
    } else if let Some(g) = &spec.bitbucket_server {
        g.api.as_deref()
    } else if let Some(g) = &spec.azuredevops {
        g.api.as_deref()
    } else {
        None
    };
    api.unwrap_or_default()
}

async fn service(
    spec: &PullRequestGenerator,
    set: &ApplicationSet,
    ctx: &Context,
) -> Result<Service, GeneratorError> {
    check_allowed(ctx, custom_api_url(spec))?;
    if let Some(g) = &spec.github {
        if g.app_secret_name.as_deref().is_some_and(|s| !s.is_empty()) {
            return Err(GeneratorError::Invalid(
                "pullRequest.github.appSecretName: GitHub App authentication is not supported by Plumb yet; use tokenRef".to_owned(),
            ));
        }
        let base =
            super::scm_provider::github_api_base(g.api.as_deref(), "pullRequest.github.api")?;
        let token = token(
            ctx,
            set,
            g.token_ref.as_ref(),
            "pullRequest.github.tokenRef",
        )
        .await?;
        return Ok(Service::Github(github::Github {
            forge: super::scm_provider::github_forge(&ctx.http, base, token, &ctx.limits)?,
            owner: required(g.owner.as_deref(), "pullRequest.github.owner")?,
            repo: required(g.repo.as_deref(), "pullRequest.github.repo")?,
            labels: g.labels.clone().unwrap_or_default(),
        }));
    }
    if spec.gitlab.is_some() {
        return Err(unsupported("pullRequest", "gitlab"));
    }
    if let Some(g) = &spec.gitea {
        let base = super::scm_provider::gitea_api_base(
            g.api.as_deref().unwrap_or_default(),
            "pullRequest.gitea.api",
        )?;
        let token = token(ctx, set, g.token_ref.as_ref(), "pullRequest.gitea.tokenRef").await?;
        let insecure = g.insecure.unwrap_or(false);
        return Ok(Service::Gitea(gitea::Gitea {
            forge: Forge::new(
                "Gitea",
                &ctx.http,
                base,
                token,
                "token",
                insecure,
                &ctx.limits,
            )?,
            owner: required(g.owner.as_deref(), "pullRequest.gitea.owner")?,
            repo: required(g.repo.as_deref(), "pullRequest.gitea.repo")?,
            labels: g.labels.clone().unwrap_or_default(),
        }));
    }
    let other = [
        (spec.bitbucket_server.is_some(), "bitbucketServer"),
        (spec.bitbucket.is_some(), "bitbucket"),
        (spec.azuredevops.is_some(), "azuredevops"),
    ];
    match other.iter().find(|(set, _)| *set) {
        Some((_, name)) => Err(unsupported("pullRequest", name)),
        None => Err(GeneratorError::Invalid(
            "failed to select pull request service provider: no Pull Request provider implementation configured".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::types::has_labels;
    use super::*;

    fn pr(branch: &str, target: &str, title: &str) -> PullRequest {
        PullRequest {
            number: 7,
            title: title.into(),
            branch: branch.into(),
            target_branch: target.into(),
            head_sha: "0123456789abcdef".into(),
            labels: vec!["preview".into()],
            author: "octocat".into(),
        }
    }

    fn filter(
        branch: Option<&str>,
        target: Option<&str>,
        title: Option<&str>,
    ) -> PullRequestGeneratorFilter {
        PullRequestGeneratorFilter {
            branch_match: branch.map(str::to_owned),
            target_branch_match: target.map(str::to_owned),
            title_match: title.map(str::to_owned),
        }
    }

    #[test]
    fn filters_any_of_all() {
        let f = compile_filters(&[
            filter(Some("^feat-"), Some("^main$"), None),
            filter(None, None, Some("(?i)urgent")),
        ])
        .expect("compiles");
        assert!(passes(&f, &pr("feat-a", "main", "x")));
        assert!(!passes(&f, &pr("feat-a", "dev", "x")));
        assert!(passes(&f, &pr("fix", "dev", "URGENT fix")));
        assert!(passes(&[], &pr("any", "any", "any")));
        assert!(compile_filters(&[filter(Some("("), None, None)]).is_err());
    }

    #[test]
    fn params_as_argo() {
        let p = params(pr("feature/Add_Login", "main", "Add login"), false);
        assert_eq!(p["number"], "7");
        assert_eq!(p["branch_slug"], "feature-add-login");
        assert_eq!(p["head_short_sha"], "01234567");
        assert_eq!(p["head_short_sha_7"], "0123456");
        assert!(!p.contains_key("labels"));
        let p = params(pr("b", "main", "t"), true);
        assert_eq!(p["labels"], serde_json::json!(["preview"]));
    }

    #[test]
    fn labels_all_must_match() {
        let got = vec!["a".to_owned(), "b".to_owned()];
        assert!(has_labels(&["a".into()], &got));
        assert!(has_labels(&[], &got));
        assert!(!has_labels(&["a".into(), "c".into()], &got));
    }
}
