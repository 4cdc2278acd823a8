//! The order in which rules decide an object's health:
//! pending deletion → Lua script (settings, then directories, then Plumb's own) → built-in rule →
//! generic rule → none.
//!
//! Ported from gitops-engine `pkg/health/health.go: GetResourceHealth`; the generic step is Plumb's
//! and can be switched off to get Argo's behaviour exactly.

use std::path::PathBuf;
use std::str::FromStr;

use plumb_model::settings::{Settings, UNKNOWN_KIND_HEALTH};
use plumb_model::{annotations, group_of};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::lua::scripts::ScriptSources;
use crate::lua::{LuaLimits, LuaScript};
use crate::missing_status::{ClusterFacts, MissingStatusRule};
use crate::status::{HealthCode, HealthStatus};
use crate::{generic, rules};

/// What to do with kinds that have neither a built-in rule nor a Lua script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UnknownKindHealth {
    /// Judge from the standard signals (observedGeneration, Ready/Available/... conditions).
    #[default]
    Generic,
    /// No health, as Argo CD does.
    None,
}

impl UnknownKindHealth {
    /// The setting's spelling (`generic`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            UnknownKindHealth::Generic => "generic",
            UnknownKindHealth::None => "none",
        }
    }
}

impl FromStr for UnknownKindHealth {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "generic" => Ok(UnknownKindHealth::Generic),
            "none" => Ok(UnknownKindHealth::None),
            other => Err(Error::InvalidSetting {
                key: UNKNOWN_KIND_HEALTH.to_string(),
                value: other.to_string(),
                expected: "generic or none",
            }),
        }
    }
}

/// How to build an [`Assessor`].
#[derive(Debug, Clone, Default)]
pub struct Config {
    settings: Settings,
    customization_dirs: Vec<PathBuf>,
    unknown_kinds: Option<UnknownKindHealth>,
    limits: LuaLimits,
}

impl Config {
    /// Takes health scripts (`resource.customizations.health.*`, legacy `resource.customizations`),
    /// `plumb.health.unknownKinds`, `plumb.health.missingStatus` and
    /// `plumb.health.missingStatusGracePeriod` from a settings ConfigMap.
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// Adds a directory laid out like Argo's `resource_customizations`; earlier ones win.
    pub fn customizations_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.customization_dirs.push(dir.into());
        self
    }

    /// Overrides `plumb.health.unknownKinds` from the settings.
    pub fn unknown_kinds(mut self, mode: UnknownKindHealth) -> Self {
        self.unknown_kinds = Some(mode);
        self
    }

    /// Limits for each Lua evaluation.
    pub fn lua_limits(mut self, limits: LuaLimits) -> Self {
        self.limits = limits;
        self
    }
}

/// Assesses the health of objects; built once from settings, then shared (it is `Send + Sync`;
/// each thread keeps its own Lua interpreters). Cloning is cheap: the scripts are shared.
#[derive(Debug, Clone)]
pub struct Assessor {
    scripts: std::sync::Arc<ScriptSources>,
    unknown_kinds: UnknownKindHealth,
    missing_status: MissingStatusRule,
    limits: LuaLimits,
}

impl Default for Assessor {
    /// Built-in rules, Plumb's own Lua scripts and the generic rule; no settings.
    fn default() -> Self {
        Assessor {
            scripts: Default::default(),
            unknown_kinds: UnknownKindHealth::Generic,
            missing_status: MissingStatusRule::default(),
            limits: LuaLimits::default(),
        }
    }
}

impl Assessor {
    /// Reads the settings and indexes the script directories.
    pub fn new(config: Config) -> Result<Self> {
        let unknown_kinds = match config.unknown_kinds {
            Some(mode) => mode,
            None => match config.settings.get(UNKNOWN_KIND_HEALTH) {
                Some(value) => value.parse()?,
                None => UnknownKindHealth::default(),
            },
        };
        let scripts = std::sync::Arc::new(ScriptSources::load(
            &config.settings,
            &config.customization_dirs,
        )?);
        let missing_status = MissingStatusRule::from_settings(&config.settings)?;
        Ok(Assessor {
            scripts,
            unknown_kinds,
            missing_status,
            limits: config.limits,
        })
    }

    /// What this assessor does with kinds that have no rule.
    pub fn unknown_kinds(&self) -> UnknownKindHealth {
        self.unknown_kinds
    }

    /// The Lua script that would judge this group and kind, if any.
    pub fn script_for(&self, group: &str, kind: &str) -> Option<&LuaScript> {
        self.scripts.find(group, kind)
    }

    /// Whether a kind has a health rule of its own (a Lua script or a built-in rule), as opposed
    /// to the generic rule or none. Argo CD lets objects without one through sync waves at once.
    pub fn has_own_rule(&self, group: &str, kind: &str) -> bool {
        self.scripts.find(group, kind).is_some() || rules::rule_for(group, kind).is_some()
    }

    /// The health of one live object, or `None` when no rule gives it health.
    ///
    /// Without [`ClusterFacts`] the rule for custom resources that never got a status cannot
    /// tell whether the kind has a status subresource, so it stays silent; the controller uses
    /// [`Assessor::assess_in`].
    pub fn assess(&self, obj: &Value) -> Option<HealthStatus> {
        self.assess_with(obj, None)
    }

    /// The health of one live object of a cluster described by `facts`.
    pub fn assess_in(&self, obj: &Value, facts: &dyn ClusterFacts) -> Option<HealthStatus> {
        self.assess_with(obj, Some(facts))
    }

