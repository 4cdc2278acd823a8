//! Whether an AppProject may be stored, checked as Argo CD's API server checks it before a
//! create or an update (`AppProject.ValidateProject` in
//! `pkg/apis/application/v1alpha1/app_project_types.go`, `validatePolicy`, `validateRoleName`,
//! `validateGroupName` in `types.go`), with Argo's messages. The CLI checks a project with it
//! before writing in core mode, and `plumb server` before every create and update, so a project
//! nobody could enforce never reaches the cluster.

use std::collections::BTreeSet;

use plumb_model::application::{AppProject, ProjectRole, SyncWindow};

use crate::pattern;
use crate::windows;

/// The gRPC code Argo answers an invalid project with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidCode {
    /// A field is malformed (`codes.InvalidArgument`).
    InvalidArgument,
    /// A role, policy, group or window appears twice (`codes.AlreadyExists`).
    AlreadyExists,
    /// A window selects nothing (`codes.OutOfRange`).
    OutOfRange,
}

/// Why a project may not be stored; the message is Argo's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InvalidProject {
    /// Argo's gRPC code for it.
    pub code: InvalidCode,
    /// Argo's message.
    pub message: String,
}

fn invalid(message: String) -> InvalidProject {
    InvalidProject {
        code: InvalidCode::InvalidArgument,
        message,
    }
}

fn exists(message: String) -> InvalidProject {
    InvalidProject {
        code: InvalidCode::AlreadyExists,
        message,
    }
}

/// Argo's project-scoped RBAC resources (`rbac.ProjectScoped`).
pub const PROJECT_SCOPED_RESOURCES: [&str; 6] = [
    "applications",
    "applicationsets",
    "logs",
    "exec",
    "clusters",
    "repositories",
];

/// Characters a destination's default service account may not hold.
const SERVICE_ACCOUNT_DISALLOWED: &[char] = &['!', '*', '[', ']', '{', '}', '\\', '/'];

/// Checks a whole project, in Argo's order: destinations, source namespaces, source
/// repositories, roles, sync windows, destination service accounts.
pub fn validate_project(project: &AppProject) -> Result<(), InvalidProject> {
    let name = project.metadata.name.as_deref().unwrap_or_default();
    let spec = &project.spec;
    destinations(project)?;
    unique(spec.source_namespaces.iter().flatten(), "source namespace")?;
    for src in spec.source_repos.iter().flatten() {
        if src == "!*" {
            return Err(invalid(
                "source repository has an invalid format, '!*'".into(),
            ));
        }
    }
    unique(spec.source_repos.iter().flatten(), "source repository")?;
    let mut roles = BTreeSet::new();
    for role in spec.roles.iter().flatten() {
        if !roles.insert(role.name.as_str()) {
            return Err(exists(format!("role '{}' already exists", role.name)));
        }
        validate_role(name, role)?;
    }
    sync_windows(spec.sync_windows.as_deref().unwrap_or_default())?;
    service_accounts(project)
}

fn unique<'a>(values: impl Iterator<Item = &'a String>, what: &str) -> Result<(), InvalidProject> {
    let mut seen = BTreeSet::new();
    for v in values {
        if !seen.insert(v.as_str()) {
            return Err(invalid(format!("{what} '{v}' already added")));
        }
    }
    Ok(())
}

fn destinations(project: &AppProject) -> Result<(), InvalidProject> {
    let mut seen = BTreeSet::new();
    for d in project.spec.destinations.iter().flatten() {
        let name = d.name.as_deref().unwrap_or_default();
        let server = d.server.as_deref().unwrap_or_default();
        let namespace = d.namespace.as_deref().unwrap_or_default();
        for (value, what) in [(name, "name"), (server, "server"), (namespace, "namespace")] {
            if value == "!*" {
                return Err(invalid(format!("{what} has an invalid format, '!*'")));
            }
        }
        let cluster = if server.is_empty() && !name.is_empty() {
            name
        } else {
            server
        };
        let key = format!("{cluster}/{namespace}");
        if !seen.insert(key.clone()) {
            return Err(invalid(format!("destination '{key}' already added")));
        }
    }
    Ok(())
}

