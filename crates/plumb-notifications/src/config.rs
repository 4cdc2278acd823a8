//! `argocd-notifications-cm` and `argocd-notifications-secret`, read with notifications-engine's
//! keys (`pkg/api/config.go`): `trigger.<name>`, `template.<name>`, `service.<type>[.<name>]`,
//! `subscriptions`, `defaultTriggers`, `defaultTriggers.<service>`, and Argo CD's `context`.
//!
//! Unlike notifications-engine, a key that does not parse is reported and left out instead of
//! failing the whole configuration: the other triggers and services keep working.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{self, Error};
use crate::selector::Selector;

/// Size of one value of the ConfigMap beyond which it is refused (the whole ConfigMap is 1 MiB
/// in etcd; this bounds what one key can make the parser do).
pub const MAX_VALUE_BYTES: usize = 256 << 10;

/// One condition of a trigger (`trigger.<name>` is a list of them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Condition {
    pub when: String,
    pub once_per: String,
    pub description: String,
    pub send: Vec<String>,
}

/// One entry of the `subscriptions` key: recipients (`service:recipient`) of the triggers (all
/// `defaultTriggers` when empty) for the Applications the label selector matches.
#[derive(Debug, Clone, Default)]
pub struct DefaultSubscription {
    pub recipients: Vec<String>,
    pub triggers: Vec<String>,
    pub selector: Selector,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawSubscription {
    recipients: Vec<String>,
    triggers: Vec<String>,
    selector: String,
}

/// A `service.<type>[.<name>]` key: its type, and its options with `$key` references to the
/// Secret already replaced (so never log `options`).
#[derive(Clone)]
pub struct ServiceSpec {
    pub service_type: String,
    pub options: Value,
}

impl std::fmt::Debug for ServiceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceSpec")
            .field("service_type", &self.service_type)
            .field("options", &"<redacted>")
            .finish()
    }
}

/// The notifications configuration.
#[derive(Clone, Default)]
pub struct Config {
    pub triggers: BTreeMap<String, Vec<Condition>>,
    /// `template.<name>` as written (YAML as JSON); compiled by [`crate::templates::Templates`].
    pub templates: BTreeMap<String, Value>,
    /// By service name (the second part of `service.<type>.<name>`, else the type).
    pub services: BTreeMap<String, ServiceSpec>,
    pub subscriptions: Vec<DefaultSubscription>,
    pub default_triggers: Vec<String>,
    pub service_default_triggers: BTreeMap<String, Vec<String>>,
    /// Argo CD's `context` key (`argocdUrl`...), the templates' `.context`.
    pub context: BTreeMap<String, String>,
    /// The Secret's values, the templates' `.secrets`.
    pub secrets: BTreeMap<String, String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("triggers", &self.triggers.keys().collect::<Vec<_>>())
            .field("templates", &self.templates.keys().collect::<Vec<_>>())
            .field("services", &self.services)
            .field("default_triggers", &self.default_triggers)
            .field("context", &self.context)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Config {
    /// Parses the ConfigMap's data with the Secret's data; the keys that do not parse are left
    /// out and returned as errors (sorted by key).
    pub fn parse(
        data: &BTreeMap<String, String>,
        secret: &BTreeMap<String, Vec<u8>>,
    ) -> (Config, Vec<Error>) {
        let mut cfg = Config {
            secrets: secret
                .iter()
                .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
                .collect(),
            ..Config::default()
        };
        let mut errors = Vec::new();
        for (key, value) in data {
            if let Err(e) = cfg.parse_key(key, value, secret) {
                errors.push(e);
            }
        }
        (cfg, errors)
    }

    fn parse_key(
        &mut self,
        key: &str,
        value: &str,
        secret: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), Error> {
        let known = ["trigger.", "template.", "service.", "defaultTriggers."]
            .iter()
            .any(|p| key.starts_with(p))
            || matches!(key, "subscriptions" | "defaultTriggers" | "context");
        if !known {
            return Ok(());
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(error::config(
                key,
                format!("{} bytes, more than {MAX_VALUE_BYTES}", value.len()),
            ));
        }
        if let Some(name) = key.strip_prefix("trigger.") {
            let conditions: Vec<Condition> = yaml(key, value)?;
            self.triggers.insert(name.to_string(), conditions);
        } else if let Some(name) = key.strip_prefix("template.") {
            let t: Value = yaml(key, value)?;
            if !t.is_object() {
                return Err(error::config(key, "a template is a mapping"));
            }
            self.templates.insert(name.to_string(), t);
        } else if key.starts_with("service.") {
            self.parse_service(key, value, secret)?;
        } else if let Some(service) = key.strip_prefix("defaultTriggers.") {
            let triggers: Vec<String> = yaml(key, value)?;
            self.service_default_triggers
                .insert(service.to_string(), triggers);
        } else if key == "defaultTriggers" {
            self.default_triggers = yaml(key, value)?;
        } else if key == "context" {
            self.context = yaml(key, value)?;
        } else {
            let raw: Vec<RawSubscription> = yaml(key, value)?;
            self.subscriptions = raw
                .into_iter()
                .map(|r| {
                    Ok(DefaultSubscription {
                        selector: Selector::parse(&r.selector)
                            .map_err(|m| error::config(key, format!("selector: {m}")))?,
                        recipients: r.recipients,
                        triggers: r.triggers,
                    })
                })
                .collect::<Result<_, Error>>()?;
        }
        Ok(())
    }

    fn parse_service(
        &mut self,
        key: &str,
        value: &str,
        secret: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), Error> {
        let parts: Vec<&str> = key.split('.').collect();
        let (service_type, name) = match parts.as_slice() {
            [_, t, n] => (*t, *n),
            [_, t] => (*t, *t),
            _ => {
                return Err(error::config(
                    key,
                    format!(
                        "invalid service key; expected 'service.<type>(.<name>)' but got '{key}'"
                    ),
                ));
            }
        };
        let mut options: Value = if value.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            yaml(key, value)?
        };
        replace_secrets(key, &mut options, secret);
        self.services.insert(
            name.to_string(),
            ServiceSpec {
                service_type: service_type.to_string(),
                options,
            },
        );
        Ok(())
    }
}

