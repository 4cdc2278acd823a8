//! One object's notifications, as notifications-engine's `processResourceWithAPI`: the
//! destinations (the ConfigMap's `subscriptions`, the Application's and its AppProject's
//! annotations), each subscribed trigger run, each triggered condition sent to each destination
//! unless the notified state says it already was, the state updated.
//!
//! Split in two so the caller can bound the CPU part: [`Engine::plan`] (conditions, no I/O) and
//! [`Engine::deliver`] (templates, sends, state).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::Config;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::services::Service;
use crate::state::{NOTIFIED_ANNOTATION, State};
use crate::subscriptions::{
    Destination, Destinations, annotation_destinations, global_destinations,
};
use crate::templates::{Templates, template_data};
use crate::triggers::{ConditionResult, Triggers};

/// A configuration ready to use: compiled triggers and templates, services built.
pub struct Engine {
    pub config: Config,
    pub triggers: Triggers,
    pub templates: Templates,
    services: BTreeMap<String, Result<Service, String>>,
    /// What did not parse or compile (each names its key, trigger, template or service).
    pub errors: Vec<Error>,
    /// The words of every condition (what [`Engine::pruned`] may not remove).
    condition_words: std::collections::BTreeSet<String>,
}

/// Bulky parts of an Application, by JSON pointer, and the field name a condition would use.
const PRUNABLE: &[(&str, &str)] = &[
    ("/metadata/managedFields", "managedFields"),
    ("/status/resources", "resources"),
    ("/status/history", "history"),
    ("/status/operationState/syncResult/resources", "resources"),
    ("/status/summary", "summary"),
];

/// The conditions of the subscribed triggers, evaluated.
pub struct Plan {
    pub triggers: Vec<(String, Vec<ConditionResult>, Vec<Destination>)>,
    pub errors: Vec<Error>,
}

/// One send and its outcome.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub trigger: String,
    pub destination: Destination,
    pub error: Option<String>,
}

/// What [`Engine::deliver`] did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub deliveries: Vec<Delivery>,
    /// The notified annotation's new value when it changed (`Some(None)`: remove it).
    pub annotation: Option<Option<String>>,
}

fn str_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

