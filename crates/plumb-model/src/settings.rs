//! The settings ConfigMap (Argo CD's `argocd-cm` keys, plus Plumb's own `plumb.`-prefixed keys).
//!
//! This module only holds the raw key/value data and the key names; each engine parses the keys it
//! owns (health customizations in plumb-health, ignore rules and compare options in plumb-diff), so
//! a bad value is reported by the code that understands it.

use std::collections::BTreeMap;

use serde_json::Value;

/// `resource.customizations.health.<group>_<kind>` prefix (core kinds have no group part).
pub const HEALTH_PREFIX: &str = "resource.customizations.health.";
/// `resource.customizations.useOpenLibs.<group>_<kind>` prefix.
pub const USE_OPEN_LIBS_PREFIX: &str = "resource.customizations.useOpenLibs.";
/// `resource.customizations.actions.<group>_<kind>` prefix: YAML with `discovery.lua`,
/// `definitions: [{name, action.lua}]` and `mergeBuiltinActions`.
pub const ACTIONS_PREFIX: &str = "resource.customizations.actions.";
/// `resource.customizations.ignoreDifferences.<group>_<kind>` prefix (`.all` for every kind).
pub const IGNORE_DIFFERENCES_PREFIX: &str = "resource.customizations.ignoreDifferences.";
/// The legacy single-key YAML map of customizations keyed by `<group>/<kind>` (globs allowed).
pub const LEGACY_CUSTOMIZATIONS: &str = "resource.customizations";
/// YAML compare options (`ignoreResourceStatusField`, `ignoreAggregatedRoles`).
pub const COMPARE_OPTIONS: &str = "resource.compareoptions";
/// YAML list of resource exclusions.
pub const EXCLUSIONS: &str = "resource.exclusions";
/// YAML list of resource inclusions.
pub const INCLUSIONS: &str = "resource.inclusions";
/// `annotation` (default), `label` or `annotation+label`.
pub const TRACKING_METHOD: &str = "application.resourceTrackingMethod";
/// Label key used by label tracking.
pub const INSTANCE_LABEL_KEY: &str = "application.instanceLabelKey";
/// Poll interval (default `120s`).
pub const RECONCILIATION_TIMEOUT: &str = "timeout.reconciliation";
/// Poll jitter (default `60s`).
pub const RECONCILIATION_JITTER: &str = "timeout.reconciliation.jitter";
/// Plumb: `generic` (default) or `none` (Argo's behaviour) for kinds without a health rule.
pub const UNKNOWN_KIND_HEALTH: &str = "plumb.health.unknownKinds";
/// Plumb: `progressing` (default) or `none` for custom resources whose controller never wrote a
/// status (kinds without a health rule whose CRD has a status subresource).
pub const MISSING_STATUS: &str = "plumb.health.missingStatus";
/// Plumb: how long such a custom resource may go without a status (default `2m`).
pub const MISSING_STATUS_GRACE_PERIOD: &str = "plumb.health.missingStatusGracePeriod";
/// Plumb: `"true"` lets ignore rules hide images, securityContext, RBAC and webhooks.
pub const ALLOW_SENSITIVE_IGNORES: &str = "plumb.ignoreDifferences.allowSensitive";
/// Plumb: `argo` lets objects with only generic health through sync waves at once.
pub const SYNC_HEALTH_GATE: &str = "plumb.sync.healthGate";
/// Plumb: the brake on mass deletion, the count (default 10): an automated operation stops when
/// it would prune more objects than this and more than [`PRUNE_MAX_FRACTION`] of them.
pub const PRUNE_MAX_DELETIONS: &str = "plumb.sync.prune.maxDeletions";
/// Plumb: the brake on mass deletion, the fraction of the Application's live objects (`0.5`,
/// `50%`; default 0.5).
pub const PRUNE_MAX_FRACTION: &str = "plumb.sync.prune.maxFraction";
/// Plumb: time allowed for one render (a Jsonnet evaluation, `helm template`, `kustomize build`),
/// as a duration (`90s`, `2m`; default `90s`).
pub const RENDER_TIMEOUT: &str = "plumb.render.timeout";
/// Plumb: memory one render may use, as a Kubernetes quantity (`1Gi`, `512Mi`; default `1Gi`).
pub const RENDER_MEMORY_LIMIT: &str = "plumb.render.memoryLimit";
/// Plumb: the directory of config management plugin files (`ConfigManagementPlugin` YAML) on the
/// controller's disk; overrides the controller's `--plugin-dir`.
pub const PLUGINS_DIR: &str = "plumb.plugins.dir";
/// Plumb: the most one download from a Helm chart repository or an OCI registry may be (an
/// `index.yaml`, a chart archive, an OCI layer), as a Kubernetes quantity (default `128Mi`).
pub const REPOSITORY_MAX_DOWNLOAD_SIZE: &str = "plumb.repository.maxDownloadSize";
/// Plumb: how long a Helm repository's `index.yaml`, and what an OCI tag or constraint resolved
/// to, are used before they are asked for again (a duration, `0s` for every time). Argo CD's
/// equivalent is the repo-server's `--revision-cache-expiration`, whose default is
/// `ARGOCD_RECONCILIATION_TIMEOUT`, i.e. this ConfigMap's `timeout.reconciliation`; without this
/// key Plumb follows that `timeout.reconciliation`, else 3 minutes.
pub const REPOSITORY_REVISION_CACHE_EXPIRATION: &str = "plumb.repository.revisionCacheExpiration";