fn yaml<T: serde::de::DeserializeOwned>(key: &str, text: &str) -> Result<T, Error> {
    let v: Value = serde_saphyr::from_str(text).map_err(|e| error::config(key, e.to_string()))?;
    let v = if v.is_null() { Value::Null } else { v };
    serde_json::from_value(v).map_err(|e| error::config(key, e.to_string()))
}

/// notifications-engine's `replaceStringSecret`: every `$name` (`[$][\w-]+`) in a string of the
/// service's options becomes the Secret's value; an unknown name stays as written (and is logged
/// by name, never by value).
fn replace_secrets(key: &str, v: &mut Value, secret: &BTreeMap<String, Vec<u8>>) {
    match v {
        Value::String(s) if s.contains('$') => *s = replace_in(key, s, secret),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|i| replace_secrets(key, i, secret)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|i| replace_secrets(key, i, secret)),
        _ => {}
    }
}

fn replace_in(key: &str, s: &str, secret: &BTreeMap<String, Vec<u8>>) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let len = after.find(|c: char| !is_word(c)).unwrap_or(after.len());
        if len == 0 {
            out.push('$');
        } else {
            let name = &after[..len];
            match secret.get(name) {
                Some(v) => out.push_str(&String::from_utf8_lossy(v)),
                None => {
                    tracing::warn!(
                        "argocd-notifications-cm key {key} references ${name}, which argocd-notifications-secret does not have"
                    );
                    out.push('$');
                    out.push_str(name);
                }
            }
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn keys_as_notifications_engine_reads_them() {
        let cm = data(&[
            (
                "trigger.on-x",
                "- when: app.x == 1\n  oncePer: app.y\n  send: [t1]\n  description: d\n",
            ),
            ("template.t1", "message: hi {{.app.metadata.name}}\n"),
            (
                "service.webhook.hook",
                "url: https://h/$token/x\nheaders:\n- name: Authorization\n  value: Bearer $token\n- name: X\n  value: $missing\n",
            ),
            ("service.webhook", "url: http://a\n"),
            (
                "subscriptions",
                "- recipients: [hook:r1]\n  triggers: [on-x]\n  selector: env=prod\n",
            ),
            ("defaultTriggers", "[on-x]"),
            ("defaultTriggers.hook", "- on-y\n"),
            ("context", "argocdUrl: https://argo\n"),
            ("unrelated", "::: not yaml"),
        ]);
        let secret = BTreeMap::from([("token".to_string(), b"s3cr3t".to_vec())]);
        let (cfg, errors) = Config::parse(&cm, &secret);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cfg.triggers["on-x"][0].once_per, "app.y");
        assert_eq!(cfg.triggers["on-x"][0].send, vec!["t1"]);
        let hook = &cfg.services["hook"];
        assert_eq!(hook.service_type, "webhook");
        assert_eq!(hook.options["url"], "https://h/s3cr3t/x");
        assert_eq!(hook.options["headers"][0]["value"], "Bearer s3cr3t");
        assert_eq!(hook.options["headers"][1]["value"], "$missing");
        assert_eq!(cfg.services["webhook"].service_type, "webhook");
        assert_eq!(cfg.default_triggers, vec!["on-x"]);
        assert_eq!(cfg.service_default_triggers["hook"], vec!["on-y"]);
        assert_eq!(cfg.context["argocdUrl"], "https://argo");
        assert_eq!(cfg.subscriptions[0].recipients, vec!["hook:r1"]);
        // Secret values never reach a Debug print.
        assert!(!format!("{cfg:?}").contains("s3cr3t"));
    }

    #[test]
    fn bad_keys_are_named_and_left_out() {
        let big = "x".repeat(MAX_VALUE_BYTES + 1);
        let cm = data(&[
            ("trigger.bad", "when: [unclosed"),
            ("trigger.good", "- when: 'true'\n  send: [a]"),
            ("service.a.b.c", "url: x"),
            ("template.big", &big),
            ("subscriptions", "- selector: 'a in (b'\n"),
        ]);
        let (cfg, errors) = Config::parse(&cm, &BTreeMap::new());
        let messages: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(
            messages[0]
                .starts_with("argocd-notifications-cm key service.a.b.c: invalid service key")
        );
        assert!(messages[1].starts_with("argocd-notifications-cm key subscriptions: selector"));
        assert!(messages[2].starts_with("argocd-notifications-cm key template.big:"));
        assert!(messages[3].starts_with("argocd-notifications-cm key trigger.bad:"));
        assert!(cfg.triggers.contains_key("good"));
    }
}