    /// The health that decides whether a sync wave may go on: [`Assessor::assess_in`], except
    /// that a custom resource that never got a status (`plumb.health.missingStatus`) reads
    /// `Progressing` from the moment it exists, not only after the grace period, so it holds the
    /// next wave as a Progressing object does until its controller reports a status.
    pub fn assess_for_wave(&self, obj: &Value, facts: &dyn ClusterFacts) -> Option<HealthStatus> {
        self.assess_inner(obj, Some(facts), true)
    }

    pub(crate) fn assess_with(
        &self,
        obj: &Value,
        facts: Option<&dyn ClusterFacts>,
    ) -> Option<HealthStatus> {
        self.assess_inner(obj, facts, false)
    }

    fn assess_inner(
        &self,
        obj: &Value,
        facts: Option<&dyn ClusterFacts>,
        for_wave: bool,
    ) -> Option<HealthStatus> {
        if pending_deletion(obj) {
            return Some(HealthStatus::new(
                HealthCode::Progressing,
                "Pending deletion",
            ));
        }
        let (group, kind) = group_kind(obj);
        if let Some(script) = self.scripts.find(group, kind) {
            // A script that returns nil gives no health; Argo does not fall back either.
            return script.evaluate(obj, &self.limits);
        }
        if let Some(rule) = rules::rule_for(group, kind) {
            return Some(rule(obj));
        }
        if is_application(group, kind) {
            // Argo CD has given an Application no health of its own since 1.8 (argo-cd#3781,
            // gitops-engine#153): a child Application neither holds a sync wave nor counts in
            // its parent's health unless `resource.customizations.health.argoproj.io_Application`
            // says how (the script is found above). Neither the generic rule nor the
            // missing-status rule stands in for it.
            return None;
        }
        match self.unknown_kinds {
            UnknownKindHealth::Generic => crate::crossplane::health(obj)
                .or_else(|| generic::health(obj))
                .or_else(|| {
                    let facts = facts?;
                    if for_wave {
                        self.missing_status.health_for_wave(obj, group, kind, facts)
                    } else {
                        self.missing_status.health(obj, group, kind, facts)
                    }
                }),
            UnknownKindHealth::None => None,
        }
    }
}

/// Health with Plumb's defaults: built-in rules, Plumb's own Lua scripts and the generic rule
/// (no settings, no user scripts).
pub fn assess(obj: &Value) -> Option<HealthStatus> {
    static DEFAULT: std::sync::OnceLock<Assessor> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(Assessor::default).assess(obj)
}

/// Argo CD's Application kind.
fn is_application(group: &str, kind: &str) -> bool {
    group == "argoproj.io" && kind == "Application"
}

/// The object's group and kind, borrowed (this runs for every object, so no allocation).
fn group_kind(obj: &Value) -> (&str, &str) {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    (group_of(api_version), kind)
}

/// Argo's first rule: an object being deleted is Progressing, unless a hook finalizer holds it
/// (then its own rule reports how the hook ended).
fn pending_deletion(obj: &Value) -> bool {
    let deleting = obj
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null());
    deleting
        && !obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| {
                f.iter()
                    .any(|v| v.as_str() == Some(annotations::HOOK_FINALIZER))
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assessor_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Assessor>();
    }

    /// Facts of a cluster whose every kind has a status subresource, as Plumb's Application
    /// CRD has.
    struct AllHaveStatus;

    impl ClusterFacts for AllHaveStatus {
        fn status_subresource(&self, _: &str, _: &str) -> Option<bool> {
            Some(true)
        }
    }

    fn child_app(status: Option<Value>) -> Value {
        let mut app = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "payments", "namespace": "argocd", "generation": 2,
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"project": "default"}
        });
        if let Some(s) = status {
            app["status"] = s;
        }
        app
    }

    #[test]
    fn an_application_has_no_health_of_its_own_unless_a_script_says_how() {
        let a = Assessor::default();
        let facts = AllHaveStatus;
        let never_reconciled = child_app(None);
        let degraded = child_app(Some(serde_json::json!({
            "health": {"status": "Degraded"},
            "sync": {"status": "OutOfSync"},
            "conditions": [{"type": "Ready", "status": "False", "reason": "Failed"}]
        })));
        for app in [&never_reconciled, &degraded] {
            assert_eq!(a.assess(app), None);
            assert_eq!(a.assess_in(app, &facts), None);
            assert_eq!(a.assess_for_wave(app, &facts), None);
        }
        assert!(!a.has_own_rule("argoproj.io", "Application"));

        // Argo CD's documented health check for app of apps.
        let script = r#"hs = {}
hs.status = "Progressing"
hs.message = ""
if obj.status ~= nil then
  if obj.status.health ~= nil then
    hs.status = obj.status.health.status
    if obj.status.health.message ~= nil then
      hs.message = obj.status.health.message
    end
  end
end
return hs"#;
        let settings = Settings::from_data(
            [(
                "resource.customizations.health.argoproj.io_Application".to_string(),
                script.to_string(),
            )]
            .into(),
        );
        let a = Assessor::new(Config::default().settings(settings)).unwrap();
        assert!(a.has_own_rule("argoproj.io", "Application"));
        assert_eq!(
            a.assess_for_wave(&never_reconciled, &facts).map(|h| h.code),
            Some(HealthCode::Progressing)
        );
        assert_eq!(
            a.assess_for_wave(&degraded, &facts).map(|h| h.code),
            Some(HealthCode::Degraded)
        );
    }

    #[test]
    fn unknown_kind_modes_parse() {
        assert_eq!(
            "generic".parse::<UnknownKindHealth>().unwrap(),
            UnknownKindHealth::Generic
        );
        assert_eq!(
            " none ".parse::<UnknownKindHealth>().unwrap(),
            UnknownKindHealth::None
        );
        assert!("kstatus".parse::<UnknownKindHealth>().is_err());
    }
}
