//! Reading `argocd-rbac-cm` and the policy lines of `policy.csv` and AppProject roles. Bad lines
//! are reported (with their key and line number) and skipped, never fatal: one typo must not
//! lock everybody out or, worse, be half-applied.

use std::collections::BTreeMap;

/// One rule: `p, sub, res, act, obj[, eft]` or `g, subject, role`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rule {
    /// sub, res, act, obj, eft (`allow`/`deny`).
    P([String; 5]),
    /// member, role.
    G([String; 2]),
}

/// How patterns in rules match (`policy.matchMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum MatchMode {
    /// `*`, `?`, `[...]`, `{a,b}` (the default).
    #[default]
    Glob,
    /// Regular expressions, unanchored as Go's `regexp.MatchString`.
    Regex,
}

/// The settings of `argocd-rbac-cm`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RbacSettings {
    pub(crate) rules: Vec<Rule>,
    pub(crate) default_role: String,
    /// Claims whose values are groups (default `groups`).
    pub(crate) scopes: Vec<String>,
    pub(crate) mode: MatchMode,
    /// Lines skipped, with why.
    pub(crate) problems: Vec<String>,
}

/// Parses the lines of one policy text; `source` names it in problems.
pub(crate) fn parse_lines(text: &str, source: &str, problems: &mut Vec<String>) -> Vec<Rule> {
    let mut rules = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<String> = line
            .split(',')
            .map(|f| f.trim().trim_matches('"').to_string())
            .collect();
        let at = || format!("{source} line {}", i + 1);
        if fields.iter().any(String::is_empty) {
            problems.push(format!("{}: empty field in {line:?}", at()));
            continue;
        }
        match (fields[0].as_str(), fields.len()) {
            ("p", 5 | 6) => {
                let eft = fields.get(5).map_or("allow", String::as_str);
                if eft != "allow" && eft != "deny" {
                    problems.push(format!(
                        "{}: effect must be allow or deny, got {eft:?}",
                        at()
                    ));
                    continue;
                }
                rules.push(Rule::P([
                    fields[1].clone(),
                    fields[2].clone(),
                    fields[3].clone(),
                    fields[4].clone(),
                    eft.to_string(),
                ]));
            }
            ("g", 3) => rules.push(Rule::G([fields[1].clone(), fields[2].clone()])),
            ("p", n) => problems.push(format!(
                "{}: a p line has 5 or 6 fields (p, subject, resource, action, object[, effect]), got {n}",
                at()
            )),
            ("g", n) => problems.push(format!(
                "{}: a g line has 3 fields (g, subject, role), got {n}",
                at()
            )),
            (kind, _) => problems.push(format!(
                "{}: lines start with p or g, got {:?}",
                at(),
                kind.chars().take(32).collect::<String>()
            )),
        }
    }
    rules
}

/// `argocd-rbac-cm`'s data: `policy.csv` and every `policy.<name>.csv` (in key order, as Argo
/// merges them), `policy.default`, `scopes` (`[groups, email]`), `policy.matchMode`.
pub(crate) fn from_config_map(data: &BTreeMap<String, String>) -> RbacSettings {
    let mut s = RbacSettings {
        scopes: vec!["groups".into()],
        ..RbacSettings::default()
    };
    if let Some(csv) = data.get("policy.csv") {
        let rules = parse_lines(csv, "argocd-rbac-cm policy.csv", &mut s.problems);
        s.rules.extend(rules);
    }
    for (key, csv) in data {
        if key != "policy.csv" && key.starts_with("policy.") && key.ends_with(".csv") {
            let rules = parse_lines(csv, &format!("argocd-rbac-cm {key}"), &mut s.problems);
            s.rules.extend(rules);
        }
    }
    s.default_role = data
        .get("policy.default")
        .map(|v| v.trim().to_string())
        .unwrap_or_default();
    if let Some(scopes) = data.get("scopes") {
        let list: Vec<String> = scopes
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if !list.is_empty() {
            s.scopes = list;
        }
    }
    match data.get("policy.matchMode").map(|v| v.trim()) {
        None | Some("") | Some("glob") => {}
        Some("regex") => s.mode = MatchMode::Regex,
        Some(other) => s.problems.push(format!(
            "argocd-rbac-cm policy.matchMode: expected glob or regex, got {other:?}; using glob"
        )),
    }
    s
}

/// The resources a project role's policy may name (Argo's `validatePolicy`): never `projects`,
/// so a role (or its token) cannot widen its own project, nor `accounts` or `certificates`.
pub(crate) const PROJECT_ROLE_RESOURCES: [&str; 6] = [
    "applications",
    "applicationsets",
    "repositories",
    "clusters",
    "logs",
    "exec",
];