/// Argo CD: syncs run as the ServiceAccount the AppProject's `destinationServiceAccounts` names
/// for the destination (`"true"` turns it on; off by default).
pub const IMPERSONATION_ENABLED: &str = "application.sync.impersonation.enabled";
/// Argo CD: with impersonation on, a destination no `destinationServiceAccounts` entry matches is
/// refused (default), or synced with the controller's own credentials (`"false"`).
pub const IMPERSONATION_ENFORCED: &str = "application.sync.impersonation.enforced";

/// The data of a settings ConfigMap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    data: BTreeMap<String, String>,
}

impl Settings {
    /// Settings from key/value pairs.
    pub fn from_data(data: BTreeMap<String, String>) -> Self {
        Self { data }
    }

    /// Settings from a ConfigMap object (its `data`; non-string values are ignored, as the API
    /// server would have rejected them).
    pub fn from_config_map(obj: &Value) -> Self {
        let data = obj
            .get("data")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        Self { data }
    }

    /// The value of one key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.data.get(key).map(String::as_str)
    }

    /// All keys starting with `prefix`, with the prefix removed, in key order.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.data
            .range(prefix.to_string()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(move |(k, v)| (&k[prefix.len()..], v.as_str()))
    }

    /// Every key and value, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.data.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// Splits the `<group>_<kind>` suffix of a split settings key into a group/kind pair, as Argo does
/// (`apps_Deployment` → `apps`, `Deployment`; `PersistentVolumeClaim` → core; `all` → `*`, `*`).
pub fn split_group_kind_suffix(suffix: &str) -> (String, String) {
    if suffix == "all" {
        return ("*".to_string(), "*".to_string());
    }
    match suffix.rsplit_once('_') {
        Some((group, kind)) => (group.to_string(), kind.to_string()),
        None => (String::new(), suffix.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefix_lookup_strips_prefix_in_key_order() {
        let cm = json!({"data": {
            "resource.customizations.health.apps_Deployment": "a",
            "resource.customizations.health.PersistentVolumeClaim": "b",
            "resource.customizations.ignoreDifferences.all": "c",
        }});
        let s = Settings::from_config_map(&cm);
        let found: Vec<_> = s.with_prefix(HEALTH_PREFIX).collect();
        assert_eq!(
            found,
            [("PersistentVolumeClaim", "b"), ("apps_Deployment", "a")]
        );
    }

    #[test]
    fn group_kind_suffixes() {
        assert_eq!(
            split_group_kind_suffix("apps_Deployment"),
            ("apps".into(), "Deployment".into())
        );
        assert_eq!(
            split_group_kind_suffix("Service"),
            ("".into(), "Service".into())
        );
        assert_eq!(split_group_kind_suffix("all"), ("*".into(), "*".into()));
        assert_eq!(
            split_group_kind_suffix("platform.acme.io_Database"),
            ("platform.acme.io".into(), "Database".into())
        );
    }
}
