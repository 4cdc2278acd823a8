//! What an AppProject permits, decided as Argo CD decides it
//! (`pkg/apis/application/v1alpha1/app_project_types.go`: `IsSourcePermitted`,
//! `IsDestinationPermitted`, `IsGroupKindNamePermitted`, `IsResourcePermitted`,
//! `IsAppNamespacePermitted`; messages from `util/argo/argo.go` and the controller's sync).
//!
//! Two entry points:
//! - [`check_application`]: the Application itself (every source repository, the destination,
//!   the namespace the Application lives in);
//! - [`check_resource`]: one object it would manage (its group/kind against the resource lists,
//!   and a namespaced object's own namespace against the destinations).
//!
//! # Messages
//!
//! Every refusal is a [`Violation`] whose message is Argo's message followed by the rule that
//! refused in parentheses, with the deny pattern when a `!` pattern decided:
//!
//! ```text
//! application repo https://github.com/acme/x.git is not permitted in project 'payments' (sourceRepos)
//! application repo https://github.com/acme/legacy.git is not permitted in project 'payments' (sourceRepos: denied by '!https://github.com/acme/legacy')
//! application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' do not match any of the allowed destinations in project 'payments' (destinations: denied by namespace '!kube-system')
//! application 'web' in namespace 'team-a' is not allowed to use project payments (sourceNamespaces)
//! resource rbac.authorization.k8s.io:ClusterRole is not permitted in project payments (clusterResourceWhitelist)
//! namespace kube-system is not permitted in project 'payments' (destinations)
//! ```
//!
//! Argo's text stays a prefix, so anything matching Argo's messages keeps working.
//!
//! ```
//! use plumb_model::application::{AppProject, Application};

//! use plumb_policy::project::{Destination, Rule, check_application, check_resource};
//!
//! let project: AppProject = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "payments", "namespace": "argocd"},
//!     "spec": {"sourceRepos": ["https://git.acme.internal/apps/*"],
//!              "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "payments-*"}]}
//! })).unwrap();
//! let app: Application = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "payments-api", "namespace": "argocd"},
//!     "spec": {"project": "payments",
//!              "source": {"repoURL": "https://git.acme.internal/apps/payments.git", "path": "k8s"},
//!              "destination": {"server": "https://kubernetes.default.svc", "namespace": "payments-prod"}}
//! })).unwrap();
//! let dest = Destination { server: "https://kubernetes.default.svc", name: "in-cluster", namespace: "payments-prod" };
//! assert!(check_application(&project, &app, "argocd", &dest).is_empty());
//!
//! let refused = check_resource(&project, "", "Namespace", "payments", false, "", &dest).unwrap_err();
//! assert_eq!(refused.rule, Rule::ClusterResourceWhitelist);
//! assert_eq!(refused.to_string(), "resource :Namespace is not permitted in project payments (clusterResourceWhitelist)");
//! ```
//!
//! Project-scoped repositories and clusters (Secrets with a `project` key) and
//! `permitOnlyProjectScopedClusters` are in [`scoped`]: the caller checks the
//! [`scoped::virtual_project`] and adds [`scoped::scoped_cluster_refusal`].

pub mod repo_url;
pub mod scoped;
pub mod update;
mod validate;

pub use validate::{
    InvalidCode, InvalidProject, PROJECT_SCOPED_RESOURCES, validate_group, validate_policy,
    validate_project, validate_role,
};

use std::fmt;

use plumb_model::GroupKind;
use plumb_model::application::{
    AppProject, Application, ApplicationDestination, ClusterResourceRestrictionItem,
};

use crate::pattern;

/// A destination as the caller resolved it: both the cluster's server URL and its name (from
/// the Application's `destination` plus the cluster list), and a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Destination<'a> {
    /// Cluster API URL (`https://kubernetes.default.svc` for the local cluster).
    pub server: &'a str,
    /// Cluster name (`in-cluster` for the local cluster).
    pub name: &'a str,
    /// Namespace.
    pub namespace: &'a str,
}

/// The AppProject field that refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// `spec.sourceRepos`.
    SourceRepos,
    /// `spec.destinations`.
    Destinations,
    /// `spec.sourceNamespaces`.
    SourceNamespaces,
    /// `spec.clusterResourceWhitelist`.
    ClusterResourceWhitelist,
    /// `spec.clusterResourceBlacklist`.
    ClusterResourceBlacklist,
    /// `spec.namespaceResourceWhitelist`.
    NamespaceResourceWhitelist,
    /// `spec.namespaceResourceBlacklist`.
    NamespaceResourceBlacklist,
    /// `spec.permitOnlyProjectScopedClusters`.
    PermitOnlyProjectScopedClusters,
}

