//! The settings keys plumb-diff owns, read from the settings ConfigMap (`argocd-cm`):
//! `resource.customizations.ignoreDifferences.<group>_<kind>` and `.all`, the legacy
//! `resource.customizations` map's `ignoreDifferences`, `resource.compareoptions`
//! (`ignoreResourceStatusField`, `ignoreAggregatedRoles`), `plumb.ignoreDifferences.allowSensitive`, and the tracking
//! method and label key (so the tracking label never counts as drift). Also the rules of an
//! Application's `spec.ignoreDifferences`.

use plumb_model::Settings;
use plumb_model::annotations::DEFAULT_INSTANCE_LABEL;
use plumb_model::settings::{
    ALLOW_SENSITIVE_IGNORES, COMPARE_OPTIONS, IGNORE_DIFFERENCES_PREFIX, INSTANCE_LABEL_KEY,
    LEGACY_CUSTOMIZATIONS, TRACKING_METHOD, split_group_kind_suffix,
};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::ignore::IgnoreRule;
use crate::normalize::{NormalizeOptions, StatusField};

/// What the settings say about diffing.
#[derive(Debug, Clone, Default)]
pub struct DiffSettings {
    /// System-level ignore rules, in key order.
    pub rules: Vec<IgnoreRule>,
    /// Normalizer options (status handling, tracking label).
    pub normalize: NormalizeOptions,
    /// `plumb.ignoreDifferences.allowSensitive: "true"`.
    pub allow_sensitive: bool,
}

impl DiffSettings {
    /// Reads the diff-related keys.
    pub fn from_settings(settings: &Settings) -> Result<Self> {
        let mut rules = keyed_rules(settings)?;
        rules.extend(legacy_rules(settings)?);
        let mut normalize = NormalizeOptions::default();
        if let Some(text) = settings.get(COMPARE_OPTIONS) {
            read_compare_options(text, &mut normalize)?;
        }
        if settings
            .get(TRACKING_METHOD)
            .is_some_and(|m| m.contains("label"))
        {
            normalize.tracking_label = Some(
                settings
                    .get(INSTANCE_LABEL_KEY)
                    .unwrap_or(DEFAULT_INSTANCE_LABEL)
                    .to_string(),
            );
        }
        let allow_sensitive = settings
            .get(ALLOW_SENSITIVE_IGNORES)
            .is_some_and(|v| v.trim() == "true");
        Ok(Self {
            rules,
            normalize,
            allow_sensitive,
        })
    }
}

/// The rules of the `resource.customizations.ignoreDifferences.<group>_<kind>` keys.
fn keyed_rules(settings: &Settings) -> Result<Vec<IgnoreRule>> {
    let mut rules = Vec::new();
    for (suffix, text) in settings.with_prefix(IGNORE_DIFFERENCES_PREFIX) {
        let key = format!("{IGNORE_DIFFERENCES_PREFIX}{suffix}");
        let (group, kind) = split_group_kind_suffix(suffix);
        let mut rule = parse_rule_yaml(text, &key)?;
        rule.group = group;
        rule.kind = kind;
        rule.origin = format!("settings {key}");
        rules.push(rule);
    }
    Ok(rules)
}

/// The `ignoreDifferences` entries of the legacy `resource.customizations` map.
fn legacy_rules(settings: &Settings) -> Result<Vec<IgnoreRule>> {
    let mut rules = Vec::new();
    let Some(text) = settings.get(LEGACY_CUSTOMIZATIONS) else {
        return Ok(rules);
    };
    let map = first_doc(text, LEGACY_CUSTOMIZATIONS)?;
    let Some(map) = map.as_object() else {
        return Err(bad(
            LEGACY_CUSTOMIZATIONS,
            "expected a map of <group>/<kind> to customizations",
        ));
    };
    for (gk, custom) in map {
        let Some(ignore) = custom.get("ignoreDifferences") else {
            continue;
        };
        let key = format!("{LEGACY_CUSTOMIZATIONS} {gk:?}");
        let mut rule = match ignore {
            Value::String(text) => parse_rule_yaml(text, &key)?,
            other => rule_from_value(other.clone(), &key)?,
        };
        let (group, kind) = gk.split_once('/').unwrap_or(("", gk.as_str()));
        rule.group = group.to_string();
        rule.kind = kind.to_string();
        rule.origin = format!("settings {key}");
        rules.push(rule);
    }
    Ok(rules)
}

