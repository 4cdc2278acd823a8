//! Generators of an ApplicationSet, as Argo CD names them (`ApplicationSetGenerator` and the
//! types it holds). One type serves every nesting level: Argo limits matrix and merge to two levels
//! with separate Go types; Plumb checks the depth when it generates.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::template::ApplicationSetTemplate;

/// One generator of `spec.generators` (also nested in matrix and merge); exactly one kind is set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationSetGenerator {
    /// Literal parameter sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<ListGenerator>,
    /// One parameter set per registered cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<ClusterGenerator>,
    /// Directories or files of a Git repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitGenerator>,
    /// Repositories of an SCM organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scm_provider: Option<ScmProviderGenerator>,
    /// Clusters listed in a custom resource's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_decision_resource: Option<DuckTypeGenerator>,
    /// Open pull requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<PullRequestGenerator>,
    /// The cartesian product of two generators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Box<MatrixGenerator>>,
    /// Parameter sets merged by keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<Box<MergeGenerator>>,
    /// Keep only parameter sets matching these labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// An HTTP plugin service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginGenerator>,
    /// Argo's OCI generator (not supported: refused with a condition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci: Option<Value>,
}

/// `list`: literal elements.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListGenerator {
    /// The parameter sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<Vec<Value>>,
    /// Elements as a YAML string (usually templated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements_yaml: Option<String>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
}

/// `clusters`: registered clusters (Secrets labelled `argocd.argoproj.io/secret-type: cluster`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterGenerator {
    /// Only clusters whose Secret matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
    /// Extra parameters under `values.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, String>>,
    /// One parameter set holding all clusters as `clusters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flat_list: Option<bool>,
}

/// `clusterDecisionResource`: clusters named in a resource's `status.decisions`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DuckTypeGenerator {
    /// ConfigMap naming the resource's apiVersion, kind and status list key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<String>,
    /// Resource name (or use `labelSelector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Re-evaluation interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_after_seconds: Option<i64>,
    /// Resources matching these labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
    /// Extra parameters under `values.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, String>>,
}

/// `git`: directories or files of a repository.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitGenerator {
    /// Repository URL.
    #[serde(rename = "repoURL", default, skip_serializing_if = "Option::is_none")]
    pub repo_url: Option<String>,
    /// Directory globs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directories: Option<Vec<GitDirectoryGeneratorItem>>,
    /// File globs (JSON or YAML files whose content become parameters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<GitFileGeneratorItem>>,
    /// Revision to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Re-evaluation interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_after_seconds: Option<i64>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
    /// Prefix of the `path` parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_param_prefix: Option<String>,
    /// Extra parameters under `values.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, String>>,
}

/// A directory glob.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitDirectoryGeneratorItem {
    /// Glob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Exclude matches instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<bool>,
}

/// A file glob.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GitFileGeneratorItem {
    /// Glob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Exclude matches instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<bool>,
}

/// `scmProvider`: repositories of an organisation on a forge.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGenerator {
    /// GitHub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<ScmProviderGeneratorGithub>,
    /// GitLab (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitlab: Option<ScmProviderGeneratorGitlab>,
    /// Bitbucket Cloud (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitbucket: Option<ScmProviderGeneratorBitbucket>,
    /// Bitbucket Server (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitbucket_server: Option<ScmProviderGeneratorBitbucketServer>,
    /// Gitea.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitea: Option<ScmProviderGeneratorGitea>,
    /// Azure DevOps (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure_dev_ops: Option<ScmProviderGeneratorAzureDevOps>,
    /// AWS CodeCommit (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws_code_commit: Option<Value>,
    /// Filters; a repository passes if any filter matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<ScmProviderGeneratorFilter>>,
    /// `ssh` (default) or `https`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_protocol: Option<String>,
    /// Re-evaluation interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_after_seconds: Option<i64>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
    /// Extra parameters under `values.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, String>>,
}

/// Gitea organisation or user.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGeneratorGitea {
    /// Owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
    /// Every branch, not only the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
    /// Skip TLS verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// Leave archived repositories out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_archived_repos: Option<bool>,
}

/// GitHub organisation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGeneratorGithub {
    /// Organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// API base URL (GitHub Enterprise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
    /// GitHub App credentials Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_secret_name: Option<String>,
    /// Every branch, not only the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
    /// Leave archived repositories out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_archived_repos: Option<bool>,
}

/// GitLab group.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGeneratorGitlab {
    /// Group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Subgroups too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_subgroups: Option<bool>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
    /// Every branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
    /// Skip TLS verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// Shared projects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_shared_projects: Option<bool>,
    /// Topic filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// CA bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_ref: Option<ConfigMapKeyRef>,
    /// Archived repositories too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_archived_repos: Option<bool>,
}

/// Bitbucket Cloud workspace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGeneratorBitbucket {
    /// Workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// User.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// App password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_password_ref: Option<SecretRef>,
    /// Every branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
}

