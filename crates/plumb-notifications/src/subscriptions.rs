//! Who gets what: subscriptions from annotations (notifications-engine's
//! `pkg/subscriptions/annotations.go`) and the `subscriptions` key of the ConfigMap.
//!
//! `notifications.argoproj.io/subscribe.<trigger>.<service>: r1;r2`,
//! `notifications.argoproj.io/subscribe.<service>: r1` (the service's `defaultTriggers.<service>`,
//! else `defaultTriggers`), and `notifications.argoproj.io/subscriptions: <YAML list of
//! {trigger: [...], destinations: [{service, recipients: [...]}]}>`.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::config::Config;

/// Annotation prefix of subscriptions.
pub const PREFIX: &str = "notifications.argoproj.io/subscribe.";
const ALT_PREFIX: &str = "notifications.argoproj.io/subscriptions";
/// Destinations one object may have in total; the rest are dropped (and reported).
pub const MAX_DESTINATIONS: usize = 1000;

/// A service and a recipient.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Destination {
    pub service: String,
    pub recipient: String,
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // notifications-engine prints `{service recipient}`.
        write!(f, "{{{} {}}}", self.service, self.recipient)
    }
}

/// Destinations by trigger, in the order found, without duplicates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Destinations(pub BTreeMap<String, Vec<Destination>>);

impl Destinations {
    /// Adds `d` under `trigger` unless already there or over the bound (false then).
    pub fn add(&mut self, trigger: &str, d: Destination) -> bool {
        if self.len() >= MAX_DESTINATIONS {
            return false;
        }
        let list = self.0.entry(trigger.to_string()).or_default();
        if !list.contains(&d) {
            list.push(d);
        }
        true
    }

    /// Adds all of `other`; false if some were dropped by the bound.
    pub fn merge(&mut self, other: Destinations) -> bool {
        let mut all = true;
        for (t, ds) in other.0 {
            for d in ds {
                all &= self.add(&t, d);
            }
        }
        all
    }

    /// How many (trigger, destination) pairs.
    pub fn len(&self) -> usize {
        self.0.values().map(Vec::len).sum()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.values().all(Vec::is_empty)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AltSubscription {
    trigger: Vec<String>,
    destinations: Vec<AltDestination>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct AltDestination {
    service: String,
    recipients: Vec<String>,
}

fn parse_recipients(v: &str) -> Vec<String> {
    v.split(';')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect()
}

/// The destinations the annotations subscribe (false in the second place when the bound
/// dropped some).
pub fn annotation_destinations(
    annotations: &BTreeMap<String, String>,
    cfg: &Config,
) -> (Destinations, bool) {
    let mut out = Destinations::default();
    let mut complete = true;
    let mut add = |trigger: &str, service: &str, recipients: &[String]| {
        let triggers: Vec<String> = if !trigger.is_empty() {
            vec![trigger.to_string()]
        } else if let Some(t) = cfg.service_default_triggers.get(service) {
            t.clone()
        } else {
            cfg.default_triggers.clone()
        };
        for r in recipients {
            for t in &triggers {
                complete &= out.add(
                    t,
                    Destination {
                        service: service.to_string(),
                        recipient: r.clone(),
                    },
                );
            }
        }
    };
    for (k, v) in annotations {
        if let Some(rest) = k.strip_prefix(PREFIX) {
            let parts: Vec<&str> = rest.split('.').collect();
            let (trigger, service) = match parts.as_slice() {
                [s] => ("", *s),
                [t, s, ..] => (*t, *s),
                [] => continue,
            };
            let recipients = if v.is_empty() {
                vec![String::new()]
            } else {
                parse_recipients(v)
            };
            add(trigger, service, &recipients);
        } else if k.starts_with(ALT_PREFIX) {
            let subs: Vec<AltSubscription> = match serde_saphyr::from_str(v) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("annotation {k}: {e}");
                    continue;
                }
            };
            for s in subs {
                for t in if s.trigger.is_empty() {
                    vec![String::new()]
                } else {
                    s.trigger
                } {
                    for d in &s.destinations {
                        add(&t, &d.service, &d.recipients);
                    }
                }
            }
        }
    }
    (out, complete)
}

/// The ConfigMap's `subscriptions` that match the labels (`service:recipient` recipients).
pub fn global_destinations(labels: &BTreeMap<String, String>, cfg: &Config) -> Destinations {
    let mut out = Destinations::default();
    for s in &cfg.subscriptions {
        let triggers = if s.triggers.is_empty() {
            &cfg.default_triggers
        } else {
            &s.triggers
        };
        if !s.selector.matches(labels) {
            continue;
        }
        for t in triggers {
            for r in &s.recipients {
                let (service, recipient) = r.split_once(':').unwrap_or((r, ""));
                // notifications-engine keeps only the part before a second ':'.
                let recipient = recipient.split(':').next().unwrap_or_default();
                out.add(
                    t,
                    Destination {
                        service: service.to_string(),
                        recipient: recipient.to_string(),
                    },
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn annotation_forms() {
        let cfg = Config {
            default_triggers: vec!["on-sync-succeeded".into()],
            service_default_triggers: BTreeMap::from([(
                "slack".into(),
                vec!["on-deployed".into(), "on-created".into()],
            )]),
            ..Config::default()
        };
        let (d, complete) = annotation_destinations(
            &ann(&[
                (
                    "notifications.argoproj.io/subscribe.on-sync-failed.hook",
                    "a; b;;",
                ),
                ("notifications.argoproj.io/subscribe.hook", "c"),
                ("notifications.argoproj.io/subscribe.slack", "chan"),
                (
                    "notifications.argoproj.io/subscriptions",
                    "- trigger: [on-sync-failed]\n  destinations:\n  - service: hook\n    recipients: [a, z]\n",
                ),
                ("other/annotation", "x"),
            ]),
            &cfg,
        );
        assert!(complete);
        let dest = |s: &str, r: &str| Destination {
            service: s.into(),
            recipient: r.into(),
        };
        assert_eq!(
            d.0["on-sync-failed"],
            vec![dest("hook", "a"), dest("hook", "b"), dest("hook", "z")]
        );
        assert_eq!(d.0["on-sync-succeeded"], vec![dest("hook", "c")]);
        assert_eq!(d.0["on-deployed"], vec![dest("slack", "chan")]);
        assert_eq!(d.0["on-created"], vec![dest("slack", "chan")]);
    }

    #[test]
    fn recipients_are_bounded() {
        let many = (0..10_000)
            .map(|i| format!("r{i}"))
            .collect::<Vec<_>>()
            .join(";");
        let (d, complete) = annotation_destinations(
            &ann(&[("notifications.argoproj.io/subscribe.t.hook", &many)]),
            &Config::default(),
        );
        assert!(!complete);
        assert_eq!(d.len(), MAX_DESTINATIONS);
    }

    #[test]
    fn global_subscriptions() {
        let (cfg, errors) = Config::parse(
            &BTreeMap::from([
                ("subscriptions".into(), "- recipients: [hook:r1, hook]\n  selector: env=prod\n- recipients: [hook:r2]\n  triggers: [t2]\n".into()),
                ("defaultTriggers".into(), "[t1]".into()),
            ]),
            &BTreeMap::new(),
        );
        assert!(errors.is_empty());
        let prod = global_destinations(&BTreeMap::from([("env".into(), "prod".into())]), &cfg);
        assert_eq!(prod.0["t1"].len(), 2);
        assert_eq!(prod.0["t2"][0].recipient, "r2");
        let dev = global_destinations(&BTreeMap::new(), &cfg);
        assert!(!dev.0.contains_key("t1"));
    }
}