impl Engine {
    /// Compiles the configuration; errors are kept in [`Engine::errors`].
    pub fn new(config: Config, mut errors: Vec<Error>) -> Engine {
        let (triggers, e) = Triggers::compile(&config.triggers);
        errors.extend(e);
        let (templates, e) = Templates::compile(&config.templates);
        errors.extend(e);
        let mut services = BTreeMap::new();
        for (name, spec) in &config.services {
            let svc = Service::new(name, spec).map_err(|e| match e {
                Error::Service { message, .. } => message,
                other => other.to_string(),
            });
            if let Err(e) = &svc {
                errors.push(Error::Service {
                    service: name.clone(),
                    message: e.clone(),
                });
            }
            services.insert(name.clone(), svc);
        }
        let condition_words = config
            .triggers
            .values()
            .flatten()
            .flat_map(|c| [c.when.as_str(), c.once_per.as_str()])
            .flat_map(|t| t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect();
        Engine {
            config,
            triggers,
            templates,
            services,
            errors,
            condition_words,
        }
    }

    /// The destinations of an Application (with its AppProject, if found).
    pub fn destinations(&self, app: &Value, project: Option<&Value>) -> (Destinations, bool) {
        let meta = app.get("metadata");
        let labels = str_map(meta.and_then(|m| m.get("labels")));
        let mut d = global_destinations(&labels, &self.config);
        let (own, mut complete) = annotation_destinations(
            &str_map(meta.and_then(|m| m.get("annotations"))),
            &self.config,
        );
        complete &= d.merge(own);
        if let Some(p) = project {
            let ann = str_map(p.get("metadata").and_then(|m| m.get("annotations")));
            let (proj, c) = annotation_destinations(&ann, &self.config);
            complete &= c && d.merge(proj);
        }
        (d, complete)
    }

    /// Runs the subscribed triggers (CPU only; the caller bounds its time).
    pub fn plan(&self, app: &Value, project: Option<&Value>) -> Plan {
        let (destinations, complete) = self.destinations(app, project);
        let mut errors = Vec::new();
        if !complete {
            errors.push(Error::Trigger {
                trigger: "*".into(),
                message: format!(
                    "more than {} subscriptions; the rest are ignored",
                    crate::subscriptions::MAX_DESTINATIONS
                ),
            });
        }
        if destinations.is_empty() {
            return Plan {
                triggers: Vec::new(),
                errors,
            };
        }
        let empty = Value::Object(Default::default());
        let pruned = self.pruned(app);
        let vars = crate::vars::expr_vars(&pruned, project.unwrap_or(&empty), &self.config.context);
        let mut triggers = Vec::new();
        for (trigger, dests) in destinations.0 {
            match self.triggers.run(&trigger, &vars) {
                Ok(results) => {
                    for r in &results {
                        if let Some(e) = &r.error {
                            errors.push(Error::Trigger {
                                trigger: trigger.clone(),
                                message: e.clone(),
                            });
                        }
                    }
                    triggers.push((trigger, results, dests));
                }
                Err(e) => errors.push(e),
            }
        }
        Plan { triggers, errors }
    }

    /// The Application without its bulky fields no condition names: expr-lang copies a
    /// variable's whole value each time an expression reads it, so `app` is kept small.
    fn pruned(&self, app: &Value) -> Value {
        let mut app = app.clone();
        for (pointer, field) in PRUNABLE {
            if self.condition_words.contains(*field) {
                continue;
            }
            let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
            if let Some(Value::Object(m)) = app.pointer_mut(parent) {
                m.remove(key);
            }
        }
        app
    }

    /// Sends what the plan says is due and not yet notified; the new state.
    pub async fn deliver(
        &self,
        plan: &Plan,
        app: &Value,
        project: Option<&Value>,
        now: i64,
        metrics: &Metrics,
    ) -> Outcome {
        let meta = app.get("metadata");
        let annotations = str_map(meta.and_then(|m| m.get("annotations")));
        let before = annotations.get(NOTIFIED_ANNOTATION).cloned();
        let mut state = State::parse(before.as_deref());
        let mut outcome = Outcome::default();
        for (trigger, results, dests) in &plan.triggers {
            for r in results {
                metrics.trigger_evaluated(trigger, r.triggered);
                for d in dests {
                    if !r.triggered {
                        state.set_notified(trigger, r, d, false, now);
                        continue;
                    }
                    if !state.set_notified(trigger, r, d, true, now) {
                        continue;
                    }
                    let error = self
                        .send(r, d, app, project)
                        .await
                        .err()
                        .map(|e| e.to_string());
                    if error.is_some() {
                        state.forget(trigger, r, d);
                    }
                    metrics.delivered(trigger, &d.service, error.is_none());
                    outcome.deliveries.push(Delivery {
                        trigger: trigger.clone(),
                        destination: d.clone(),
                        error,
                    });
                }
            }
        }
        let after = state.persist();
        if after != before {
            outcome.annotation = Some(after);
        }
        outcome
    }

    async fn send(
        &self,
        r: &ConditionResult,
        d: &Destination,
        app: &Value,
        project: Option<&Value>,
    ) -> Result<(), Error> {
        let service = match self.services.get(&d.service) {
            Some(Ok(s)) => s,
            Some(Err(e)) => {
                return Err(Error::Service {
                    service: d.service.clone(),
                    message: e.clone(),
                });
            }
            None => {
                return Err(Error::Service {
                    service: d.service.clone(),
                    message: format!("notification service '{}' is not supported", d.service),
                });
            }
        };
        let empty = Value::Object(Default::default());
        let data = template_data(
            app,
            project.unwrap_or(&empty),
            &self.config.context,
            &self.config.secrets,
            &d.service,
            &d.recipient,
        );
        let notification = self.templates.render(&r.templates, &data)?;
        service.send(&notification, d).await
    }
}
