//! How the ApplicationSet controller runs: Argo CD's `applicationsetcontroller.*` keys of
//! `argocd-cmd-params-cm`, and Plumb's off switch.

use std::collections::BTreeMap;
use std::time::Duration;

use plumb_model::applicationset::ApplicationsSyncPolicy;

/// `argocd-cmd-params-cm` key: the controller-wide applications sync policy.
pub const POLICY_KEY: &str = "applicationsetcontroller.policy";
/// `argocd-cmd-params-cm` key: whether a set's own `applicationsSync` overrides the policy.
pub const POLICY_OVERRIDE_KEY: &str = "applicationsetcontroller.enable.policy.override";
/// `argocd-cmd-params-cm` key: namespaces (besides the control namespace) sets may live in.
pub const NAMESPACES_KEY: &str = "applicationsetcontroller.namespaces";
/// `argocd-cmd-params-cm` key: progressive syncs (`RollingSync`).
pub const PROGRESSIVE_SYNCS_KEY: &str = "applicationsetcontroller.enable.progressive.syncs";
/// `argocd-cmd-params-cm` key: annotations every generated Application keeps on update.
pub const GLOBAL_PRESERVED_ANNOTATIONS_KEY: &str =
    "applicationsetcontroller.global.preserved.annotations";
/// `argocd-cmd-params-cm` key: labels every generated Application keeps on update.
pub const GLOBAL_PRESERVED_LABELS_KEY: &str = "applicationsetcontroller.global.preserved.labels";
/// `argocd-cmd-params-cm` key: sets reconciled at once.
pub const CONCURRENCY_KEY: &str = "applicationsetcontroller.concurrent.reconciliations.max";
/// `argocd-cmd-params-cm` key: entries of `status.resources` kept.
pub const MAX_RESOURCES_KEY: &str = "applicationsetcontroller.status.max.resources.count";
/// Whether the scmProvider and pullRequest generators may run (Argo's default: true).
pub const ENABLE_SCM_KEY: &str = "applicationsetcontroller.enable.scm.providers";
/// The only forge API URLs scmProvider and pullRequest generators may name.
pub const ALLOWED_SCM_KEY: &str = "applicationsetcontroller.allowed.scm.providers";
/// `argocd-cmd-params-cm` key: the re-evaluation interval of git, OCI and clusterDecisionResource
/// generators without `requeueAfterSeconds` (Argo's `ARGOCD_APPLICATIONSET_CONTROLLER_REQUEUE_AFTER`,
/// which its install fills from this key).
pub const REQUEUE_AFTER_KEY: &str = "applicationsetcontroller.requeue.after";
/// The environment variable Argo's controller reads [`REQUEUE_AFTER_KEY`] from; set, it wins.
pub const REQUEUE_AFTER_ENV: &str = "ARGOCD_APPLICATIONSET_CONTROLLER_REQUEUE_AFTER";
/// Plumb's `argocd-cmd-params-cm` key turning the ApplicationSet controller off (`"false"`).
pub const ENABLED_KEY: &str = "plumb.applicationset.enabled";

/// The bounds Argo puts on [`REQUEUE_AFTER_KEY`].
const REQUEUE_AFTER_BOUNDS: (Duration, Duration) =
    (Duration::from_secs(1), Duration::from_secs(8760 * 3600));

/// The interval the environment (first) or the key sets, if either does.
fn requeue_after_from(env: Option<&str>, key: Option<&str>) -> Result<Option<Duration>, String> {
    let env = env.map(str::trim).filter(|v| !v.is_empty());
    let Some((source, text)) = env
        .map(|v| (REQUEUE_AFTER_ENV, v))
        .or_else(|| key.map(|v| (REQUEUE_AFTER_KEY, v)))
    else {
        return Ok(None);
    };
    parse_requeue_after(text)
        .map(Some)
        .map_err(|why| format!("{source} {text:?} {why}"))
}

/// A requeue interval as Argo's `ParseDurationFromEnv` reads it (a Go duration, or `<n>[smhd]`),
/// within 1s..8760h. Argo logs a warning and keeps 3m for a value it cannot use; Plumb refuses
/// to start instead, so a typo never silently changes how often every set is re-read.
fn parse_requeue_after(text: &str) -> Result<Duration, String> {
    let parsed = plumb_model::go::duration::parse(text)
        .ok()
        .and_then(|d| d.to_std())
        .or_else(|| days(text));
    let d = parsed.ok_or("is not a duration (e.g. 3m, 1h30m, 1d)")?;
    let (min, max) = REQUEUE_AFTER_BOUNDS;
    if d < min || d > max {
        return Err("is outside 1s..8760h".to_string());
    }
    Ok(d)
}

/// Argo's fallback for durations in days (`argoproj/pkg` `time.ParseDuration`: `^(\d+)([smhd])$`).
fn days(text: &str) -> Option<Duration> {
    let n: u64 = text.strip_suffix('d')?.parse().ok()?;
    n.checked_mul(24 * 3600).map(Duration::from_secs)
}

