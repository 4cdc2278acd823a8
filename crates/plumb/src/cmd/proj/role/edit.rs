//! The role verbs that change the project: `create`, `delete`, `add-policy`, `remove-policy`,
//! `add-group`, `remove-group`, and `delete-token` in core mode (Argo's
//! `cmd/argocd/commands/project_role.go`, `AppProject.AddGroupToRole`, `RemoveJWTToken`).

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::super::update::{Change, spec_list, text};

/// Argo's `policyTemplate`.
pub fn policy_line(
    project: &str,
    role: &str,
    resource: &str,
    action: &str,
    object: &str,
    permission: &str,
) -> String {
    format!("p, proj:{project}:{role}, {resource}, {action}, {project}/{object}, {permission}")
}

/// The role named `role`, or Argo's `GetRoleByName` error.
pub fn role_mut<'a>(project: &'a mut Value, role: &str) -> Result<&'a mut Value> {
    let name = project
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    spec_list(project, "roles")
        .iter_mut()
        .find(|r| text(r, "name") == role)
        .ok_or_else(|| anyhow::anyhow!("role '{role}' does not exist in project '{name}'"))
}

fn strings<'a>(role: &'a mut Value, field: &str) -> &'a mut Vec<Value> {
    if !role[field].is_array() {
        role[field] = json!([]);
    }
    match &mut role[field] {
        Value::Array(items) => items,
        _ => unreachable!("set to an array above"),
    }
}

fn tidy_role(role: &mut Value) {
    if let Some(r) = role.as_object_mut() {
        r.retain(|_, v| !matches!(v, Value::Array(a) if a.is_empty()));
    }
}

/// Adds a role unless one of that name exists (a note, then).
pub fn create(
    project: &mut Value,
    role: &str,
    description: &str,
    note: &mut Option<String>,
) -> Result<Change> {
    let roles = spec_list(project, "roles");
    if roles.iter().any(|r| text(r, "name") == role) {
        *note = Some(format!("Role '{role}' already exists"));
        return Ok(Change::Keep);
    }
    let mut r = json!({"name": role});
    if !description.is_empty() {
        r["description"] = json!(description);
    }
    roles.push(r);
    Ok(Change::Write)
}

/// Removes a role (Argo moves the last role into its place).
pub fn delete(project: &mut Value, role: &str, note: &mut Option<String>) -> Result<Change> {
    let roles = spec_list(project, "roles");
    let Some(i) = roles.iter().position(|r| text(r, "name") == role) else {
        *note = Some(format!("Role '{role}' does not exist in project"));
        return Ok(Change::Keep);
    };
    roles.swap_remove(i);
    Ok(Change::Write)
}

/// Appends a policy line to a role.
pub fn add_policy(project: &mut Value, role: &str, line: &str) -> Result<Change> {
    let r = role_mut(project, role)?;
    strings(r, "policies").push(json!(line));
    Ok(Change::Write)
}

/// Removes a policy line (Argo moves the last line into its place); nothing when absent.
pub fn remove_policy(project: &mut Value, role: &str, line: &str) -> Result<Change> {
    let r = role_mut(project, role)?;
    let policies = strings(r, "policies");
    let Some(i) = policies.iter().position(|p| p.as_str() == Some(line)) else {
        tidy_role(r);
        return Ok(Change::Keep);
    };
    policies.swap_remove(i);
    tidy_role(r);
    Ok(Change::Write)
}

/// Adds a group claim to a role.
pub fn add_group(
    project: &mut Value,
    role: &str,
    group: &str,
    note: &mut Option<String>,
) -> Result<Change> {
    let r = role_mut(project, role)?;
    let groups = strings(r, "groups");
    if groups.iter().any(|g| g.as_str() == Some(group)) {
        *note = Some(format!("Group '{group}' already present in role '{role}'"));
        return Ok(Change::Keep);
    }
    groups.push(json!(group));
    *note = Some(format!("Group '{group}' added to role '{role}'"));
    Ok(Change::Write)
}