/// Bitbucket Server project.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGeneratorBitbucketServer {
    /// Project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Basic credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuthBitbucketServer>,
    /// Every branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
    /// Bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<BearerTokenBitbucket>,
    /// Skip TLS verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// CA bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_ref: Option<ConfigMapKeyRef>,
}

/// Azure DevOps team project.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGeneratorAzureDevOps {
    /// Organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Team project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_project: Option<String>,
    /// Access token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token_ref: Option<SecretRef>,
    /// Every branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_branches: Option<bool>,
}

/// A repository filter of `scmProvider`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScmProviderGeneratorFilter {
    /// Regular expression on the repository name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_match: Option<String>,
    /// Paths that must exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths_exist: Option<Vec<String>>,
    /// Paths that must not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths_do_not_exist: Option<Vec<String>>,
    /// Regular expression on a label or topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_match: Option<String>,
    /// Regular expression on the branch name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_match: Option<String>,
}

/// `pullRequest`: open pull requests of a repository.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGenerator {
    /// GitHub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<PullRequestGeneratorGithub>,
    /// GitLab (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitlab: Option<PullRequestGeneratorGitLab>,
    /// Gitea.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitea: Option<PullRequestGeneratorGitea>,
    /// Bitbucket Server (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitbucket_server: Option<PullRequestGeneratorBitbucketServer>,
    /// Filters; a pull request passes if any matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<PullRequestGeneratorFilter>>,
    /// Re-evaluation interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_after_seconds: Option<i64>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
    /// Bitbucket Cloud (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitbucket: Option<PullRequestGeneratorBitbucket>,
    /// Azure DevOps (not supported yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azuredevops: Option<PullRequestGeneratorAzureDevOps>,
    /// Extra parameters under `values.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, String>>,
    /// A missing repository gives no parameters instead of an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_on_repo_not_found_error: Option<bool>,
}

/// Gitea repository.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGeneratorGitea {
    /// Owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
    /// Skip TLS verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// Only pull requests with all these labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
}

/// GitHub repository.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGeneratorGithub {
    /// Owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
    /// GitHub App credentials Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_secret_name: Option<String>,
    /// Only pull requests with all these labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
}

/// GitLab project.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGeneratorGitLab {
    /// Project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// State.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request_state: Option<String>,
    /// Skip TLS verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// CA bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_ref: Option<ConfigMapKeyRef>,
}

/// Bitbucket Server repository.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGeneratorBitbucketServer {
    /// Project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Basic credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuthBitbucketServer>,
    /// Bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<BearerTokenBitbucket>,
    /// Skip TLS verification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure: Option<bool>,
    /// CA bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_ref: Option<ConfigMapKeyRef>,
}

/// Bitbucket Cloud repository.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGeneratorBitbucket {
    /// Owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Basic credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuthBitbucketServer>,
    /// Bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<BearerTokenBitbucket>,
}

/// Azure DevOps repository.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGeneratorAzureDevOps {
    /// Organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// Project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// API base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
}

/// A pull request filter.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestGeneratorFilter {
    /// Regular expression on the source branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_match: Option<String>,
    /// Regular expression on the target branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_branch_match: Option<String>,
    /// Regular expression on the title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_match: Option<String>,
}

/// `matrix`: every combination of the parameter sets of two generators.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatrixGenerator {
    /// The two generators (the second may use the first's parameters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generators: Option<Vec<ApplicationSetGenerator>>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
}

/// `merge`: parameter sets of later generators merged into the first's by keys.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergeGenerator {
    /// The generators; the first is the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generators: Option<Vec<ApplicationSetGenerator>>,
    /// Keys identifying the same parameter set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_keys: Option<Vec<String>>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
}

/// `plugin`: parameters from an HTTP plugin service.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginGenerator {
    /// ConfigMap with the service's `baseUrl` and `token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<PluginConfigMapRef>,
    /// Input sent to the service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<PluginInput>,
    /// Re-evaluation interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_after_seconds: Option<i64>,
    /// Template override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<ApplicationSetTemplate>,
    /// Extra parameters under `values.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<BTreeMap<String, String>>,
}

/// The plugin's ConfigMap.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginConfigMapRef {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Input of a plugin call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginInput {
    /// Parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<BTreeMap<String, Value>>,
}

/// A key of a Secret in the ApplicationSet's namespace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    /// Secret name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_name: Option<String>,
    /// Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// A key of a ConfigMap.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapKeyRef {
    /// ConfigMap name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_name: Option<String>,
    /// Key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// Basic credentials.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BasicAuthBitbucketServer {
    /// User name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_ref: Option<SecretRef>,
}

/// Bearer token.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BearerTokenBitbucket {
    /// Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ref: Option<SecretRef>,
}

/// A Kubernetes label selector.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Equality requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Set requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

/// A set-based selector requirement.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// Label key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// Values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}
