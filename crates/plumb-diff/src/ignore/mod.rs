//! `ignoreDifferences`: rules that take fields out of the comparison, as Argo CD has them.
//!
//! Rules come from the Application (`spec.ignoreDifferences[]`) and from settings
//! (`resource.customizations.ignoreDifferences.<group>_<kind>`, `.all`, and the legacy
//! `resource.customizations` map; see `settings`). A rule matches objects by group and kind
//! globs and optional exact name and namespace, and removes from both sides the fields named by
//! its `jsonPointers`, `jqPathExpressions` (jaq, time-limited) and `managedFieldsManagers`
//! (fields the live object's managedFields say those managers own). Rules are compiled once
//! ([`IgnoreRules::compile`]): bad pointers and jq syntax are errors then, and so are rules the
//! guard rails ([`guard`]) find sensitive unless allowed.

mod glob;
mod guard;
mod jq;
pub(crate) mod json_pointer;
mod managed_fields;
mod rule;

use std::time::Duration;

use plumb_model::ResourceKey;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::managed_fields::ManagedEntry;
use glob::matches_glob;
use json_pointer::Step;
pub use rule::{IgnoreRule, SensitiveFinding};

/// How ignore rules are compiled and run.
#[derive(Debug, Clone)]
pub struct IgnoreOptions {
    /// Time limit for one jq expression on one object (Argo's default: 1 s).
    pub jq_timeout: Duration,
    /// Evaluation steps one jq expression may take on one object.
    pub jq_fuel: u64,
    /// Let rules hide sensitive fields (`plumb.ignoreDifferences.allowSensitive`).
    pub allow_sensitive: bool,
}

impl Default for IgnoreOptions {
    fn default() -> Self {
        Self {
            jq_timeout: Duration::from_secs(1),
            jq_fuel: 1_000_000,
            allow_sensitive: false,
        }
    }
}

/// Stack a jq evaluation leaves free on its thread; recursion deeper than that stops.
const JQ_STACK_RESERVE: usize = 256 * 1024;

impl IgnoreOptions {
    fn jq_limits(&self) -> jq::Limits {
        jq::Limits {
            timeout: self.jq_timeout,
            fuel: self.jq_fuel,
            stack_reserve: JQ_STACK_RESERVE,
        }
    }
}

/// Compiled rules for one application.
#[derive(Debug, Clone, Default)]
pub struct IgnoreRules {
    rules: Vec<IgnoreRule>,
    opts: IgnoreOptions,
}

impl IgnoreRules {
    /// Validates and keeps `rules`. Fails on a malformed pointer or jq expression, and on a
    /// sensitive rule unless `opts.allow_sensitive`.
    pub fn compile(rules: Vec<IgnoreRule>, opts: IgnoreOptions) -> Result<Self> {
        for rule in &rules {
            for p in &rule.json_pointers {
                if json_pointer::tokens(p).is_none() {
                    return Err(Error::BadIgnoreRule {
                        origin: rule.origin.clone(),
                        reason: format!("JSON pointer {p:?} does not start with '/'"),
                    });
                }
            }
            for e in &rule.jq_path_expressions {
                if let Err(failure) = jq::check(e) {
                    return Err(Error::BadIgnoreRule {
                        origin: rule.origin.clone(),
                        reason: format!("jq expression {e:?} {failure}"),
                    });
                }
                // An expression that cannot finish on a made-up object of its kinds would stop
                // at its limits on every comparison: refused now, with the reason.
                if let Some(failure) = synthetic_run(rule, e, &opts).1 {
                    return Err(Error::BadIgnoreRule {
                        origin: rule.origin.clone(),
                        reason: format!("jq expression {e:?} {failure}"),
                    });
                }
            }
        }
        if !opts.allow_sensitive
            && let Some(finding) = sensitive_findings(&rules).into_iter().next()
        {
            return Err(Error::SensitiveIgnoreRule(Box::new(finding)));
        }
        Ok(Self { rules, opts })
    }