/// Removes a group claim from a role.
pub fn remove_group(
    project: &mut Value,
    role: &str,
    group: &str,
    note: &mut Option<String>,
) -> Result<Change> {
    let r = role_mut(project, role)?;
    let groups = strings(r, "groups");
    let Some(i) = groups.iter().position(|g| g.as_str() == Some(group)) else {
        tidy_role(r);
        *note = Some(format!("Group '{group}' not present in role '{role}'"));
        return Ok(Change::Keep);
    };
    groups.remove(i);
    tidy_role(r);
    *note = Some(format!("Group '{group}' removed from role '{role}'"));
    Ok(Change::Write)
}

/// Removes the tokens issued at `iat` from the role and from `status.jwtTokensByRole`; a
/// missing role or token changes nothing, as in Argo's `DeleteToken`.
pub fn delete_token(project: &mut Value, role: &str, iat: i64) -> Result<Change> {
    let Ok(r) = role_mut(project, role) else {
        return Ok(Change::Keep);
    };
    let tokens = strings(r, "jwtTokens");
    let before = tokens.len();
    tokens.retain(|t| t.get("iat").and_then(Value::as_i64) != Some(iat));
    let removed = tokens.len() != before;
    tidy_role(r);
    let pointer = format!(
        "/status/jwtTokensByRole/{}/items",
        role.replace('~', "~0").replace('/', "~1")
    );
    let mut removed_status = false;
    if let Some(items) = project.pointer_mut(&pointer).and_then(Value::as_array_mut) {
        let before = items.len();
        items.retain(|t| t.get("iat").and_then(Value::as_i64) != Some(iat));
        removed_status = items.len() != before;
    }
    if !removed && !removed_status {
        return Ok(Change::Keep);
    }
    Ok(Change::Write)
}

/// Checks `--resource` as Argo's CLI does (`rbac.ProjectScoped`).
pub fn check_resource(resource: &str) -> Result<()> {
    if !plumb_policy::project::PROJECT_SCOPED_RESOURCES.contains(&resource) {
        bail!(
            "resource '{resource}' is not project-scoped: use one of {}",
            plumb_policy::project::PROJECT_SCOPED_RESOURCES.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_policies_groups_tokens() {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {}});
        let mut note = None;
        create(&mut p, "ci", "CI", &mut note).unwrap();
        assert_eq!(create(&mut p, "ci", "", &mut note).unwrap(), Change::Keep);
        assert_eq!(note.take().unwrap(), "Role 'ci' already exists");
        let line = policy_line("p", "ci", "applications", "sync", "*", "allow");
        assert_eq!(line, "p, proj:p:ci, applications, sync, p/*, allow");
        add_policy(&mut p, "ci", &line).unwrap();
        assert_eq!(p["spec"]["roles"][0]["policies"], json!([line]));
        remove_policy(&mut p, "ci", &line).unwrap();
        assert!(p["spec"]["roles"][0].get("policies").is_none());
        add_group(&mut p, "ci", "org:team", &mut note).unwrap();
        assert_eq!(
            add_group(&mut p, "ci", "org:team", &mut note).unwrap(),
            Change::Keep
        );
        remove_group(&mut p, "ci", "org:team", &mut note).unwrap();
        assert_eq!(
            add_policy(&mut p, "nope", &line).unwrap_err().to_string(),
            "role 'nope' does not exist in project 'p'"
        );
        p["spec"]["roles"][0]["jwtTokens"] = json!([{"iat": 5, "id": "a"}, {"iat": 6}]);
        assert_eq!(delete_token(&mut p, "ci", 5).unwrap(), Change::Write);
        assert_eq!(delete_token(&mut p, "ci", 5).unwrap(), Change::Keep);
        assert_eq!(p["spec"]["roles"][0]["jwtTokens"], json!([{"iat": 6}]));
        delete(&mut p, "ci", &mut note).unwrap();
        assert_eq!(delete(&mut p, "ci", &mut note).unwrap(), Change::Keep);
    }
}
