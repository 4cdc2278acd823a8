//! Guard rails: ignore rules that would hide what an attacker changes first.
//!
//! A rule is sensitive when what it removes overlaps a sensitive field of a kind it matches:
//! container images; `securityContext` (pod and container) and privilege settings
//! (`privileged`, `capabilities`, `runAsUser`, `runAsNonRoot`, `allowPrivilegeEscalation`,
//! `hostPath`, `hostNetwork`, `hostPID`, `hostIPC`); RBAC `rules`, `aggregationRule`, `subjects`
//! and `roleRef`; anything in admission webhook configurations. "Overlaps" means the rule's path
//! is inside a sensitive field or contains one (`/spec/template/spec` hides every image). For
//! kinds Plumb does not know (custom resources, `*` globs), any path step named like a sensitive
//! field counts. Such rules are refused unless `plumb.ignoreDifferences.allowSensitive: "true"`
//! or `--allow-sensitive-ignores`; `plumb admin lint-ignores` lists them.

use serde_json::{Value, json};

use super::glob::matches_glob;
use super::json_pointer::Step;

/// Path step names that are sensitive wherever they appear.
const SENSITIVE_NAMES: &[&str] = &[
    "image",
    "securityContext",
    "privileged",
    "capabilities",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "allowPrivilegeEscalation",
    "hostPath",
    "hostNetwork",
    "hostPID",
    "hostIPC",
];

const POD_SPEC_FIELDS: &[&str] = &[
    "containers.*.image",
    "initContainers.*.image",
    "ephemeralContainers.*.image",
    "containers.*.securityContext",
    "initContainers.*.securityContext",
    "ephemeralContainers.*.securityContext",
    "securityContext",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "volumes.*.hostPath",
];

/// Where pod specs sit, by group/Kind (the same placements as the merge-key table).
const POD_SPEC_AT: &[(&str, &str)] = &[
    ("/Pod", "spec"),
    ("/PodTemplate", "template.spec"),
    ("/ReplicationController", "spec.template.spec"),
    ("apps/Deployment", "spec.template.spec"),
    ("apps/ReplicaSet", "spec.template.spec"),
    ("apps/StatefulSet", "spec.template.spec"),
    ("apps/DaemonSet", "spec.template.spec"),
    ("batch/Job", "spec.template.spec"),
    ("batch/CronJob", "spec.jobTemplate.spec.template.spec"),
    ("argoproj.io/Rollout", "spec.template.spec"),
];

const OTHER_SENSITIVE: &[(&str, &str)] = &[
    ("rbac.authorization.k8s.io/Role", "rules"),
    ("rbac.authorization.k8s.io/ClusterRole", "rules"),
    ("rbac.authorization.k8s.io/ClusterRole", "aggregationRule"),
    ("rbac.authorization.k8s.io/RoleBinding", "subjects"),
    ("rbac.authorization.k8s.io/RoleBinding", "roleRef"),
    ("rbac.authorization.k8s.io/ClusterRoleBinding", "subjects"),
    ("rbac.authorization.k8s.io/ClusterRoleBinding", "roleRef"),
    (
        "admissionregistration.k8s.io/MutatingWebhookConfiguration",
        "webhooks",
    ),
    (
        "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
        "webhooks",
    ),
];

/// Why a rule path is sensitive: the kind and the sensitive field it overlaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) kind: String,
    pub(crate) field: String,
}

/// Checks a removal path (tokens; `*` = any list element) for rules matching `group`/`kind`
/// globs.
pub(crate) fn check_path(group: &str, kind: &str, tokens: &[String]) -> Option<Hit> {
    let mut known_kind_matched = false;
    let placements = POD_SPEC_AT
        .iter()
        .flat_map(|(gk, prefix)| {
            POD_SPEC_FIELDS
                .iter()
                .map(move |f| (*gk, format!("{prefix}.{f}")))
        })
        .chain(
            OTHER_SENSITIVE
                .iter()
                .map(|(gk, f)| (*gk, (*f).to_string())),
        );
    for (gk, field) in placements {
        let (g, k) = gk.split_once('/').unwrap_or(("", gk));
        if !matches_glob(g, group) || !matches_glob(k, kind) {
            continue;
        }
        known_kind_matched = true;
        let sensitive: Vec<&str> = field.split('.').collect();
        if overlaps(tokens, &sensitive) {
            return Some(Hit {
                kind: gk.to_string(),
                field,
            });
        }
    }
    let is_glob = group.contains(['*', '?']) || kind.contains(['*', '?']);
    if (!known_kind_matched || is_glob)
        && let Some(name) = tokens
            .iter()
            .find(|t| SENSITIVE_NAMES.contains(&t.as_str()))
    {
        return Some(Hit {
            kind: format!("{group}/{kind}"),
            field: name.clone(),
        });
    }
    None
}