/// Argo's requeue after an error that needs the user (an invalid Application, a generator
/// error): `ReconcileRequeueOnValidationError`, 3 minutes.
pub const REQUEUE_ON_ERROR: Duration = Duration::from_secs(180);

/// How the ApplicationSet controller runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Argo CD's namespace: settings, cluster Secrets, AppProjects, and sets always watched.
    pub control_namespace: String,
    /// Other namespaces sets may live in (names, globs, `/regex/`).
    pub namespaces: Vec<String>,
    /// The controller's policy (`sync` when unset).
    pub policy: ApplicationsSyncPolicy,
    /// Whether a set's `syncPolicy.applicationsSync` overrides [`Config::policy`].
    pub policy_override: bool,
    /// Progressive syncs on (`RollingSync` honoured).
    pub progressive_syncs: bool,
    /// How long a rollout waits after a change before asking Applications to refresh.
    pub refresh_grace_period: Duration,
    /// The deletion brake's thresholds.
    pub brake: crate::brake::Settings,
    /// Annotations kept on every generated Application when it is updated.
    pub preserved_annotations: Vec<String>,
    /// Labels kept on every generated Application when it is updated.
    pub preserved_labels: Vec<String>,
    /// Sets reconciled at once.
    pub workers: usize,
    /// Entries of `status.resources` kept (Argo's `MaxResourcesStatusCount`; 0: all).
    pub max_resources_status: usize,
    /// Which forges the scmProvider and pullRequest generators may call.
    pub scm: crate::ScmSettings,
    /// The default interval of git, OCI and clusterDecisionResource generators.
    pub requeue_after: Duration,
}

impl Config {
    /// The progressive sync settings.
    pub fn progressive(&self) -> crate::progressive::Settings {
        crate::progressive::Settings {
            enabled: self.progressive_syncs,
            refresh_grace_period: self.refresh_grace_period,
        }
    }

    /// Defaults for `control_namespace`: policy `sync` with override, no other namespaces.
    pub fn new(control_namespace: impl Into<String>) -> Self {
        Self {
            control_namespace: control_namespace.into(),
            namespaces: Vec::new(),
            policy: ApplicationsSyncPolicy::Sync,
            policy_override: true,
            progressive_syncs: false,
            refresh_grace_period: crate::progressive::Settings::default().refresh_grace_period,
            brake: crate::brake::Settings::default(),
            preserved_annotations: Vec::new(),
            preserved_labels: Vec::new(),
            workers: 10,
            max_resources_status: 5000,
            scm: crate::ScmSettings::default(),
            requeue_after: crate::generators::DEFAULT_REQUEUE_AFTER,
        }
    }

    /// The configuration from `argocd-cmd-params-cm`'s data, as Argo's ApplicationSet
    /// controller reads its flags from it. An unknown policy is an error (Argo refuses to start).
    pub fn from_cmd_params(
        control_namespace: impl Into<String>,
        params: &BTreeMap<String, String>,
    ) -> Result<Self, String> {
        let mut config = Self::new(control_namespace);
        let get = |k: &str| params.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let policy_text = get(POLICY_KEY);
        if let Some(text) = policy_text {
            config.policy = parse_policy(text).ok_or_else(|| {
                format!(
                    "{POLICY_KEY} {text:?} is not a policy (sync, create-only, create-update, create-delete)"
                )
            })?;
        }
        // Argo: `--enable-policy-override` defaults to true exactly when no policy is set.
        config.policy_override = match get(POLICY_OVERRIDE_KEY) {
            Some(v) => go_bool(v).unwrap_or(policy_text.is_none()),
            None => policy_text.is_none(),
        };
        config.progressive_syncs = get(PROGRESSIVE_SYNCS_KEY).and_then(go_bool) == Some(true);
        config.refresh_grace_period =
            crate::progressive::Settings::from_params(params).refresh_grace_period;
        config.brake = crate::brake::Settings::from_params(params);
        config.namespaces = get(NAMESPACES_KEY).map(split_list).unwrap_or_default();
        config.preserved_annotations = get(GLOBAL_PRESERVED_ANNOTATIONS_KEY)
            .map(split_list)
            .unwrap_or_default();
        config.preserved_labels = get(GLOBAL_PRESERVED_LABELS_KEY)
            .map(split_list)
            .unwrap_or_default();
        if let Some(n) = get(CONCURRENCY_KEY).and_then(|v| v.parse::<usize>().ok()) {
            config.workers = n.max(1);
        }
        if let Some(v) = get(ENABLE_SCM_KEY) {
            // Fail closed: a value that is no boolean turns the forges off, loudly.
            config.scm.enabled = go_bool(v).ok_or_else(|| {
                format!("{ENABLE_SCM_KEY} {v:?} is not a boolean (true or false)")
            })?;
        }
        config.scm.allowed_providers = get(ALLOWED_SCM_KEY).map(split_list).unwrap_or_default();
        if let Some(n) = get(MAX_RESOURCES_KEY).and_then(|v| v.parse::<usize>().ok()) {
            config.max_resources_status = n;
        }
        let env = std::env::var(REQUEUE_AFTER_ENV).ok();
        if let Some(d) = requeue_after_from(env.as_deref(), get(REQUEUE_AFTER_KEY))? {
            config.requeue_after = d;
        }
        Ok(config)
    }

