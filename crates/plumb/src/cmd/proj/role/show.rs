//! The role verbs that read: `list`, `get`, `list-tokens` (Argo's layouts in
//! `cmd/argocd/commands/project_role.go`).

use anyhow::{Result, anyhow};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use plumb_model::application::{AppProject, JwtToken, ProjectRole};

use crate::output::tabwriter::Table;

/// The role named `role`, or Argo's `GetRoleByName` error.
pub fn find<'a>(project: &'a AppProject, role: &str) -> Result<&'a ProjectRole> {
    project
        .spec
        .roles
        .iter()
        .flatten()
        .find(|r| r.name == role)
        .ok_or_else(|| {
            anyhow!(
                "role '{role}' does not exist in project '{}'",
                project.metadata.name.as_deref().unwrap_or_default()
            )
        })
}

/// A role's tokens: those of the role, else those recorded in the project's status (Argo's
/// `NormalizeJWTTokens` keeps both in step).
pub fn tokens(project: &AppProject, role: &ProjectRole) -> Vec<JwtToken> {
    if let Some(t) = role.jwt_tokens.as_ref().filter(|t| !t.is_empty()) {
        return t.clone();
    }
    project
        .status
        .as_ref()
        .and_then(|s| s.jwt_tokens_by_role.as_ref())
        .and_then(|m| m.get(&role.name))
        .and_then(|t| t.items.clone())
        .unwrap_or_default()
}

/// `ROLE-NAME  DESCRIPTION`.
pub fn roles_table(roles: &[ProjectRole]) -> String {
    let mut t = Table::new();
    t.line("ROLE-NAME\tDESCRIPTION");
    for r in roles {
        t.row(&[
            r.name.as_str(),
            r.description.as_deref().unwrap_or_default(),
        ]);
    }
    t.render()
}

/// Go's `time.RFC3339` of a Unix time in `tz` (`Z` for UTC).
pub fn rfc3339(seconds: i64, tz: &TimeZone) -> String {
    let Ok(ts) = Timestamp::from_second(seconds) else {
        return seconds.to_string();
    };
    let zoned = ts.to_zoned(tz.clone());
    if zoned.offset().seconds() == 0 {
        zoned.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        zoned.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
    }
}

/// go-humanize's `Time`: "3 hours ago", "2 days from now".
pub fn humanize(seconds: i64, now: i64) -> String {
    let (diff, suffix) = if now >= seconds {
        (now - seconds, "ago")
    } else {
        (seconds - now, "from now")
    };
    const MIN: i64 = 60;
    const HOUR: i64 = 60 * MIN;
    const DAY: i64 = 24 * HOUR;
    const WEEK: i64 = 7 * DAY;
    const MONTH: i64 = 30 * DAY;
    const YEAR: i64 = 12 * MONTH;
    let text = match diff {
        0 => return "now".into(),
        1 => "1 second".into(),
        d if d < MIN => format!("{d} seconds"),
        d if d < 2 * MIN => "1 minute".into(),
        d if d < HOUR => format!("{} minutes", d / MIN),
        d if d < 2 * HOUR => "1 hour".into(),
        d if d < DAY => format!("{} hours", d / HOUR),
        d if d < 2 * DAY => "1 day".into(),
        d if d < WEEK => format!("{} days", d / DAY),
        d if d < 2 * WEEK => "1 week".into(),
        d if d < MONTH => format!("{} weeks", d / WEEK),
        d if d < 2 * MONTH => "1 month".into(),
        d if d < YEAR => format!("{} months", d / MONTH),
        d if d < 18 * MONTH => "1 year".into(),
        d if d < 2 * YEAR => "2 years".into(),
        d => format!("{} years", d / YEAR),
    };
    format!("{text} {suffix}")
}