impl Rule {
    /// The field name as written in an AppProject (`clusterResourceWhitelist`).
    pub fn field(self) -> &'static str {
        match self {
            Rule::SourceRepos => "sourceRepos",
            Rule::Destinations => "destinations",
            Rule::SourceNamespaces => "sourceNamespaces",
            Rule::ClusterResourceWhitelist => "clusterResourceWhitelist",
            Rule::ClusterResourceBlacklist => "clusterResourceBlacklist",
            Rule::NamespaceResourceWhitelist => "namespaceResourceWhitelist",
            Rule::NamespaceResourceBlacklist => "namespaceResourceBlacklist",
            Rule::PermitOnlyProjectScopedClusters => "permitOnlyProjectScopedClusters",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field())
    }
}

/// Something the project does not permit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule that refused.
    pub rule: Rule,
    /// Argo's message followed by the rule in parentheses (see the module docs).
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Violation {}

impl Violation {
    fn new(rule: Rule, argo_message: String, denied_by: Option<String>) -> Self {
        let message = match denied_by {
            Some(pattern) => format!("{argo_message} ({rule}: denied by {pattern})"),
            None => format!("{argo_message} ({rule})"),
        };
        Self { rule, message }
    }
}

/// Why a list of patterns refused: nothing matched, or a deny pattern did.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    NoMatch,
    Denied(String),
}

impl Refusal {
    fn denied_by(self) -> Option<String> {
        match self {
            Refusal::NoMatch => None,
            Refusal::Denied(p) => Some(p),
        }
    }
}

fn project_name(project: &AppProject) -> &str {
    project.metadata.name.as_deref().unwrap_or_default()
}

fn is_deny(pattern: &str) -> bool {
    pattern.starts_with('!')
}

// Argo's `globMatch(pattern, val, allowNegation=true, seps...)`: a `!pattern` matches what the
// pattern does not; a plain `*` matches anything even across separators.
fn glob_match(pattern: &str, value: &str, separators: &[char]) -> bool {
    if let Some(positive) = pattern.strip_prefix('!') {
        return !pattern::glob(positive, value, separators);
    }
    pattern == "*" || pattern::glob(pattern, value, separators)
}

/// Whether `spec.sourceRepos` permits the repository: some pattern matches its normalized URL
/// and no `!` pattern excludes it.
pub fn source_permitted(project: &AppProject, repo_url: &str) -> bool {
    source_refusal(project, repo_url).is_none()
}

fn source_refusal(project: &AppProject, repo_url: &str) -> Option<Refusal> {
    let source = repo_url::normalize(repo_url);
    let mut any = false;
    for pattern in project.spec.source_repos.iter().flatten() {
        let normalized = match pattern.strip_prefix('!') {
            Some(positive) => format!("!{}", repo_url::normalize(positive)),
            None => repo_url::normalize(pattern),
        };
        if glob_match(&normalized, &source, &['/']) {
            any = true;
        } else if is_deny(&normalized) {
            return Some(Refusal::Denied(format!("'{pattern}'")));
        }
    }
    (!any).then_some(Refusal::NoMatch)
}

/// Whether `spec.destinations` permits the destination: some entry matches the server or the
/// name, and the namespace, and no entry's `!` pattern excludes it.
pub fn destination_permitted(project: &AppProject, dest: &Destination) -> bool {
    destination_refusal(project, dest).is_none()
}

fn destination_refusal(project: &AppProject, dest: &Destination) -> Option<Refusal> {
    let mut any = false;
    let mut denied: Option<String> = None;
    for item in project.spec.destinations.iter().flatten() {
        let (server, name, namespace) = destination_patterns(item);
        let name_ok = !dest.name.is_empty() && glob_match(name, dest.name, &[]);
        let server_ok = !dest.server.is_empty() && glob_match(server, dest.server, &[]);
        let namespace_ok = glob_match(namespace, dest.namespace, &[]);
        if (server_ok || name_ok) && namespace_ok {
            any = true;
        } else if denied.is_none() {
            denied = if !name_ok && is_deny(name) {
                Some(format!("name '{name}'"))
            } else if !server_ok && is_deny(server) {
                Some(format!("server '{server}'"))
            } else if !namespace_ok && is_deny(namespace) {
                Some(format!("namespace '{namespace}'"))
            } else {
                None
            };
        }
    }
    match denied {
        Some(pattern) => Some(Refusal::Denied(pattern)),
        None => (!any).then_some(Refusal::NoMatch),
    }
}