/// One role: its name, its policies (each once, each Argo's form for this project and role) and
/// its groups.
pub fn validate_role(project: &str, role: &ProjectRole) -> Result<(), InvalidProject> {
    if !role_name_ok(&role.name) {
        return Err(invalid(format!(
            "invalid role name '{}'. Must consist of alphanumeric characters, '-' or '_', and must start and end with an alphanumeric character",
            role.name
        )));
    }
    let mut seen = BTreeSet::new();
    for policy in role.policies.iter().flatten() {
        if !seen.insert(policy.as_str()) {
            return Err(exists(format!(
                "policy '{policy}' already exists for role '{}'",
                role.name
            )));
        }
        validate_policy(project, &role.name, policy)?;
    }
    let mut seen = BTreeSet::new();
    for group in role.groups.iter().flatten() {
        if !seen.insert(group.as_str()) {
            return Err(exists(format!(
                "group '{group}' already exists for role '{}'",
                role.name
            )));
        }
        validate_group(group)?;
    }
    Ok(())
}

fn role_name_ok(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    name.chars().all(ok) && edge(name.chars().next()) && edge(name.chars().last())
}

/// One policy line of a project role: `p, proj:<project>:<role>, <resource>, <action>,
/// <project>/<object>, allow|deny`.
pub fn validate_policy(project: &str, role: &str, policy: &str) -> Result<(), InvalidProject> {
    let parts: Vec<&str> = policy.split(',').map(|p| p.trim_matches(' ')).collect();
    let refuse = |why: String| Err(invalid(format!("invalid policy rule '{policy}': {why}")));
    let [p, subject, resource, action, object, effect] = parts[..] else {
        return refuse("must be of the form: 'p, sub, res, act, obj, eft'".into());
    };
    if p != "p" {
        return refuse("must be of the form: 'p, sub, res, act, obj, eft'".into());
    }
    let expected = format!("proj:{project}:{role}");
    if subject != expected {
        return refuse(format!(
            "policy subject must be: '{expected}', not '{subject}'"
        ));
    }
    if !PROJECT_SCOPED_RESOURCES.contains(&resource) {
        return refuse(format!(
            "project resource must be: 'applications', 'applicationsets', 'repositories', 'exec', 'logs' or 'clusters', not '{resource}'"
        ));
    }
    if !action_ok(action) {
        return refuse(format!("invalid action '{action}'"));
    }
    if !object_ok(project, object) {
        return refuse(format!(
            "object must be of form '{project}/*', '{project}[/<NAMESPACE>]/<APPNAME>' or '{project}/<APPNAME>', not '{object}'"
        ));
    }
    if effect != "allow" && effect != "deny" {
        return refuse("effect must be: 'allow' or 'deny'".into());
    }
    Ok(())
}

fn action_ok(action: &str) -> bool {
    const ACTIONS: [&str; 8] = [
        "get", "create", "update", "delete", "sync", "override", "rollback", "*",
    ];
    // Argo's patterns `action/.*`, `update/.*`, `delete/.*` are unanchored regular expressions.
    ACTIONS.contains(&action)
        || ["action/", "update/", "delete/"]
            .iter()
            .any(|p| action.contains(p))
}

/// `^<project>(/[*\w-.]+)?/[*\w-.]+$`.
fn object_ok(project: &str, object: &str) -> bool {
    let Some(rest) = object
        .strip_prefix(project)
        .and_then(|r| r.strip_prefix('/'))
    else {
        return false;
    };
    let part = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c == '*' || c == '-' || c == '.' || c == '_' || c.is_alphanumeric())
    };
    match rest.split('/').collect::<Vec<_>>()[..] {
        [app] => part(app),
        [ns, app] => part(ns) && part(app),
        _ => false,
    }
}