    /// The rules that apply to `key`.
    pub fn matching<'a>(
        &'a self,
        key: &'a ResourceKey,
    ) -> impl Iterator<Item = &'a IgnoreRule> + 'a {
        self.rules.iter().filter(move |r| {
            matches_glob(&key.group, &r.group)
                && matches_glob(&key.kind, &r.kind)
                && (r.name.is_empty() || r.name == key.name)
                && (r.namespace.is_empty() || r.namespace == key.namespace)
        })
    }

    /// `RespectIgnoreDifferences=true`: the object to apply keeps the live values of ignored
    /// fields (and leaves out ignored fields the live object does not have), so a sync does not
    /// overwrite what the rules say to ignore. `managedFieldsManagers` rules are not applied
    /// here: what another manager owns is left to server-side apply's ownership.
    pub fn respect_live(&self, key: &ResourceKey, desired: &mut Value, live: &Value) {
        for rule in self.matching(key) {
            let mut paths: Vec<Vec<Step>> = rule
                .json_pointers
                .iter()
                .map(|p| {
                    json_pointer::tokens(p)
                        .unwrap_or_default()
                        .into_iter()
                        .map(Step::Token)
                        .collect()
                })
                .collect();
            for e in &rule.jq_path_expressions {
                for obj in [live, &*desired] {
                    if let Ok(found) = jq::paths(e, obj, self.opts.jq_limits(), false) {
                        paths.extend(found);
                    }
                }
            }
            paths.sort_by(|a, b| cmp_steps(a, b));
            paths.dedup();
            for p in paths.iter().rev() {
                if p.is_empty() {
                    continue;
                }
                // A sensitive field keeps the value from Git, whatever the rule says.
                if !self.opts.allow_sensitive
                    && [live, &*desired]
                        .iter()
                        .any(|o| guard::check_removal(&key.group, &key.kind, p, o).is_some())
                {
                    continue;
                }
                match json_pointer::get_path(live, p) {
                    Some(v) => {
                        json_pointer::set_path(desired, p, v.clone());
                    }
                    None => {
                        json_pointer::remove_path(desired, p);
                    }
                }
            }
        }
    }

    /// Removes ignored fields from every object in `objects` (desired, live, base...), using
    /// `managed` (the live object's managedFields) for `managedFieldsManagers`. Returns notes
    /// about skipped expressions (timeouts, run-time errors) and guard-rail refusals.
    pub(crate) fn apply(
        &self,
        key: &ResourceKey,
        managed: &[ManagedEntry],
        objects: &mut [&mut Value],
    ) -> Vec<String> {
        let mut notes = Vec::new();
        for rule in self.matching(key) {
            if !rule.managed_fields_managers.is_empty() {
                notes.extend(managed_fields::remove_owned(
                    rule,
                    managed,
                    objects,
                    key,
                    self.opts.allow_sensitive,
                ));
            }
            for p in &rule.json_pointers {
                let steps: Vec<Step> = json_pointer::tokens(p)
                    .unwrap_or_default()
                    .into_iter()
                    .map(Step::Token)
                    .collect();
                for obj in objects.iter_mut() {
                    if self.may_remove(
                        rule,
                        &format!("jsonPointer {p}"),
                        key,
                        &steps,
                        obj,
                        &mut notes,
                    ) {
                        json_pointer::remove_path(obj, &steps);
                    }
                }
            }
            for e in &rule.jq_path_expressions {
                for obj in objects.iter_mut() {
                    match jq::paths(e, obj, self.opts.jq_limits(), false) {
                        Ok(mut paths) => {
                            // Remove from the last path backwards so list indices stay valid.
                            paths.sort_by(|a, b| cmp_steps(a, b));
                            paths.dedup();
                            let label = format!("jqPathExpression {e}");
                            for p in paths.iter().rev() {
                                if self.may_remove(rule, &label, key, p, obj, &mut notes) {
                                    json_pointer::remove_path(obj, p);
                                }
                            }
                        }
                        Err(failure) if failure.is_unbounded() => notes.push(format!(
                            "{}: jq expression {e:?} {failure} on {key}; nothing ignored",
                            rule.origin
                        )),
                        Err(failure) => {
                            // jq's own error text quotes the value it failed on (a Secret's
                            // data); `jq::paths` never puts it into the failure, so the failure
                            // may be logged.
                            tracing::debug!(origin = %rule.origin, expr = %e, object = %key, %failure, "jq ignore expression failed; no-op");
                        }
                    }
                }
            }
        }
        notes.dedup();
        notes
    }

    /// The guard on what a rule actually removes: a path into a sensitive field of this
    /// object's kind stays compared (with a note) unless sensitive ignores are allowed. This
    /// judges the concrete path, however the rule spelled it.
    fn may_remove(
        &self,
        rule: &IgnoreRule,
        expression: &str,
        key: &ResourceKey,
        path: &[Step],
        obj: &Value,
        notes: &mut Vec<String>,
    ) -> bool {
        if self.opts.allow_sensitive {
            return true;
        }
        match guard::check_removal(&key.group, &key.kind, path, obj) {
            None => true,
            Some(hit) => {
                notes.push(format!(
                    "{}: {expression} selects {} on {key}, a sensitive field ({}); it is still compared",
                    rule.origin,
                    path_text(path),
                    hit.field
                ));
                false
            }
        }
    }
}

