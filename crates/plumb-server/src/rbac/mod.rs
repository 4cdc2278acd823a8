//! Authorization as Argo CD decides it: casbin with Argo's own model (`model.conf`) and built-in
//! policy (`builtin-policy.csv`), the rules of `argocd-rbac-cm`, and, for requests about a
//! project's objects, the project's role policies (Argo's runtime policy). The only function
//! Argo adds to casbin, `globOrRegexMatch`, is registered here with globset or regex behind it.

pub(crate) mod policy;

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use casbin::rhai::Dynamic;
use casbin::{CoreApi, DefaultModel, MemoryAdapter, MgmtApi};
use kube::api::DynamicObject;

use crate::auth::{Caller, CallerKind};
use crate::error::{Error, Result};
use crate::state::{AppState, to_value};
use policy::{MatchMode, RbacSettings, Rule};

/// The ConfigMap holding the policy.
pub(crate) const RBAC_CONFIGMAP: &str = "argocd-rbac-cm";

const MODEL: &str = include_str!("model.conf");
const BUILTIN: &str = include_str!("builtin-policy.csv");

static BUILTIN_RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let mut problems = Vec::new();
    let rules = policy::parse_lines(BUILTIN, "builtin-policy.csv", &mut problems);
    debug_assert!(problems.is_empty(), "{problems:?}");
    rules
});

/// Argo's answer for an object the caller may not see, whether or not it exists
/// (`argocommon.PermissionDeniedAPIError`).
pub(crate) const PERMISSION_DENIED: &str = "permission denied";

/// Resources whose objects are `<project>/<name>` (a global repository's object is its URL,
/// whose first segment names no project).
const PROJECT_SCOPED: [&str; 6] = [
    "applications",
    "applicationsets",
    "logs",
    "exec",
    "repositories",
    "clusters",
];

/// Compiled patterns, bounded: patterns come from the policy, not from callers, but a policy can
/// be large.
fn cached<T: Clone>(
    cache: &Mutex<HashMap<String, Option<T>>>,
    pattern: &str,
    compile: impl FnOnce(&str) -> Option<T>,
) -> Option<T> {
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(hit) = map.get(pattern) {
        return hit.clone();
    }
    if map.len() >= 4096 {
        map.clear();
    }
    let compiled = compile(pattern);
    map.insert(pattern.to_string(), compiled.clone());
    compiled
}

static GLOBS: LazyLock<Mutex<HashMap<String, Option<globset::GlobMatcher>>>> =
    LazyLock::new(Mutex::default);
static REGEXES: LazyLock<Mutex<HashMap<String, Option<regex::Regex>>>> =
    LazyLock::new(Mutex::default);

/// Argo's glob match (gobwas/glob without separators: `*` crosses `/`).
pub(crate) fn glob_match(value: &str, pattern: &str) -> bool {
    if value == pattern {
        return true;
    }
    cached(&GLOBS, pattern, |p| {
        globset::Glob::new(p).ok().map(|g| g.compile_matcher())
    })
    .is_some_and(|m| m.is_match(value))
}

/// Argo's regex match (Go's unanchored `regexp.MatchString`). A pattern that is not a regular
/// expression (the built-in policy's `*` and `*/*`) is matched as a glob, so role:admin and
/// role:readonly keep their meaning in regex mode.
pub(crate) fn regex_match(value: &str, pattern: &str) -> bool {
    match cached(&REGEXES, pattern, |p| regex::Regex::new(p).ok()) {
        Some(r) => r.is_match(value),
        None => glob_match(value, pattern),
    }
}

fn text(d: Dynamic) -> String {
    d.into_string().unwrap_or_default()
}

fn glob_fn(value: Dynamic, pattern: Dynamic) -> Dynamic {
    Dynamic::from(glob_match(&text(value), &text(pattern)))
}

fn regex_fn(value: Dynamic, pattern: Dynamic) -> Dynamic {
    Dynamic::from(regex_match(&text(value), &text(pattern)))
}

/// A casbin enforcer over the built-in policy and `rules`.
pub(crate) struct Enforcer(casbin::Enforcer);

impl Enforcer {
    pub(crate) async fn new(mode: MatchMode, rules: &[&[Rule]]) -> Result<Self> {
        let fail = |e: casbin::Error| Error::Internal(format!("building the RBAC enforcer: {e}"));
        let model = DefaultModel::from_str(MODEL).await.map_err(fail)?;
        let mut e = casbin::Enforcer::new(model, MemoryAdapter::default())
            .await
            .map_err(fail)?;
        let f = match mode {
            MatchMode::Glob => glob_fn,
            MatchMode::Regex => regex_fn,
        };
        e.add_function(
            "globOrRegexMatch",
            casbin::function_map::OperatorFunction::Arg2(f),
        );
        let all = BUILTIN_RULES
            .iter()
            .chain(rules.iter().flat_map(|r| r.iter()));
        for rule in all {
            // Duplicates answer false; that is not an error.
            match rule {
                Rule::P(p) => e.add_policy(p.to_vec()).await.map_err(fail)?,
                Rule::G(g) => e.add_grouping_policy(g.to_vec()).await.map_err(fail)?,
            };
        }
        Ok(Self(e))
    }