fn destination_patterns(item: &ApplicationDestination) -> (&str, &str, &str) {
    (
        item.server.as_deref().unwrap_or_default(),
        item.name.as_deref().unwrap_or_default(),
        item.namespace.as_deref().unwrap_or_default(),
    )
}

/// Whether an Application living in `app_namespace` may use the project: always in the control
/// namespace (or with no namespace yet), elsewhere only when `spec.sourceNamespaces` matches
/// (globs, or regular expressions written `/.../`).
pub fn app_namespace_permitted(
    project: &AppProject,
    app_namespace: &str,
    control_namespace: &str,
) -> bool {
    if app_namespace.is_empty() || app_namespace == control_namespace {
        return true;
    }
    namespace_in_list(
        project
            .spec
            .source_namespaces
            .as_deref()
            .unwrap_or_default(),
        app_namespace,
    )
}

/// Whether `namespace` matches one of `patterns`: globs, or regular expressions written
/// `/.../` (Argo's `glob.MatchStringInList(list, ns, glob.REGEXP)`, used for an AppProject's
/// `sourceNamespaces` and for the controller's `--application-namespaces`).
pub fn namespace_in_list(patterns: &[String], namespace: &str) -> bool {
    patterns.iter().any(|p| {
        // `len > 2` as Argo's `MatchStringInList`: `//` is a glob matching only `//`, not an
        // empty regular expression matching every namespace.
        let regex = p.len() > 2 && p.starts_with('/') && p.ends_with('/');
        (regex && pattern::regex(&p[1..p.len() - 1], namespace)) || pattern::glob(p, namespace, &[])
    })
}

/// Argo's error when an Application outside the control namespace names a project whose
/// `sourceNamespaces` does not list its namespace (`argo.ErrProjectNotPermitted`; the
/// controller reports it as an `UnknownError` condition and does nothing else).
pub fn project_not_permitted_message(app_name: &str, app_namespace: &str, project: &str) -> String {
    format!(
        "application '{app_name}' in namespace '{app_namespace}' is not permitted to use project '{project}'"
    )
}

/// Whether the resource lists permit an object (Argo's `IsGroupKindNamePermitted`): for
/// namespaced kinds an absent `namespaceResourceWhitelist` permits all (an explicit empty one
/// none); cluster-scoped objects need an entry in `clusterResourceWhitelist` whose group, kind
/// and, when it has one, name pattern match; a blacklist entry refuses in both cases. Names
/// only count for cluster-scoped objects: the namespaced lists are plain group/kind lists.
pub fn group_kind_permitted(
    project: &AppProject,
    group: &str,
    kind: &str,
    name: &str,
    namespaced: bool,
) -> bool {
    group_kind_refusal(project, group, kind, name, namespaced).is_none()
}

fn group_kind_refusal(
    project: &AppProject,
    group: &str,
    kind: &str,
    name: &str,
    namespaced: bool,
) -> Option<(Rule, Option<String>)> {
    let spec = &project.spec;
    if namespaced {
        let black = spec.namespace_resource_blacklist.iter().flatten();
        if let Some(entry) = black.into_iter().find(|e| in_list(e, group, kind)) {
            return Some((
                Rule::NamespaceResourceBlacklist,
                Some(format!("'{}:{}'", entry.group, entry.kind)),
            ));
        }
        let whitelisted = match &spec.namespace_resource_whitelist {
            None => true,
            Some(list) => list.iter().any(|e| in_list(e, group, kind)),
        };
        return (!whitelisted).then_some((Rule::NamespaceResourceWhitelist, None));
    }
    let black = spec.cluster_resource_blacklist.iter().flatten();
    if let Some(entry) = black
        .into_iter()
        .find(|e| in_named_list(e, group, kind, name))
    {
        let denied = match entry.name_pattern() {
            "" => format!("'{}:{}'", entry.group, entry.kind),
            pattern => format!("'{}:{}' named '{pattern}'", entry.group, entry.kind),
        };
        return Some((Rule::ClusterResourceBlacklist, Some(denied)));
    }
    let whitelisted = spec
        .cluster_resource_whitelist
        .iter()
        .flatten()
        .any(|e| in_named_list(e, group, kind, name));
    (!whitelisted).then_some((Rule::ClusterResourceWhitelist, None))
}

// Argo's `isResourceInList`: kind and group are `filepath.Match` patterns.
fn in_list(entry: &GroupKind, group: &str, kind: &str) -> bool {
    pattern::filepath(&entry.kind, kind) && pattern::filepath(&entry.group, group)
}

