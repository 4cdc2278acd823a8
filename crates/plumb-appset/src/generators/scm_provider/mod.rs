//! The `scmProvider` generator: one parameter set per repository (and branch) of an
//! organisation on a forge, as Argo's `applicationset/generators/scm_provider.go`. Gitea and
//! GitHub are supported; GitLab, Bitbucket, Bitbucket Server, Azure DevOps and AWS CodeCommit are
//! refused with an error that says so (a generator error never deletes anything).

mod filters;
pub(crate) mod forge;
mod gitea;
mod github;
mod provider;
mod repository;
pub(crate) mod shared;

pub(crate) use gitea::api_base as gitea_api_base;
pub(crate) use github::{api_base as github_api_base, forge as github_forge};

use plumb_model::applicationset::{ApplicationSet, ScmProviderGenerator};
use serde_json::Value;

use super::values::{Mode, append_values, sanitize_name};
use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;
use provider::Provider;
use repository::Repository;
use shared::{check_allowed, required, token, unsupported};

/// The parameter sets of one `scmProvider` generator.
pub async fn generate(
    spec: &ScmProviderGenerator,
    set: &ApplicationSet,
    ctx: &Context,
) -> Result<Vec<Params>, GeneratorError> {
    check_allowed(ctx, custom_api_url(spec))?;
    let filters = filters::compile_all(spec.filters.as_deref().unwrap_or_default())?;
    let provider = provider(spec, set, ctx).await?;
    let protocol = spec.clone_protocol.as_deref().unwrap_or_default();
    let repos = filters::list(&provider, &filters, protocol, ctx.limits.max_params).await?;
    let mode = Mode::of(set);
    let mut out = Vec::with_capacity(repos.len());
    for repo in repos {
        let mut params = params(repo);
        append_values(spec.values.as_ref(), &mut params, mode)?;
        out.push(params);
    }
    Ok(out)
}

/// Argo's parameters of one repository and branch.
fn params(repo: Repository) -> Params {
    let short = |n: usize| repo.sha.chars().take(n).collect::<String>();
    let mut p = Params::new();
    let mut put = |k: &str, v: Value| {
        p.insert(k.to_owned(), v);
    };
    put("organization", Value::String(repo.organization.clone()));
    put("repository", Value::String(repo.repository.clone()));
    put("repository_id", Value::from(repo.repository_id));
    put("url", Value::String(repo.url.clone()));
    put("branch", Value::String(repo.branch.clone()));
    put("sha", Value::String(repo.sha.clone()));
    put("short_sha", Value::String(short(8)));
    put("short_sha_7", Value::String(short(7)));
    put("labels", Value::String(repo.labels.join(",")));
    put(
        "branchNormalized",
        Value::String(sanitize_name(&repo.branch)),
    );
    p
}

/// Argo's `CustomApiUrl`: the `api` of the configured provider ("" for github.com).
fn custom_api_url(spec: &ScmProviderGenerator) -> &str {
    let api = if let Some(g) = &spec.github {
        g.api.as_deref()
    } else if let Some(g) = &spec.gitlab {
        g.api.as_deref()
    } else if let Some(g) = &spec.gitea {
        g.api.as_deref()
    } else if let Some(g) = &spec.bitbucket_server {
        g.api.as_deref()
    } else if let Some(g) = &spec.azure_dev_ops {
        g.api.as_deref()
    } else {
        None
    };
    api.unwrap_or_default()
}

async fn provider(
    spec: &ScmProviderGenerator,
    set: &ApplicationSet,
    ctx: &Context,
) -> Result<Provider, GeneratorError> {
    if let Some(g) = &spec.github {
        if g.app_secret_name.as_deref().is_some_and(|s| !s.is_empty()) {
            return Err(GeneratorError::Invalid(
                "scmProvider.github.appSecretName: GitHub App authentication is not supported by Plumb yet; use tokenRef".to_owned(),
            ));
        }
        let base = github::api_base(g.api.as_deref(), "scmProvider.github.api")?;
        let token = token(
            ctx,
            set,
            g.token_ref.as_ref(),
            "scmProvider.github.tokenRef",
        )
        .await?;
        return Ok(Provider::Github(github::Github {
            forge: github::forge(&ctx.http, base, token, &ctx.limits)?,
            organization: required(g.organization.as_deref(), "scmProvider.github.organization")?,
            all_branches: g.all_branches.unwrap_or(false),
            exclude_archived: g.exclude_archived_repos.unwrap_or(false),
        }));
    }
    if spec.gitlab.is_some() {
        return Err(unsupported("scmProvider", "gitlab"));
    }
    if let Some(g) = &spec.gitea {
        let base = gitea::api_base(
            g.api.as_deref().unwrap_or_default(),
            "scmProvider.gitea.api",
        )?;
        let token = token(ctx, set, g.token_ref.as_ref(), "scmProvider.gitea.tokenRef").await?;
        let insecure = g.insecure.unwrap_or(false);
        return Ok(Provider::Gitea(gitea::Gitea {
            forge: forge::Forge::new(
                "Gitea",
                &ctx.http,
                base,
                token,
                "token",
                insecure,
                &ctx.limits,
            )?,
            owner: required(g.owner.as_deref(), "scmProvider.gitea.owner")?,
            all_branches: g.all_branches.unwrap_or(false),
            exclude_archived: g.exclude_archived_repos.unwrap_or(false),
        }));
    }
    let other = [
        (spec.bitbucket_server.is_some(), "bitbucketServer"),
        (spec.azure_dev_ops.is_some(), "azureDevOps"),
        (spec.bitbucket.is_some(), "bitbucket"),
        (spec.aws_code_commit.is_some(), "awsCodeCommit"),
    ];
    match other.iter().find(|(set, _)| *set) {
        Some((_, name)) => Err(unsupported("scmProvider", name)),
        None => Err(GeneratorError::Invalid(
            "no SCM provider implementation configured".to_owned(),
        )),
    }
}