fn path_text(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Token(t) => t.clone(),
            Step::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Runs a jq rule expression on made-up objects of every kind the rule matches: the sensitive
/// fields it selects there, and the failure if it cannot finish on one of them.
fn synthetic_run(
    rule: &IgnoreRule,
    expr: &str,
    opts: &IgnoreOptions,
) -> (Vec<SensitiveFinding>, Option<jq::JqFailure>) {
    let mut findings = Vec::new();
    for (group, kind, obj) in guard::synthetic_objects(&rule.group, &rule.kind) {
        match jq::paths(expr, &obj, opts.jq_limits(), true) {
            Ok(paths) => {
                if let Some(hit) = paths
                    .iter()
                    .find_map(|p| guard::check_removal(&group, &kind, p, &obj))
                {
                    findings.push(SensitiveFinding {
                        origin: rule.origin.clone(),
                        expression: format!("jqPathExpression {expr}"),
                        kind: hit.kind,
                        field: hit.field,
                    });
                }
            }
            Err(failure) if failure.is_unbounded() => return (findings, Some(failure)),
            // Fails on this shape (a select on a field it lacks): the per-object guard in
            // `apply` still judges every path it selects on real objects.
            Err(_) => {}
        }
    }
    (findings, None)
}

fn cmp_steps(a: &[Step], b: &[Step]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Step::Index(i), Step::Index(j)) => i.cmp(j),
            (Step::Token(s), Step::Token(t)) => s.cmp(t),
            (Step::Index(_), Step::Token(_)) => std::cmp::Ordering::Less,
            (Step::Token(_), Step::Index(_)) => std::cmp::Ordering::Greater,
        };
        if o.is_ne() {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// Every sensitive field the rules would hide (jsonPointers and jqPathExpressions; fields of
/// `managedFieldsManagers` are only known per object and are checked when applied).
pub fn sensitive_findings(rules: &[IgnoreRule]) -> Vec<SensitiveFinding> {
    let mut out = Vec::new();
    for rule in rules {
        for p in &rule.json_pointers {
            let tokens = json_pointer::tokens(p).unwrap_or_default();
            if let Some(hit) = guard::check_path(&rule.group, &rule.kind, &tokens) {
                out.push(SensitiveFinding {
                    origin: rule.origin.clone(),
                    expression: format!("jsonPointer {p}"),
                    kind: hit.kind,
                    field: hit.field,
                });
            }
        }
        for e in &rule.jq_path_expressions {
            // What the expression selects on objects with every sensitive field present.
            let (found, _) = synthetic_run(rule, e, &IgnoreOptions::default());
            if let Some(first) = found.into_iter().next() {
                out.push(first);
                continue;
            }
            // And, more cautious, what its text says it deletes (a `select` that does not match
            // the made-up object still names the field it would hide on a real one).
            let (path, names) = guard::jq_tokens(e);
            let hit = guard::check_path(&rule.group, &rule.kind, &path).or_else(|| {
                // Names used inside filters (`select(.image == ..)` does not hide an image, but
                // `.. | .image?` does): any sensitive name anywhere is treated as hiding it.
                names.iter().find_map(|n| {
                    guard::check_path(&rule.group, &rule.kind, std::slice::from_ref(n))
                        .filter(|_| n != "spec" && n != "metadata")
                        .filter(|h| h.field == *n)
                })
            });
            if let Some(hit) = hit {
                out.push(SensitiveFinding {
                    origin: rule.origin.clone(),
                    expression: format!("jqPathExpression {e}"),
                    kind: hit.kind,
                    field: hit.field,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(v: Value) -> IgnoreRule {
        let mut r: IgnoreRule = serde_json::from_value(v).unwrap();
        r.origin = "test".into();
        r
    }

    fn key() -> ResourceKey {
        ResourceKey::new("apps", "Deployment", "payments", "payments-api")
    }

    #[test]
    fn globs() {
        assert!(matches_glob("apps", "*"));
        assert!(matches_glob("", ""));
        assert!(!matches_glob("apps", ""));
        assert!(matches_glob("ec2.aws.crossplane.io", "*.crossplane.io"));
        assert!(matches_glob("Deployment", "Deploy?ent"));
    }

    #[test]
    fn matching_by_kind_name_namespace() {
        let rules = IgnoreRules::compile(
            vec![
                rule(json!({"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]})),
                rule(json!({"group": "apps", "kind": "Deployment", "name": "other", "jsonPointers": ["/a"]})),
                rule(json!({"group": "*", "kind": "*", "namespace": "payments", "jsonPointers": ["/b"]})),
                rule(json!({"group": "", "kind": "Service", "jsonPointers": ["/c"]})),
            ],
            IgnoreOptions::default(),
        )
        .unwrap();
        let k = key();
        let found: Vec<_> = rules
            .matching(&k)
            .map(|r| r.json_pointers[0].clone())
            .collect();
        assert_eq!(found, ["/spec/replicas", "/b"]);
    }

    #[test]
    fn pointers_and_jq_remove_from_all_sides() {
        let rules = IgnoreRules::compile(
            vec![rule(json!({"group": "apps", "kind": "Deployment",
                "jsonPointers": ["/spec/replicas", "/spec/does/not/exist"],
                "jqPathExpressions": [".spec.template.spec.containers[] | select(.name == \"istio-proxy\")", ".nothing.here[]?"]}))],
            // Dropping a whole container hides its image: sensitive, so it must be allowed.
            IgnoreOptions { allow_sensitive: true, ..Default::default() },
        )
        .unwrap();
        let mut desired = json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "app"}]}}}});
        let mut live = json!({"spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "app"}, {"name": "istio-proxy"}]}}}});
        let notes = rules.apply(&key(), &[], &mut [&mut desired, &mut live]);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(desired, live);
    }

    #[test]
    fn bad_rules_are_errors() {
        let e = IgnoreRules::compile(
            vec![rule(
                json!({"kind": "*", "group": "*", "jsonPointers": ["spec"]}),
            )],
            IgnoreOptions::default(),
        );
        assert!(matches!(e, Err(Error::BadIgnoreRule { .. })));
        let e = IgnoreRules::compile(
            vec![rule(
                json!({"kind": "*", "group": "*", "jqPathExpressions": [".a[[["]}),
            )],
            IgnoreOptions::default(),
        );
        assert!(matches!(e, Err(Error::BadIgnoreRule { .. })));
    }

    #[test]
    fn sensitive_rules_refused_unless_allowed() {
        let r = vec![rule(
            json!({"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/template/spec/containers/0/image"]}),
        )];
        let err = IgnoreRules::compile(r.clone(), IgnoreOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("test") && err.contains("containers.*.image"),
            "{err}"
        );
        let opts = IgnoreOptions {
            allow_sensitive: true,
            ..Default::default()
        };
        assert!(IgnoreRules::compile(r, opts).is_ok());
        let jq = vec![rule(
            json!({"group": "apps", "kind": "Deployment", "jqPathExpressions": [".spec.template.spec.containers[] | select(.name == \"x\") | .securityContext"]}),
        )];
        assert_eq!(sensitive_findings(&jq).len(), 1);
        let ok = vec![rule(
            json!({"group": "apps", "kind": "Deployment", "jqPathExpressions": [".spec.template.spec.containers[] | select(.image == \"x\") | .env"]}),
        )];
        // `.image` appears only inside select(): the deleted path is .env.
        assert_eq!(
            sensitive_findings(&ok),
            vec![],
            "select() condition is not hidden"
        );
    }

    #[test]
    fn respect_live_keeps_live_values_of_ignored_fields_only() {
        let rules = IgnoreRules::compile(
            vec![rule(json!({"group": "apps", "kind": "Deployment",
                "jsonPointers": ["/spec/replicas", "/metadata/annotations/owner"],
                "jqPathExpressions": [".spec.template.spec.containers[] | select(.name == \"sidecar\") | .resources"]}))],
            IgnoreOptions::default(),
        )
        .unwrap();
        let key = ResourceKey::new("apps", "Deployment", "shop", "api");
        let mut desired = json!({"metadata": {"name": "api", "annotations": {"owner": "git"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "api", "image": "api:2"},
                {"name": "sidecar", "image": "proxy:1", "resources": {"limits": {"cpu": "1"}}}]}}}});
        let live = json!({"metadata": {"name": "api"},
            "spec": {"replicas": 7, "template": {"spec": {"containers": [
                {"name": "api", "image": "api:1"},
                {"name": "sidecar", "image": "proxy:1", "resources": {"limits": {"cpu": "3"}}}]}}}});
        rules.respect_live(&key, &mut desired, &live);
        assert_eq!(desired["spec"]["replicas"], 7, "the HPA's replicas stay");
        assert_eq!(desired["metadata"]["annotations"].get("owner"), None);
        assert_eq!(
            desired["spec"]["template"]["spec"]["containers"][0]["image"],
            "api:2"
        );
        assert_eq!(
            desired["spec"]["template"]["spec"]["containers"][1]["resources"]["limits"]["cpu"],
            "3"
        );
        let other = ResourceKey::new("", "Service", "shop", "api");
        let mut svc = json!({"spec": {"replicas": 1}});
        rules.respect_live(&other, &mut svc, &json!({}));
        assert_eq!(svc["spec"]["replicas"], 1);
    }

    fn deployment(image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "payments-api", "namespace": "payments"},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "api", "image": image, "env": [{"name": "MODE", "value": "live"}]}]}}}})
    }

    #[test]
    fn jq_guard_judges_selected_paths_not_spelling() {
        let spelled = rule(json!({"group": "apps", "kind": "Deployment",
            "jqPathExpressions": [".spec.template.spec.containers[] | .[\"ima\" + \"ge\"]"]}));
        let err = IgnoreRules::compile(vec![spelled.clone()], IgnoreOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("containers.*.image"), "{err}");
        // Allowed through compile (say, by a rule list compiled elsewhere): the per-object guard
        // still keeps the image compared.
        let rules = IgnoreRules {
            rules: vec![spelled],
            opts: IgnoreOptions::default(),
        };
        let mut desired = deployment("registry.example.com/api:1.4.2");
        let mut live = deployment("evil.example.net/api:1.4.2");
        let notes = rules.apply(&key(), &[], &mut [&mut desired, &mut live]);
        assert_ne!(desired, live, "the image change stays visible");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("spec.template.spec.containers.0.image")),
            "{notes:?}"
        );
    }

    #[test]
    fn unbounded_jq_rules_are_refused_when_loaded() {
        let r = rule(json!({"group": "apps", "kind": "Deployment",
            "jqPathExpressions": [".spec | select(def f: 1 + f; f)"]}));
        let err = IgnoreRules::compile(vec![r], IgnoreOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("test") && err.contains("stopped"), "{err}");
    }
}