/// Why a project role's rule on `res` is refused.
pub(crate) fn role_resource_refusal(res: &str) -> String {
    format!(
        "project resource must be: 'applications', 'applicationsets', 'repositories', \
         'clusters', 'logs' or 'exec', not '{res}'"
    )
}

/// The policy lines of an AppProject's roles (`spec.roles[].policies` and `groups`), keeping
/// only lines about the project's own roles and objects, as Argo CD validates them: a project
/// cannot grant anything outside itself, and each role may get the project itself.
pub(crate) fn project_rules(project: &serde_json::Value, problems: &mut Vec<String>) -> Vec<Rule> {
    let name = project
        .pointer("/metadata/name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let mut rules = Vec::new();
    let roles = project
        .pointer("/spec/roles")
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    for role in roles {
        let Some(role_name) = role.get("name").and_then(serde_json::Value::as_str) else {
            continue;
        };
        let subject = format!("proj:{name}:{role_name}");
        // Argo's `ProjectPoliciesString`: every role (its tokens and groups) may get its own
        // project.
        rules.push(Rule::P(
            [subject.as_str(), "projects", "get", name, "allow"].map(String::from),
        ));
        let source = format!("AppProject {name} role {role_name} policies");
        let text: Vec<&str> = role
            .get("policies")
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        for rule in parse_lines(&text.join("\n"), &source, problems) {
            match &rule {
                Rule::P([sub, res, _, obj, _]) => {
                    if !PROJECT_ROLE_RESOURCES.contains(&res.as_str()) {
                        problems.push(format!(
                            "{source}: {sub}, {res}, {obj}: {}; ignored",
                            role_resource_refusal(res)
                        ));
                        continue;
                    }
                    let scoped_object = obj.starts_with(&format!("{name}/"));
                    if sub != &subject || !scoped_object {
                        problems.push(format!(
                            "{source}: {sub}, {res}, {obj}: a project role's rule must name {subject} and objects of project {name}; ignored"
                        ));
                        continue;
                    }
                    rules.push(rule);
                }
                Rule::G(_) => problems.push(format!(
                    "{source}: g lines are not allowed in a project role; use groups"
                )),
            }
        }
        for group in role
            .get("groups")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
        {
            rules.push(Rule::G([group.to_string(), subject.clone()]));
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_lines_are_reported_with_where_and_skipped() {
        let mut problems = Vec::new();
        let rules = parse_lines(
            "# comment\n\
             p, role:dev, applications, get, dev/*, allow\n\
             p, role:dev, applications, sync, dev/*\n\
             p, role:dev, applications\n\
             g, alice, role:dev\n\
             g, alice\n\
             x, what, is, this\n\
             p, role:dev, applications, get, dev/*, maybe\n\
             p, , applications, get, */*, allow\n\
             \n",
            "policy.csv",
            &mut problems,
        );
        assert_eq!(rules.len(), 3, "{rules:?}");
        assert_eq!(
            rules[1],
            Rule::P(["role:dev", "applications", "sync", "dev/*", "allow"].map(String::from))
        );
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(problems[0].contains("policy.csv line 4"), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("maybe")));
    }

    #[test]
    fn config_map_keys() {
        let data: BTreeMap<String, String> = [
            ("policy.csv", "g, alice, role:admin"),
            ("policy.team-a.csv", "g, bob, role:readonly"),
            ("policy.default", "role:readonly"),
            ("scopes", "[groups, email]"),
            ("policy.matchMode", "regex"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let s = from_config_map(&data);
        assert_eq!(s.rules.len(), 2);
        assert_eq!(s.default_role, "role:readonly");
        assert_eq!(s.scopes, ["groups", "email"]);
        assert_eq!(s.mode, MatchMode::Regex);
        assert!(s.problems.is_empty());
    }

    #[test]
    fn project_roles_cannot_reach_outside_their_project() {
        let project = json!({"metadata": {"name": "team"}, "spec": {"roles": [{
            "name": "ci",
            "policies": [
                "p, proj:team:ci, applications, sync, team/*, allow",
                "p, proj:team:ci, applications, delete, other/*, allow",
                "p, role:admin, applications, delete, team/*, allow",
                "g, proj:team:ci, role:admin",
            ],
            "groups": ["team-devs"],
        }]}});
        let mut problems = Vec::new();
        let rules = project_rules(&project, &mut problems);
        assert_eq!(
            rules,
            [
                Rule::P(["proj:team:ci", "projects", "get", "team", "allow"].map(String::from)),
                Rule::P(
                    ["proj:team:ci", "applications", "sync", "team/*", "allow"].map(String::from)
                ),
                Rule::G(["team-devs", "proj:team:ci"].map(String::from)),
            ]
        );
        assert_eq!(problems.len(), 3, "{problems:?}");
    }
}
