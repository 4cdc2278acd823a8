//! PROVISIONAL, to be replaced by `crate::generate::generate` (helper agen) and
//! `crate::template::render_application` (helper atmpl) at merge: the `list` generator and
//! `{{param}}` substitution of top-level string parameters only, so the controller can be
//! driven end to end before they land. Every other generator and Go templates are refused
//! with a generation error (which deletes nothing).

use std::time::Duration;

use serde_json::Value;

use plumb_model::application::Application;
use plumb_model::applicationset::ApplicationSet;

use super::desired::{Desired, Failure, GENERATOR_ERROR, TEMPLATE_ERROR};
use super::update::RESOURCES_FINALIZER;
use crate::Context;

pub(super) async fn generate(set: &ApplicationSet, _ctx: &Context) -> Desired {
    let mut out = Desired::default();
    for (i, generator) in set.spec.generators.iter().enumerate() {
        let Some(list) = &generator.list else {
            return failed(
                GENERATOR_ERROR,
                format!("spec.generators[{i}]: only the list generator is available in this build"),
            );
        };
        if set.spec.go_template() {
            return failed(
                TEMPLATE_ERROR,
                "goTemplate is not available in this build".into(),
            );
        }
        for element in list.elements.iter().flatten() {
            match render(set, element) {
                Ok(app) => out.applications.push(app),
                Err(message) => return failed(TEMPLATE_ERROR, message),
            }
        }
    }
    out
}

pub(super) fn requeue_after(_set: &ApplicationSet) -> Option<Duration> {
    // The list generator never requeues (Argo: NoRequeueAfter).
    None
}

fn failed(reason: &'static str, message: String) -> Desired {
    Desired {
        applications: Vec::new(),
        failure: Some(Failure { reason, message }),
    }
}

fn render(set: &ApplicationSet, element: &Value) -> Result<Application, String> {
    let params = element
        .as_object()
        .ok_or_else(|| "a list element is not an object".to_string())?;
    let mut template = serde_json::to_value(&set.spec.template).map_err(|e| e.to_string())?;
    substitute(&mut template, params);
    let mut app: Application = serde_json::from_value(template)
        .map_err(|e| format!("the rendered template is not an Application: {e}"))?;
    app.api_version = Some("argoproj.io/v1alpha1".into());
    app.kind = Some("Application".into());
    app.metadata.namespace = Some(set.namespace().to_string());
    let preserve = set
        .spec
        .sync_policy
        .as_ref()
        .and_then(|p| p.preserve_resources_on_deletion)
        .unwrap_or(false);
    if !preserve
        && app
            .metadata
            .finalizers
            .as_deref()
            .is_none_or(|f| f.is_empty())
    {
        app.metadata.finalizers = Some(vec![RESOURCES_FINALIZER.to_string()]);
    }
    Ok(app)
}

fn substitute(value: &mut Value, params: &serde_json::Map<String, Value>) {
    match value {
        Value::String(s) => {
            for (k, v) in params {
                let text = match v {
                    Value::String(t) => t.clone(),
                    other => other.to_string(),
                };
                *s = s.replace(&format!("{{{{{k}}}}}", k = k), &text);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, params)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute(v, params)),
        _ => {}
    }
}