// Argo's `isNamedResourceInList`: kind and group as above, then the name, a `filepath.Match`
// pattern too, when the entry has one (an empty name matches every object of the kind).
fn in_named_list(
    entry: &ClusterResourceRestrictionItem,
    group: &str,
    kind: &str,
    name: &str,
) -> bool {
    pattern::filepath(&entry.kind, kind)
        && pattern::filepath(&entry.group, group)
        && match entry.name_pattern() {
            "" => true,
            pattern => pattern::filepath(pattern, name),
        }
}

/// The repository of every source `app` names: the spec's sources (every one of them, as each
/// is rendered), the source hydrator's dry source, then the sources a requested operation
/// overrides them with (`operation.sync.source` and `operation.sync.sources`, written by a
/// rollback or by anyone who may edit the Application). Each must be permitted.
pub fn source_repos(app: &Application) -> Vec<&str> {
    let mut repos: Vec<&str> = app.sources().iter().map(|s| s.repo_url.as_str()).collect();
    if let Some(hydrator) = &app.spec.source_hydrator {
        repos.push(hydrator.dry_source.repo_url.as_str());
    }
    if let Some(sync) = app.operation.as_ref().and_then(|o| o.sync.as_ref()) {
        repos.extend(sync.source.iter().map(|s| s.repo_url.as_str()));
        repos.extend(sync.sources.iter().flatten().map(|s| s.repo_url.as_str()));
    }
    repos
}

/// Checks an Application against its project: the repository of every source (of the spec, or
/// of the source hydrator's dry source, and of a requested operation: [`source_repos`]), the
/// destination (`dest`, resolved by the caller), and the namespace the Application lives in.
/// Returns every violation, in that order.
pub fn check_application(
    project: &AppProject,
    app: &Application,
    control_namespace: &str,
    dest: &Destination,
) -> Vec<Violation> {
    let name = project_name(project);
    let mut violations = Vec::new();
    if app.spec.source_hydrator.is_some() {
        violations.push(hydrator_refused());
    }
    let repos = source_repos(app);
    for (i, repo) in repos.iter().enumerate() {
        // One violation per repository, however many sources use it.
        if repos[..i].contains(repo) {
            continue;
        }
        if let Some(refusal) = source_refusal(project, repo) {
            violations.push(Violation::new(
                Rule::SourceRepos,
                format!("application repo {repo} is not permitted in project '{name}'"),
                refusal.denied_by(),
            ));
        }
    }
    if let Some(refusal) = destination_refusal(project, dest) {
        violations.push(Violation::new(
            Rule::Destinations,
            format!(
                "application destination server '{}' and namespace '{}' do not match any of the allowed destinations in project '{name}'",
                dest.server, dest.namespace
            ),
            refusal.denied_by(),
        ));
    }
    if !app_namespace_permitted(project, app.namespace(), control_namespace) {
        violations.push(Violation::new(
            Rule::SourceNamespaces,
            format!(
                "application '{}' in namespace '{}' is not allowed to use project {name}",
                app.name(),
                app.namespace()
            ),
            None,
        ));
    }
    violations
}

/// Plumb keeps `spec.sourceHydrator` but does not hydrate, so what it would render (the plain
/// sources) is not what a hydrator-aware reader checks (the dry source): an Application that sets
/// it is refused until hydration exists, so that what is checked is exactly what is rendered.
fn hydrator_refused() -> Violation {
    Violation::new(
        Rule::SourceRepos,
        "spec.sourceHydrator is not supported by Plumb yet: remove it and declare the \
         hydrated branch as spec.source (Plumb refuses it rather than render sources other \
         than the ones the project checks)"
            .to_string(),
        None,
    )
}

/// Checks one object an Application would manage: its group/kind (and, cluster-scoped, its
/// `name`) against the resource lists, then, for a namespaced object, its own `namespace`
/// against the destinations on the cluster of `dest` (whose namespace is not used: objects may
/// name another namespace).
pub fn check_resource(
    project: &AppProject,
    group: &str,
    kind: &str,
    object_name: &str,
    namespaced: bool,
    namespace: &str,
    dest: &Destination,
) -> Result<(), Violation> {
    let name = project_name(project);
    if let Some((rule, denied_by)) =
        group_kind_refusal(project, group, kind, object_name, namespaced)
    {
        return Err(Violation::new(
            rule,
            format!("resource {group}:{kind} is not permitted in project {name}"),
            denied_by,
        ));
    }
    if namespaced {
        let target = Destination { namespace, ..*dest };
        if let Some(refusal) = destination_refusal(project, &target) {
            return Err(Violation::new(
                Rule::Destinations,
                format!("namespace {namespace} is not permitted in project '{name}'"),
                refusal.denied_by(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