    /// Whether `sub` may do `act` on `obj` of `res`.
    pub(crate) fn allows(&self, sub: &str, res: &str, act: &str, obj: &str) -> bool {
        self.0.enforce((sub, res, act, obj)).unwrap_or(false)
    }
}

/// The decisions of one request: the settings read once, an enforcer per project met.
pub(crate) struct Authz {
    state: AppState,
    caller: Caller,
    settings: RbacSettings,
    enforcers: HashMap<Option<String>, Enforcer>,
}

impl Authz {
    /// Reads `argocd-rbac-cm` (problems logged) for `caller`'s requests.
    pub(crate) async fn new(state: &AppState, caller: &Caller) -> Result<Self> {
        let settings = if caller.kind == CallerKind::Unrestricted {
            RbacSettings::default()
        } else {
            let data =
                crate::auth::store::config_map(&state.client, &state.namespace, RBAC_CONFIGMAP)
                    .await?;
            let settings = policy::from_config_map(&data);
            for p in &settings.problems {
                tracing::warn!("{p}");
            }
            settings
        };
        Ok(Self {
            state: state.clone(),
            caller: caller.clone(),
            settings,
            enforcers: HashMap::new(),
        })
    }

    async fn project_rules(&self, project: &str) -> Result<Option<Vec<Rule>>> {
        if crate::state::check_name("AppProject", project).is_err() {
            return Ok(None);
        }
        let obj: Option<DynamicObject> =
            self.state.projects().get_opt(project).await.map_err(|e| {
                Error::kube(
                    format!("reading AppProject {}/{project}", self.state.namespace),
                    e,
                )
            })?;
        let Some(obj) = obj else { return Ok(None) };
        let mut problems = Vec::new();
        let rules = policy::project_rules(&to_value(&obj)?, &mut problems);
        for p in problems {
            tracing::warn!("{p}");
        }
        Ok(Some(rules))
    }

    async fn enforcer(&mut self, project: Option<&str>) -> Result<(&Enforcer, bool)> {
        let key = project.map(str::to_string);
        let mut exists = false;
        if !self.enforcers.contains_key(&key) {
            let extra = match project {
                Some(p) => self.project_rules(p).await?,
                None => None,
            };
            exists = extra.is_some();
            let extra = extra.unwrap_or_default();
            let e = Enforcer::new(self.settings.mode, &[&self.settings.rules, &extra]).await?;
            self.enforcers.insert(key.clone(), e);
        } else if project.is_some() {
            exists = true;
        }
        let e = self
            .enforcers
            .get(&key)
            .ok_or_else(|| Error::Internal("RBAC enforcer missing".into()))?;
        Ok((e, exists))
    }

