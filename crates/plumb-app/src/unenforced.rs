//! Settings Plumb reads but does not enforce, said loudly (issue #27: "settings that fail
//! open"; the whole audit is the table in `docs/compatibility.md`, "Settings audit").
//!
//! Each finding names the setting. Where ignoring it would make Plumb less strict than Argo CD
//! (a permission Argo narrows that Plumb would grant), the finding refuses: the Application is
//! not compared or synced (InvalidSpecError). Otherwise it warns: a log line at controller
//! start (or when the project is read) and an [`UNENFORCED_SETTING_WARNING`] condition on the
//! Application. (`sourceIntegrity`, `signatureKeys` and impersonation are enforced: [`crate::signatures`],
//! [`crate::impersonation`].)

use plumb_model::Settings;
use serde_json::Value;

/// The condition type of a warning about an unenforced setting (a `...Warning` type, so Argo's
/// UI and CLI show it as a warning).
pub const UNENFORCED_SETTING_WARNING: &str = "UnenforcedSettingWarning";

/// One setting Plumb does not enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The setting as written: `argocd-cm kustomize.buildOptions.v5`, `AppProject payments
    /// spec.futureField`.
    pub setting: String,
    /// What Plumb does instead.
    pub detail: String,
    /// Whether Plumb refuses rather than warns (ignoring it would widen a permission).
    pub refuse: bool,
}

impl Finding {
    /// The message for logs and conditions.
    pub fn message(&self) -> String {
        let verb = if self.refuse {
            "is not enforced by Plumb, which refuses rather than grant more than it says"
        } else {
            "is not enforced by Plumb"
        };
        format!("{} {verb}: {}", self.setting, self.detail)
    }
}

/// argocd-cm keys (or key prefixes, ending in `.`) Plumb reads but does not enforce.
const SETTINGS: &[(&str, &str)] = &[
    (
        "kustomize.buildOptions.",
        "per-version build options are not read: kustomize sources are rendered with `kustomize.buildOptions` only",
    ),
    (
        "resource.customizations.ignoreResourceUpdates.",
        "the settings API reports it, but every update of a tracked object triggers a comparison (more work, no change missed)",
    ),
    (
        "resource.customizations.knownTypeFields.",
        "the settings API reports it, but the diff does not use these type hints, so such fields may show differences Argo CD would normalize away",
    ),
];

/// The AppProject fields Plumb knows (`spec.*`); any other is reported.
const PROJECT_FIELDS: &[&str] = &[
    "sourceRepos",
    "destinations",
    "description",
    "roles",
    "clusterResourceWhitelist",
    "namespaceResourceBlacklist",
    "orphanedResources",
    "syncWindows",
    "namespaceResourceWhitelist",
    "signatureKeys",
    "clusterResourceBlacklist",
    "sourceNamespaces",
    "permitOnlyProjectScopedClusters",
    "destinationServiceAccounts",
    "sourceIntegrity",
];

/// The argocd-cm keys present that Plumb reads but does not enforce, in key order.
pub fn in_settings(settings: &Settings) -> Vec<Finding> {
    let mut found = Vec::new();
    for (key, value) in settings.iter() {
        if value.trim().is_empty() {
            continue;
        }
        let matched = SETTINGS.iter().find(|(k, _)| {
            if k.ends_with('.') {
                key.starts_with(k)
            } else {
                key == *k
            }
        });
        if let Some((_, detail)) = matched {
            found.push(Finding {
                setting: format!("argocd-cm {key}"),
                detail: (*detail).to_string(),
                refuse: false,
            });
        }
    }
    found
}

/// What the AppProject (`raw`, as the API server returns it: fields Plumb's types drop are
/// still there) asks that Plumb does not enforce.
pub fn in_project(raw: &Value) -> Vec<Finding> {
    let name = raw
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let at = |path: String| format!("AppProject {name} spec.{path}");
    let mut found = Vec::new();
    let spec = raw.get("spec").and_then(Value::as_object);
    for (field, value) in spec.into_iter().flatten() {
        if !PROJECT_FIELDS.contains(&field.as_str()) && !value.is_null() {
            found.push(Finding {
                setting: at(field.clone()),
                detail: "Plumb does not know this field and ignores it".into(),
                refuse: false,
            });
        }
    }
    found
}