/// Argo's `validateGroupName`.
pub fn validate_group(group: &str) -> Result<(), InvalidProject> {
    let trimmed = group.trim();
    let inner = if trimmed.len() > 1 && trimmed.starts_with('"') && trimmed.ends_with('"') {
        &trimmed[1..trimmed.len() - 1]
    } else if trimmed.contains(',') {
        return Err(invalid(format!("group '{trimmed}' must be quoted")));
    } else {
        trimmed
    };
    if inner.is_empty() {
        return Err(invalid(format!("group '{inner}' is empty")));
    }
    if inner.contains(['"', '\n', '\r', '\t']) {
        return Err(invalid(format!(
            "group '{inner}' contains invalid characters"
        )));
    }
    let chars: Vec<char> = group.chars().collect();
    if chars.len() > 1 && chars[0].is_whitespace() {
        return Err(invalid(format!("group '{inner}' contains a leading space")));
    }
    if chars.len() > 1 && chars[chars.len() - 1].is_whitespace() {
        return Err(invalid(format!(
            "group '{inner}' contains a trailing space"
        )));
    }
    Ok(())
}

/// What makes two windows the same window for Argo (`HashIdentity`: all but `manualSync`,
/// `description` and `syncOverrun`).
fn identity(w: &SyncWindow) -> String {
    let zone = w.time_zone.as_deref().filter(|z| !z.is_empty());
    serde_json::json!([
        w.kind,
        w.schedule,
        w.duration,
        w.applications,
        w.namespaces,
        w.clusters,
        zone.unwrap_or("UTC"),
        w.and_operator.unwrap_or(false),
    ])
    .to_string()
}

fn sync_windows(list: &[SyncWindow]) -> Result<(), InvalidProject> {
    let mut seen = BTreeSet::new();
    for (i, w) in list.iter().enumerate() {
        let kind = w.kind.as_deref().unwrap_or_default();
        let schedule = w.schedule.as_deref().unwrap_or_default();
        let duration = w.duration.as_deref().unwrap_or_default();
        if !seen.insert(identity(w)) {
            return Err(exists(format!(
                "sync window with kind '{kind}', schedule '{schedule}', and duration '{duration}' already exists (duplicate detected)"
            )));
        }
        if let Err(e) = windows::validate(w, i) {
            return Err(invalid(chain(&e)));
        }
        if w.description.as_deref().unwrap_or_default().len() > 255 {
            return Err(invalid("description must not exceed 255 characters".into()));
        }
        let empty = |l: &Option<Vec<String>>| l.as_deref().unwrap_or_default().is_empty();
        if empty(&w.applications) && empty(&w.namespaces) && empty(&w.clusters) {
            return Err(InvalidProject {
                code: InvalidCode::OutOfRange,
                message: format!(
                    "window '{kind}':'{schedule}':'{duration}' requires one of application, cluster or namespace"
                ),
            });
        }
    }
    Ok(())
}

/// An error and its causes, `: `-separated (what `{:#}` prints with anyhow).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