/// `ignoreResourceStatusField` and `ignoreAggregatedRoles` of `resource.compareoptions`.
fn read_compare_options(text: &str, normalize: &mut NormalizeOptions) -> Result<()> {
    let opts = first_doc(text, COMPARE_OPTIONS)?;
    if let Some(v) = opts.get("ignoreResourceStatusField") {
        let s = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        normalize.status = StatusField::parse(&s).ok_or_else(|| {
            bad(
                COMPARE_OPTIONS,
                &format!("ignoreResourceStatusField {s:?} is not all, crd or none"),
            )
        })?;
    }
    if let Some(v) = opts.get("ignoreAggregatedRoles") {
        normalize.ignore_aggregated_roles = match v {
            Value::Bool(b) => *b,
            Value::String(s) if s.trim() == "true" => true,
            Value::String(s) if s.trim() == "false" => false,
            other => {
                return Err(bad(
                    COMPARE_OPTIONS,
                    &format!("ignoreAggregatedRoles {other} is not true or false"),
                ));
            }
        };
    }
    Ok(())
}

/// The rules of an Application manifest's `spec.ignoreDifferences` (`origin` names the file).
pub fn application_rules(app: &Value, origin: &str) -> Result<Vec<IgnoreRule>> {
    let Some(list) = app.pointer("/spec/ignoreDifferences") else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err(bad(origin, "spec.ignoreDifferences is not a list"));
    };
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            let where_ = format!("{origin} spec.ignoreDifferences[{i}]");
            let mut rule = rule_from_value(v.clone(), &where_)?;
            rule.origin = where_;
            Ok(rule)
        })
        .collect()
}

fn parse_rule_yaml(text: &str, key: &str) -> Result<IgnoreRule> {
    rule_from_value(first_doc(text, key)?, key)
}

fn rule_from_value(v: Value, key: &str) -> Result<IgnoreRule> {
    if v.is_null() {
        return Ok(IgnoreRule::default());
    }
    serde_json::from_value(v).map_err(|e| bad(key, &e.to_string()))
}

fn first_doc(text: &str, key: &str) -> Result<Value> {
    let docs = plumb_yaml::read_documents(text, key).map_err(|e| bad(key, &e.to_string()))?;
    Ok(docs
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null))
}

fn bad(key: &str, reason: &str) -> Error {
    Error::BadSetting {
        key: key.to_string(),
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn split_keys_legacy_map_and_compare_options() {
        let cm = json!({"data": {
            "resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers:\n- /spec/replicas\n",
            "resource.customizations.ignoreDifferences.all": "managedFieldsManagers:\n- kube-controller-manager\n",
            "resource.customizations": "admissionregistration.k8s.io/MutatingWebhookConfiguration:\n  ignoreDifferences: |\n    jsonPointers:\n    - /webhooks/0/clientConfig/caBundle\n",
            "resource.compareoptions": "ignoreResourceStatusField: crd\n",
            "application.resourceTrackingMethod": "annotation+label",
            "plumb.ignoreDifferences.allowSensitive": "true",
        }});
        let s = DiffSettings::from_settings(&Settings::from_config_map(&cm)).unwrap();
        let summary: Vec<(String, String, String)> = s
            .rules
            .iter()
            .map(|r| (r.group.clone(), r.kind.clone(), r.origin.clone()))
            .collect();
        assert_eq!(summary, [
            ("*".into(), "*".into(), "settings resource.customizations.ignoreDifferences.all".into()),
            ("apps".into(), "Deployment".into(), "settings resource.customizations.ignoreDifferences.apps_Deployment".into()),
            ("admissionregistration.k8s.io".into(), "MutatingWebhookConfiguration".into(),
             "settings resource.customizations \"admissionregistration.k8s.io/MutatingWebhookConfiguration\"".into()),
        ]);
        assert_eq!(s.rules[1].json_pointers, ["/spec/replicas"]);
        assert_eq!(
            s.rules[0].managed_fields_managers,
            ["kube-controller-manager"]
        );
        assert_eq!(s.normalize.status, StatusField::Crd);
        assert_eq!(
            s.normalize.tracking_label.as_deref(),
            Some("app.kubernetes.io/instance")
        );
        assert!(s.allow_sensitive);
    }

    #[test]
    fn bad_status_option() {
        let cm =
            json!({"data": {"resource.compareoptions": "ignoreResourceStatusField: sometimes\n"}});
        let err = DiffSettings::from_settings(&Settings::from_config_map(&cm)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("settings key resource.compareoptions:"),
            "{err}"
        );
    }

    #[test]
    fn application_spec_rules() {
        let app = json!({"spec": {"ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]}});
        let rules = application_rules(&app, "apps/payments.yaml").unwrap();
        assert_eq!(
            rules[0].origin,
            "apps/payments.yaml spec.ignoreDifferences[0]"
        );
        assert_eq!(rules[0].kind, "Deployment");
    }
}