/// The refusal, if any finding refuses: every refusing finding, one message.
pub fn refusal(findings: &[Finding]) -> Option<String> {
    let refused: Vec<String> = findings
        .iter()
        .filter(|f| f.refuse)
        .map(Finding::message)
        .collect();
    (!refused.is_empty()).then(|| refused.join("; "))
}

/// The warning conditions for the findings that do not refuse.
pub fn conditions(findings: &[Finding]) -> Vec<(String, String)> {
    findings
        .iter()
        .filter(|f| !f.refuse)
        .map(|f| (UNENFORCED_SETTING_WARNING.to_string(), f.message()))
        .collect()
}

/// Logs each finding as a warning (at controller start for argocd-cm).
pub fn log(findings: &[Finding]) {
    for f in findings {
        tracing::warn!(setting = %f.setting, refuses = f.refuse, "{}", f.message());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_read_but_not_enforced_are_named() {
        let settings = Settings::from_data(
            [
                ("kustomize.buildOptions", "--enable-helm"),
                ("kustomize.buildOptions.v5.4.3", "--stack-trace"),
                (
                    "resource.customizations.knownTypeFields.apps_Deployment",
                    "- field: x",
                ),
                (
                    "resource.customizations.ignoreResourceUpdates.all",
                    "jsonPointers: [/status]",
                ),
                ("timeout.reconciliation", "180s"),
                (
                    "resource.customizations.health.apps_Deployment",
                    "return {}",
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        let found = in_settings(&settings);
        let names: Vec<&str> = found.iter().map(|f| f.setting.as_str()).collect();
        assert_eq!(
            names,
            [
                "argocd-cm kustomize.buildOptions.v5.4.3",
                "argocd-cm resource.customizations.ignoreResourceUpdates.all",
                "argocd-cm resource.customizations.knownTypeFields.apps_Deployment",
            ]
        );
        assert!(found.iter().all(|f| !f.refuse));
        assert_eq!(refusal(&found), None);
        let conds = conditions(&found);
        assert_eq!(conds[0].0, "UnenforcedSettingWarning");
        assert!(
            conds[0]
                .1
                .starts_with("argocd-cm kustomize.buildOptions.v5.4.3 is not enforced by Plumb: "),
            "{}",
            conds[0].1
        );
        // Empty values ask for nothing.
        let empty = Settings::from_data(
            [("kustomize.buildOptions.v5".to_string(), " ".to_string())].into(),
        );
        assert!(in_settings(&empty).is_empty());
    }

    #[test]
    fn named_cluster_resource_entries_are_enforced_so_not_reported() {
        let raw = json!({"metadata": {"name": "payments"}, "spec": {
            "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"},
                                         {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "payments-*"}],
            "clusterResourceBlacklist": [{"group": "", "kind": "PersistentVolume", "name": "shared"}],
            "sourceRepos": ["*"]
        }});
        assert_eq!(in_project(&raw), []);
    }

    #[test]
    fn unknown_project_fields_warn_and_known_ones_do_not() {
        let raw = json!({"metadata": {"name": "p"}, "spec": {
            "sourceRepos": ["*"], "destinations": [], "permitOnlyProjectScopedClusters": true,
            "signatureKeys": [{"keyID": "ABC"}], "sourceIntegrity": {"git": {"policies": []}},
            "futureField": {"x": 1}, "nulled": null
        }});
        let found = in_project(&raw);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].setting, "AppProject p spec.futureField");
        // Hostile shapes: not objects, not lists, names not strings.
        for spec in [
            json!(null),
            json!("x"),
            json!([1]),
            json!({"clusterResourceWhitelist": "x"}),
            json!({"clusterResourceWhitelist": [{"name": 7}, null, "x"]}),
        ] {
            let raw = json!({"metadata": {"name": "p"}, "spec": spec});
            assert_eq!(refusal(&in_project(&raw)), None, "{raw}");
        }
    }
}