/// Whether `group`/`kind` is a kind whose sensitive fields Plumb knows by place.
fn known_kind(group: &str, kind: &str) -> bool {
    POD_SPEC_AT
        .iter()
        .chain(OTHER_SENSITIVE.iter())
        .any(|(gk, _)| gk.split_once('/').unwrap_or(("", gk)) == (group, kind))
}

/// Checks one concrete removal from one object of `group`/`kind` (not a glob): the path, and
/// for kinds Plumb does not know, every field name inside what would be removed (`/spec` of a
/// custom resource hides its `spec.image`).
pub(crate) fn check_removal(group: &str, kind: &str, path: &[Step], obj: &Value) -> Option<Hit> {
    let tokens: Vec<String> = path
        .iter()
        .map(|s| match s {
            // Any list element: a negative index counts from the end.
            Step::Index(_) => "*".to_string(),
            Step::Token(t) => t.clone(),
        })
        .collect();
    if let Some(hit) = check_path(group, kind, &tokens) {
        return Some(hit);
    }
    if known_kind(group, kind) {
        return None;
    }
    let removed = super::json_pointer::get_path(obj, path)?;
    sensitive_name_inside(removed).map(|name| Hit {
        kind: format!("{group}/{kind}"),
        field: format!("{}.{name}", tokens.join(".")),
    })
}

fn sensitive_name_inside(v: &Value) -> Option<String> {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    if SENSITIVE_NAMES.contains(&k.as_str()) {
                        return Some(k.clone());
                    }
                    stack.push(child);
                }
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    None
}

/// Objects with every sensitive field present, one per kind a rule matching `group`/`kind`
/// globs can apply to (and one for kinds Plumb does not know): a jq rule is evaluated on them
/// when it is loaded, so a rule that selects a sensitive field of such an object is refused
/// before any object of that kind exists.
pub(crate) fn synthetic_objects(group: &str, kind: &str) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    let mut known_matched = false;
    let mut seen = std::collections::BTreeSet::new();
    for (gk, _) in POD_SPEC_AT.iter().chain(OTHER_SENSITIVE.iter()) {
        let (g, k) = gk.split_once('/').unwrap_or(("", gk));
        if !matches_glob(g, group) || !matches_glob(k, kind) || !seen.insert(*gk) {
            continue;
        }
        known_matched = true;
        out.push((g.to_string(), k.to_string(), synthetic(g, k)));
    }
    let is_glob = group.contains(['*', '?']) || kind.contains(['*', '?']);
    if !known_matched || is_glob {
        let (g, k) = if is_glob {
            ("plumb.invalid".to_string(), "Unknown".to_string())
        } else {
            (group.to_string(), kind.to_string())
        };
        let mut obj = json!({"metadata": {"name": "x", "namespace": "x"}});
        let mut spec = serde_json::Map::new();
        for name in SENSITIVE_NAMES {
            spec.insert((*name).to_string(), json!("x"));
        }
        spec.insert("template".into(), json!({"spec": pod_spec()}));
        obj["spec"] = Value::Object(spec);
        out.push((g, k, obj));
    }
    out
}

fn synthetic(group: &str, kind: &str) -> Value {
    let api_version = if group.is_empty() {
        "v1".to_string()
    } else {
        format!("{group}/v1")
    };
    let mut obj = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "x", "namespace": "x", "labels": {"app": "x"}, "annotations": {"a": "x"}}});
    let gk = format!("{group}/{kind}");
    if let Some((_, at)) = POD_SPEC_AT.iter().find(|(k, _)| *k == gk) {
        let pointer: Vec<Step> = at.split('.').map(|t| Step::Token(t.to_string())).collect();
        super::json_pointer::set_path(&mut obj, &pointer, pod_spec());
    }
    for (k, field) in OTHER_SENSITIVE {
        if *k == gk {
            obj[*field] = match *field {
                "roleRef" => {
                    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "x"})
                }
                "aggregationRule" => json!({"clusterRoleSelectors": [{"matchLabels": {"a": "x"}}]}),
                "subjects" => json!([{"kind": "ServiceAccount", "name": "x", "namespace": "x"}]),
                "rules" => json!([{"apiGroups": [""], "resources": ["x"], "verbs": ["get"]}]),
                _ => {
                    json!([{"name": "x", "clientConfig": {"caBundle": "x", "service": {"name": "x", "namespace": "x"}}, "rules": [{"operations": ["CREATE"]}]}])
                }
            };
        }
    }
    obj
}

fn pod_spec() -> Value {
    let security = json!({"privileged": true, "runAsUser": 0, "runAsGroup": 0, "runAsNonRoot": false,
        "allowPrivilegeEscalation": true, "capabilities": {"add": ["x"]}});
    let container = json!({"name": "x", "image": "x", "securityContext": security, "env": [{"name": "x", "value": "x"}], "resources": {}});
    json!({"containers": [container.clone()], "initContainers": [container.clone()],
        "ephemeralContainers": [container],
        "securityContext": {"runAsUser": 0, "runAsNonRoot": false},
        "hostNetwork": true, "hostPID": true, "hostIPC": true,
        "volumes": [{"name": "x", "hostPath": {"path": "/"}}]})
}