fn service_accounts(project: &AppProject) -> Result<(), InvalidProject> {
    let mut seen = BTreeSet::new();
    for a in project.spec.destination_service_accounts.iter().flatten() {
        let namespace = a.namespace.as_deref().unwrap_or_default();
        if a.server.contains('!') || !pattern::compiles(&a.server) {
            return Err(invalid(format!(
                "server has an invalid format, '{}'",
                a.server
            )));
        }
        if namespace.contains('!') || !pattern::compiles(namespace) {
            return Err(invalid(format!(
                "namespace has an invalid format, '{namespace}'"
            )));
        }
        let account = &a.default_service_account;
        if account.trim_matches(' ').is_empty() || account.contains(SERVICE_ACCOUNT_DISALLOWED) {
            return Err(invalid(format!(
                "defaultServiceAccount has an invalid format, '{account}'"
            )));
        }
        let key = format!("{}/{namespace}", a.server);
        if !seen.insert(key.clone()) {
            return Err(invalid(format!(
                "destinationServiceAccount '{key}' already added"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(spec: serde_json::Value) -> AppProject {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "payments"}, "spec": spec
        }))
        .unwrap()
    }

    fn message(spec: serde_json::Value) -> String {
        validate_project(&project(spec)).unwrap_err().message
    }

    #[test]
    fn a_plain_project_passes() {
        let p = project(serde_json::json!({
            "sourceRepos": ["*"],
            "destinations": [{"server": "*", "namespace": "*"}],
            "roles": [{"name": "ci", "policies": ["p, proj:payments:ci, applications, sync, payments/*, allow"],
                       "groups": ["my-org:team"]}],
            "syncWindows": [{"kind": "allow", "schedule": "0 22 * * *", "duration": "1h", "applications": ["*"]}],
        }));
        validate_project(&p).unwrap();
    }

    #[test]
    fn argo_messages() {
        let cases = [
            (
                serde_json::json!({"destinations": [{"server": "a", "namespace": "x"}, {"server": "a", "namespace": "x"}]}),
                "destination 'a/x' already added",
            ),
            (
                serde_json::json!({"sourceRepos": ["!*"]}),
                "source repository has an invalid format, '!*'",
            ),
            (
                serde_json::json!({"roles": [{"name": "ci", "policies": ["p, proj:other:ci, applications, get, other/*, allow"]}]}),
                "invalid policy rule 'p, proj:other:ci, applications, get, other/*, allow': policy subject must be: 'proj:payments:ci', not 'proj:other:ci'",
            ),
            (
                serde_json::json!({"roles": [{"name": "ci", "policies": ["p, proj:payments:ci, applications, get, other/*, allow"]}]}),
                "invalid policy rule 'p, proj:payments:ci, applications, get, other/*, allow': object must be of form 'payments/*', 'payments[/<NAMESPACE>]/<APPNAME>' or 'payments/<APPNAME>', not 'other/*'",
            ),
            (
                serde_json::json!({"roles": [{"name": "ci", "policies": ["p, proj:payments:ci, projects, get, payments/*, allow"]}]}),
                "invalid policy rule 'p, proj:payments:ci, projects, get, payments/*, allow': project resource must be: 'applications', 'applicationsets', 'repositories', 'exec', 'logs' or 'clusters', not 'projects'",
            ),
            (
                serde_json::json!({"roles": [{"name": "-x"}]}),
                "invalid role name '-x'. Must consist of alphanumeric characters, '-' or '_', and must start and end with an alphanumeric character",
            ),
            (
                serde_json::json!({"roles": [{"name": "a", "groups": ["x,y"]}]}),
                "group 'x,y' must be quoted",
            ),
            (
                serde_json::json!({"syncWindows": [{"kind": "allow", "schedule": "0 22 * *", "duration": "1h", "applications": ["*"]}]}),
                "cannot parse schedule '0 22 * *'",
            ),
            (
                serde_json::json!({"syncWindows": [{"kind": "allow", "schedule": "0 22 * * *", "duration": "1h"}]}),
                "window 'allow':'0 22 * * *':'1h' requires one of application, cluster or namespace",
            ),
            (
                serde_json::json!({"destinationServiceAccounts": [{"server": "[", "namespace": "x", "defaultServiceAccount": "sa"}]}),
                "server has an invalid format, '['",
            ),
            (
                serde_json::json!({"destinationServiceAccounts": [{"server": "s", "namespace": "x", "defaultServiceAccount": "a/b"}]}),
                "defaultServiceAccount has an invalid format, 'a/b'",
            ),
        ];
        for (spec, want) in cases {
            let got = message(spec.clone());
            assert!(got.contains(want), "{spec}: {got}");
        }
    }

    #[test]
    fn duplicate_windows_by_identity() {
        let w = serde_json::json!({"kind": "allow", "schedule": "0 22 * * *", "duration": "1h", "applications": ["*"]});
        let mut other = w.clone();
        other["applications"] = serde_json::json!(["web"]);
        validate_project(&project(serde_json::json!({"syncWindows": [w, other]}))).unwrap();
        let err =
            validate_project(&project(serde_json::json!({"syncWindows": [w, w]}))).unwrap_err();
        assert_eq!(err.code, InvalidCode::AlreadyExists);
    }

    #[test]
    fn objects_and_actions() {
        assert!(object_ok("p", "p/*"));
        assert!(object_ok("p", "p/ns/app-1"));
        assert!(!object_ok("p", "p/"));
        assert!(!object_ok("p", "p/a/b/c"));
        assert!(!object_ok("p", "q/a"));
        assert!(action_ok("action/apps/Deployment/restart"));
        assert!(!action_ok("destroy"));
    }
}