    /// The policy a set runs under (Argo's `utils.DefaultPolicy`): the set's own only when
    /// overrides are enabled.
    pub fn policy_for(
        &self,
        set: &plumb_model::applicationset::ApplicationSet,
    ) -> ApplicationsSyncPolicy {
        let own = set
            .spec
            .sync_policy
            .as_ref()
            .and_then(|p| p.applications_sync);
        match own {
            Some(p) if self.policy_override => p,
            _ => self.policy,
        }
    }

    /// Whether sets in `namespace` are reconciled (Argo's `IsNamespaceAllowed`).
    pub fn namespace_allowed(&self, namespace: &str) -> bool {
        namespace == self.control_namespace
            || plumb_policy::project::namespace_in_list(&self.namespaces, namespace)
    }
}

/// Whether `plumb.applicationset.enabled` leaves the controller on (absent, empty or a true
/// value; anything but a Go false value keeps it on, with a warning for garbage).
pub fn enabled_in(params: &BTreeMap<String, String>) -> bool {
    match params.get(ENABLED_KEY).map(|v| v.trim()) {
        None | Some("") => true,
        Some(v) => go_bool(v).unwrap_or_else(|| {
            tracing::warn!(value = %v, "{ENABLED_KEY} is not a boolean; the ApplicationSet controller stays on");
            true
        }),
    }
}

/// Argo's policy names (`utils.Policies`).
pub fn parse_policy(text: &str) -> Option<ApplicationsSyncPolicy> {
    match text {
        "sync" => Some(ApplicationsSyncPolicy::Sync),
        "create-only" => Some(ApplicationsSyncPolicy::CreateOnly),
        "create-update" => Some(ApplicationsSyncPolicy::CreateUpdate),
        "create-delete" => Some(ApplicationsSyncPolicy::CreateDelete),
        _ => None,
    }
}

/// Go's `strconv.ParseBool`.
fn go_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

fn split_list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn override_defaults_on_only_without_a_policy() {
        let c = Config::from_cmd_params("argocd", &params(&[])).unwrap();
        assert_eq!(c.policy, ApplicationsSyncPolicy::Sync);
        assert!(c.policy_override);
        let c = Config::from_cmd_params("argocd", &params(&[(POLICY_KEY, "create-only")])).unwrap();
        assert_eq!(c.policy, ApplicationsSyncPolicy::CreateOnly);
        assert!(!c.policy_override);
        let c = Config::from_cmd_params(
            "argocd",
            &params(&[(POLICY_KEY, "create-only"), (POLICY_OVERRIDE_KEY, "true")]),
        )
        .unwrap();
        assert!(c.policy_override);
        assert!(Config::from_cmd_params("argocd", &params(&[(POLICY_KEY, "everything")])).is_err());
    }

    #[test]
    fn requeue_after_from_the_environment_or_the_key_within_argos_bounds() {
        assert_eq!(requeue_after_from(None, None), Ok(None));
        let secs = |s| Ok(Some(Duration::from_secs(s)));
        assert_eq!(requeue_after_from(None, Some("10m")), secs(600));
        assert_eq!(requeue_after_from(Some("1h30m"), Some("10m")), secs(5400));
        assert_eq!(requeue_after_from(Some(" "), Some("2d")), secs(2 * 86400));
        assert_eq!(requeue_after_from(None, Some("1s")), secs(1));
        let err = requeue_after_from(None, Some("3 minutes")).unwrap_err();
        assert!(
            err.contains(REQUEUE_AFTER_KEY) && err.contains("not a duration"),
            "{err}"
        );
        let err = requeue_after_from(Some("500ms"), None).unwrap_err();
        assert!(
            err.contains(REQUEUE_AFTER_ENV) && err.contains("1s..8760h"),
            "{err}"
        );
        assert!(requeue_after_from(None, Some("8761h")).is_err());
        let c = Config::from_cmd_params("argocd", &params(&[(REQUEUE_AFTER_KEY, "45s")])).unwrap();
        assert_eq!(c.requeue_after, Duration::from_secs(45));
        assert!(Config::from_cmd_params("argocd", &params(&[(REQUEUE_AFTER_KEY, "-3m")])).is_err());
    }

    #[test]
    fn off_switch_reads_go_booleans() {
        assert!(enabled_in(&params(&[])));
        assert!(!enabled_in(&params(&[(ENABLED_KEY, "false")])));
        assert!(enabled_in(&params(&[(ENABLED_KEY, "maybe")])));
    }

    #[test]
    fn namespaces_by_pattern() {
        let c = Config::from_cmd_params("argocd", &params(&[(NAMESPACES_KEY, "team-*, other")]))
            .unwrap();
        assert!(c.namespace_allowed("argocd"));
        assert!(c.namespace_allowed("team-a"));
        assert!(c.namespace_allowed("other"));
        assert!(!c.namespace_allowed("kube-system"));
    }
}