/// One path lies inside the other (token-wise; `*` and numbers match any list element).
fn overlaps(rule: &[String], sensitive: &[&str]) -> bool {
    rule.iter().zip(sensitive.iter()).all(|(r, s)| {
        let r_any = r == "*" || r.parse::<usize>().is_ok();
        r == s || (*s == "*" && r_any)
    })
}

/// The path a jq expression deletes, as tokens: path-like pipeline stages joined, `select(..)`
/// and other filters skipped (`.spec.containers[] | select(.name == "x") | .env` →
/// `spec.containers.*.env`). Every identifier in the expression is also returned, for the
/// name-based check.
pub(crate) fn jq_tokens(expr: &str) -> (Vec<String>, Vec<String>) {
    let mut path = Vec::new();
    for stage in split_top_level(expr, '|') {
        let stage = stage.trim();
        if stage.starts_with('.') {
            path.extend(path_tokens(stage));
        }
    }
    let names = identifiers(expr);
    (path, names)
}

fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start, mut in_str) = (0i32, 0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '(' | '[' | '{' if !in_str => depth += 1,
            ')' | ']' | '}' if !in_str => depth -= 1,
            c if c == sep && depth == 0 && !in_str => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// `.a.b[]["c/d"][0]?` → `a`, `b`, `*`, `c/d`, `0`; stops at the first non-path syntax.
fn path_tokens(stage: &str) -> Vec<String> {
    let b = stage.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i > start {
                    out.push(stage[start..i].to_string());
                }
            }
            b'[' => {
                let Some(end) = stage[i..].find(']') else {
                    break;
                };
                let inner = stage[i + 1..i + end].trim();
                if inner.is_empty() {
                    out.push("*".into());
                } else if let Some(q) = inner.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
                    out.push(q.to_string());
                } else {
                    out.push(inner.to_string());
                }
                i += end + 1;
            }
            b'?' => i += 1,
            _ => break,
        }
    }
    out
}

fn identifiers(expr: &str) -> Vec<String> {
    expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(p: &str) -> Vec<String> {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn images_and_security_context_in_workloads() {
        let hit = check_path(
            "apps",
            "Deployment",
            &t("/spec/template/spec/containers/0/image"),
        )
        .unwrap();
        assert_eq!(hit.field, "spec.template.spec.containers.*.image");
        assert!(
            check_path("apps", "Deployment", &t("/spec/template/spec")).is_some(),
            "parent hides images"
        );
        assert!(
            check_path(
                "apps",
                "Deployment",
                &t("/spec/template/spec/containers/0/securityContext/runAsNonRoot")
            )
            .is_some()
        );
        assert!(check_path("apps", "Deployment", &t("/spec/template/spec/hostNetwork")).is_some());
        assert!(check_path("apps", "Deployment", &t("/spec/replicas")).is_none());
        assert!(
            check_path(
                "apps",
                "Deployment",
                &t("/spec/template/spec/containers/0/resources")
            )
            .is_none()
        );
        assert!(check_path("", "Pod", &t("/spec/volumes/0/hostPath")).is_some());
    }

    #[test]
    fn rbac_and_webhooks() {
        assert!(check_path("rbac.authorization.k8s.io", "ClusterRole", &t("/rules")).is_some());
        assert!(
            check_path(
                "rbac.authorization.k8s.io",
                "RoleBinding",
                &t("/subjects/0/name")
            )
            .is_some()
        );
        let hit = check_path(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            &t("/webhooks/0/clientConfig/caBundle"),
        )
        .unwrap();
        assert_eq!(hit.field, "webhooks");
        assert!(
            check_path(
                "rbac.authorization.k8s.io",
                "ClusterRole",
                &t("/metadata/labels")
            )
            .is_none()
        );
    }

    #[test]
    fn globs_and_unknown_kinds() {
        assert!(check_path("*", "*", &t("/spec/template/spec/containers/0/image")).is_some());
        assert!(
            check_path("acme.io", "Widget", &t("/spec/image")).is_some(),
            "name-based for unknown kinds"
        );
        assert!(check_path("acme.io", "Widget", &t("/spec/replicas")).is_none());
        assert!(check_path("*", "*", &t("/status")).is_none());
        assert!(
            check_path("*", "*", &t("")).is_some(),
            "the whole object hides everything"
        );
    }

    #[test]
    fn jq_paths() {
        let (p, _) = jq_tokens(
            r#".spec.template.spec.containers[] | select(.name == "istio-proxy") | .env"#,
        );
        assert_eq!(p, ["spec", "template", "spec", "containers", "*", "env"]);
        let (p, names) = jq_tokens(r#".metadata.annotations["a/b"]"#);
        assert_eq!(p, ["metadata", "annotations", "a/b"]);
        assert!(names.contains(&"annotations".to_string()));
    }
}