/// Argo's `ProjectPoliciesString`: every role's implicit `projects, get` rule, its policies and
/// its group lines (all roles, as `argocd proj role get` prints them).
pub fn policies_string(project: &AppProject) -> String {
    let name = project.metadata.name.as_deref().unwrap_or_default();
    let mut lines = Vec::new();
    for role in project.spec.roles.iter().flatten() {
        lines.push(format!(
            "p, proj:{name}:{}, projects, get, {name}, allow",
            role.name
        ));
        lines.extend(role.policies.iter().flatten().cloned());
        for g in role.groups.iter().flatten() {
            lines.push(format!("g, {g}, proj:{name}:{}", role.name));
        }
    }
    lines.join("\n")
}

/// `argocd proj role get`.
pub fn role_detail(project: &AppProject, role: &ProjectRole, tz: &TimeZone, now: i64) -> String {
    let mut out = format!("{:<15}{}\n", "Role Name:", role.name);
    out.push_str(&format!(
        "{:<15}{}\n",
        "Description:",
        role.description.as_deref().unwrap_or_default()
    ));
    out.push_str("Policies:\n");
    out.push_str(&policies_string(project));
    out.push_str("\nGroups:\n");
    match role.groups.as_deref() {
        Some(groups) if !groups.is_empty() => {
            for g in groups {
                out.push_str(&format!("  - {g}\n"));
            }
        }
        _ => out.push_str("<none>\n"),
    }
    out.push_str("JWT Tokens:\n");
    let human = |t: i64| format!("{} ({})", rfc3339(t, tz), humanize(t, now));
    let mut t = Table::new();
    t.line("ID\tISSUED-AT\tEXPIRES-AT");
    for token in tokens(project, role) {
        let expires = match token.exp {
            Some(e) if e > 0 => human(e),
            _ => "<none>".into(),
        };
        t.row(&[token.iat.to_string(), human(token.iat), expires]);
    }
    out.push_str(&t.render());
    out
}

/// `argocd proj role list-tokens`.
pub fn tokens_table(tokens: &[JwtToken], unix: bool, tz: &TimeZone) -> String {
    let mut t = Table::with(0, 4);
    t.line("ID\tISSUED AT\tEXPIRES AT");
    let never = |s: i64| {
        if s > 0 {
            rfc3339(s, tz)
        } else {
            "Never".into()
        }
    };
    for token in tokens {
        let id = token.id.clone().unwrap_or_default();
        let exp = token.exp.unwrap_or(0);
        if unix {
            t.row(&[id, token.iat.to_string(), exp.to_string()]);
        } else {
            t.row(&[id, never(token.iat), never(exp)]);
        }
    }
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        let project: AppProject = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"roles": [{"name": "ci", "description": "CI", "groups": ["org:team"],
                "policies": ["p, proj:p:ci, applications, sync, p/*, allow"],
                "jwtTokens": [{"iat": 1700000000, "id": "abc"}]}]}
        }))
        .unwrap();
        let role = find(&project, "ci").unwrap();
        let text = role_detail(&project, role, &TimeZone::UTC, 1700000000 + 3 * 3600);
        assert_eq!(
            text,
            "Role Name:     ci\nDescription:   CI\nPolicies:\n\
             p, proj:p:ci, projects, get, p, allow\n\
             p, proj:p:ci, applications, sync, p/*, allow\n\
             g, org:team, proj:p:ci\nGroups:\n  - org:team\nJWT Tokens:\n\
             ID          ISSUED-AT                           EXPIRES-AT\n\
             1700000000  2023-11-14T22:13:20Z (3 hours ago)  <none>\n"
        );
        assert_eq!(
            tokens_table(&tokens(&project, role), false, &TimeZone::UTC),
            "ID     ISSUED AT               EXPIRES AT\nabc    2023-11-14T22:13:20Z    Never\n"
        );
        assert_eq!(
            roles_table(project.spec.roles.as_deref().unwrap()),
            "ROLE-NAME  DESCRIPTION\nci         CI\n"
        );
        assert_eq!(humanize(100, 100), "now");
        assert_eq!(humanize(0, 90), "1 minute ago");
    }
}