    /// Argo's `EnforceClaims`: the default role, the subject, then each group of the caller's
    /// scopes; project role tokens only within their own project.
    pub(crate) async fn allows(&mut self, res: &str, act: &str, obj: &str) -> Result<bool> {
        if self.caller.kind == CallerKind::Unrestricted {
            return Ok(true);
        }
        let project = if PROJECT_SCOPED.contains(&res) {
            obj.split('/').next()
        } else if res == "projects" {
            Some(obj)
        } else {
            None
        };
        let default_role = self.settings.default_role.clone();
        let scopes = self.settings.scopes.clone();
        let caller = self.caller.clone();
        let (enforcer, project_exists) = self.enforcer(project).await?;
        let with_default = |sub: &str| {
            (!default_role.is_empty() && enforcer.allows(&default_role, res, act, obj))
                || enforcer.allows(sub, res, act, obj)
        };
        if let CallerKind::ProjectRole { project: own, .. } = &caller.kind
            && project_exists
        {
            return Ok(project == Some(own.as_str()) && with_default(&caller.subject));
        }
        if with_default(&caller.subject) {
            return Ok(true);
        }
        for g in caller.scope_values(&scopes) {
            if enforcer.allows(&g, res, act, obj) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `act` on the Application whose RBAC object is `obj`, answered as Argo's
    /// `getAppEnforceRBAC` answers (GHSA-2q5c-qw9c-fmvq): a caller who may not even `get` it
    /// hears the same bare "permission denied" as for an Application that does not exist, so the
    /// answer reveals neither that it exists nor its project; one who may read it is told which
    /// right is missing.
    pub(crate) async fn check_app(&mut self, act: &str, obj: &str) -> Result<()> {
        if self.allows("applications", act, obj).await? {
            return Ok(());
        }
        tracing::info!(
            sub = %self.caller.subject,
            action = act,
            object = obj,
            "denied an action on an application the caller may not perform"
        );
        if act != "get" && self.allows("applications", "get", obj).await? {
            return self.check("applications", act, obj).await;
        }
        Err(Error::PermissionDenied(PERMISSION_DENIED.into()))
    }

    /// [`Authz::allows`] or PermissionDenied with Argo's message.
    pub(crate) async fn check(&mut self, res: &str, act: &str, obj: &str) -> Result<()> {
        if self.allows(res, act, obj).await? {
            return Ok(());
        }
        Err(Error::PermissionDenied(format!(
            "permission denied: {res}, {act}, {obj}, sub: {}",
            self.caller.subject
        )))
    }
}

/// The RBAC object of an Application: `<project>/<name>` in the control namespace,
/// `<project>/<namespace>/<name>` elsewhere (Argo's `AppRBACName`; a rule `team/*` matches both,
/// as `*` crosses `/`).
pub(crate) fn app_object(obj: &serde_json::Value, control_namespace: &str) -> String {
    let project = obj
        .pointer("/spec/project")
        .and_then(serde_json::Value::as_str)
        .filter(|p| !p.is_empty())
        .unwrap_or("default");
    let name = obj
        .pointer("/metadata/name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    match obj
        .pointer("/metadata/namespace")
        .and_then(serde_json::Value::as_str)
    {
        Some(ns) if !ns.is_empty() && ns != control_namespace => {
            format!("{project}/{ns}/{name}")
        }
        _ => format!("{project}/{name}"),
    }
}

impl AppState {
    /// Checks `act` on Application `name` for `caller`. As Argo CD, an Application that does not
    /// exist is "permission denied" (so callers cannot probe for names), unless authorization is
    /// off.
    pub(crate) async fn authorize_app(&self, caller: &Caller, name: &str, act: &str) -> Result<()> {
        if caller.kind == CallerKind::Unrestricted {
            return Ok(());
        }
        let (api, ns, name) = self.apps_for(name)?;
        let obj = api
            .get_opt(name)
            .await
            .map_err(|e| Error::kube(format!("reading Application {ns}/{name}"), e))?;
        let Some(obj) = obj else {
            return Err(Error::PermissionDenied(PERMISSION_DENIED.into()));
        };
        Authz::new(self, caller)
            .await?
            .check_app(act, &app_object(&to_value(&obj)?, &self.namespace))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_cross_slashes_and_regexes_are_unanchored_as_in_argo() {
        assert!(glob_match("default/guestbook", "*"));
        assert!(glob_match("default/guestbook", "*/*"));
        assert!(glob_match("team-a/api", "team-*/*"));
        assert!(!glob_match("team-b/api", "team-a/*"));
        assert!(glob_match("action/apps/Deployment/restart", "action/*"));
        assert!(glob_match("prod/web", "{prod,staging}/web"));
        assert!(!glob_match("dev/web", "{prod,staging}/web"));
        assert!(glob_match("a", "?"));
        assert!(regex_match("team-a/api", "^team-(a|b)/.*$"));
        assert!(regex_match("xteam-a/api", "team-a"));
        assert!(!regex_match("team-c/api", "^team-(a|b)/"));
        // A broken pattern matches nothing.
        assert!(!glob_match("x", "[unclosed"));
        assert!(!regex_match("x", "(unclosed"));
        assert!(
            regex_match("default/app", "*/*"),
            "built-in globs in regex mode"
        );
    }

    async fn enforcer(csv: &str, mode: MatchMode) -> Enforcer {
        let mut problems = Vec::new();
        let rules = policy::parse_lines(csv, "test", &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        Enforcer::new(mode, &[&rules]).await.expect("enforcer")
    }

    #[tokio::test]
    async fn builtin_roles_user_rules_and_deny() {
        let e = enforcer(
            "p, role:dev, applications, *, dev/*, allow\n\
             p, role:dev, applications, delete, dev/*, deny\n\
             g, alice, role:dev\n\
             g, bob, role:readonly\n",
            MatchMode::Glob,
        )
        .await;
        assert!(e.allows("admin", "applications", "delete", "any/thing"));
        assert!(e.allows("admin", "clusters", "create", "https://x"));
        assert!(e.allows("bob", "applications", "get", "dev/api"));
        assert!(!e.allows("bob", "applications", "sync", "dev/api"));
        assert!(e.allows("alice", "applications", "sync", "dev/api"));
        assert!(!e.allows("alice", "applications", "sync", "prod/api"));
        assert!(
            !e.allows("alice", "applications", "delete", "dev/api"),
            "deny wins"
        );
        assert!(!e.allows("nobody", "applications", "get", "dev/api"));
    }

    #[tokio::test]
    async fn regex_mode() {
        let e = enforcer(
            "p, carol, applications, (get|sync), ^team-(a|b)/.*$, allow\n",
            MatchMode::Regex,
        )
        .await;
        assert!(e.allows("carol", "applications", "sync", "team-a/x"));
        assert!(!e.allows("carol", "applications", "delete", "team-a/x"));
        assert!(!e.allows("carol", "applications", "get", "team-c/x"));
    }
}
