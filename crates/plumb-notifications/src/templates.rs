//! Notification templates (`template.<name>`), rendered as notifications-engine's
//! `pkg/templates` does: Go text/template with sprig (less `env`/`expandenv`) over `.app`,
//! `.appProject`, `.context`, `.secrets`, `.serviceType`, `.recipient` and Argo's `call`
//! helpers. `message` is set when it renders non-empty; each `webhook.<service>` gets its
//! `method`, and a rendered `path` and `body`. The other services' sections (slack, email,
//! teams...) are rendered field by field: every string in them is a template (Argo renders
//! the fields it knows per service; the strings it does not template have no `{{` in the
//! catalog, so they come out the same).

use std::collections::BTreeMap;

use plumb_gotemplate::{Limits, Options, Template};
use serde_json::Value;

use crate::error::Error;

/// Bytes one rendered field may have.
pub const MAX_FIELD_BYTES: usize = 256 << 10;
/// Template steps one field may take.
pub const MAX_STEPS: u64 = 1_000_000;

/// A rendered webhook request of one service.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WebhookNotification {
    pub method: String,
    pub path: String,
    pub body: String,
}

/// A rendered notification (notifications-engine's `services.Notification`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Notification {
    pub message: String,
    pub webhook: BTreeMap<String, WebhookNotification>,
    /// The other services' sections, rendered.
    pub services: BTreeMap<String, Value>,
}

enum Tree {
    Text(Box<Template>),
    Plain(Value),
    Map(BTreeMap<String, Tree>),
    List(Vec<Tree>),
}

struct CompiledWebhook {
    method: String,
    path: Template,
    body: Template,
}

struct Compiled {
    message: Template,
    webhook: BTreeMap<String, CompiledWebhook>,
    services: BTreeMap<String, Tree>,
}

/// Parsed templates.
#[derive(Default)]
pub struct Templates {
    templates: BTreeMap<String, Compiled>,
}

impl Templates {
    /// Parses every template; the ones that do not parse are returned as errors.
    pub fn compile(templates: &BTreeMap<String, Value>) -> (Templates, Vec<Error>) {
        let functions = crate::vars::template_functions();
        let mut out = BTreeMap::new();
        let mut errors = Vec::new();
        for (name, spec) in templates {
            match compile_one(name, spec, &functions) {
                Ok(c) => {
                    out.insert(name.clone(), c);
                }
                Err(message) => errors.push(Error::Template {
                    template: name.clone(),
                    message,
                }),
            }
        }
        (Templates { templates: out }, errors)
    }

    /// The template names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.templates.keys().map(String::as_str)
    }

    /// Renders `names` in order onto one notification (later templates override earlier ones'
    /// fields, as notifications-engine's `FormatNotification`).
    pub fn render(&self, names: &[String], data: &Value) -> Result<Notification, Error> {
        let mut n = Notification::default();
        for name in names {
            let c = self.templates.get(name).ok_or_else(|| Error::Template {
                template: name.clone(),
                message: format!("template '{name}' is not supported"),
            })?;
            render_one(c, data, &mut n).map_err(|message| Error::Template {
                template: name.clone(),
                message,
            })?;
        }
        Ok(n)
    }
}

fn options() -> Options {
    Options {
        limits: Limits {
            max_steps: MAX_STEPS,
            max_output_bytes: MAX_FIELD_BYTES,
            ..Limits::default()
        },
        ..Options::default()
    }
}

fn parse(name: &str, text: &str, f: &plumb_gotemplate::Functions) -> Result<Template, String> {
    Template::parse_with(name, text, f).map_err(|e| e.to_string())
}

fn compile_one(
    name: &str,
    spec: &Value,
    f: &plumb_gotemplate::Functions,
) -> Result<Compiled, String> {
    let text = |v: Option<&Value>, field: &str| -> Result<String, String> {
        match v {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!("{field}: expected a string, got {other}")),
        }
    };
    let message = parse(name, &text(spec.get("message"), "message")?, f)?;
    let mut webhook = BTreeMap::new();
    if let Some(hooks) = spec.get("webhook").and_then(Value::as_object) {
        for (service, h) in hooks {
            let field = |k: &str| text(h.get(k), &format!("webhook.{service}.{k}"));
            webhook.insert(
                service.clone(),
                CompiledWebhook {
                    method: field("method")?,
                    path: parse(&format!("{name}{service}"), &field("path")?, f)?,
                    body: parse(&format!("{name}{service}"), &field("body")?, f)?,
                },
            );
        }
    }
    let mut services = BTreeMap::new();
    if let Some(map) = spec.as_object() {
        for (k, v) in map {
            if k != "message" && k != "webhook" {
                services.insert(k.clone(), tree(name, v, f)?);
            }
        }
    }
    Ok(Compiled {
        message,
        webhook,
        services,
    })
}

fn tree(name: &str, v: &Value, f: &plumb_gotemplate::Functions) -> Result<Tree, String> {
    Ok(match v {
        Value::String(s) if s.contains("{{") => Tree::Text(Box::new(parse(name, s, f)?)),
        Value::Object(m) => Tree::Map(
            m.iter()
                .map(|(k, v)| Ok((k.clone(), tree(name, v, f)?)))
                .collect::<Result<_, String>>()?,
        ),
        Value::Array(items) => Tree::List(
            items
                .iter()
                .map(|v| tree(name, v, f))
                .collect::<Result<_, String>>()?,
        ),
        other => Tree::Plain(other.clone()),
    })
}

fn render_one(c: &Compiled, data: &Value, n: &mut Notification) -> Result<(), String> {
    let opts = options();
    let exec = |t: &Template| t.execute(data, &opts).map_err(|e| e.to_string());
    let message = exec(&c.message)?;
    if !message.is_empty() {
        n.message = message;
    }
    for (service, h) in &c.webhook {
        n.webhook.insert(
            service.clone(),
            WebhookNotification {
                method: h.method.clone(),
                path: exec(&h.path)?,
                body: exec(&h.body)?,
            },
        );
    }
    for (service, t) in &c.services {
        n.services.insert(service.clone(), render_tree(t, &exec)?);
    }
    Ok(())
}

fn render_tree(
    t: &Tree,
    exec: &dyn Fn(&Template) -> Result<String, String>,
) -> Result<Value, String> {
    Ok(match t {
        Tree::Text(t) => Value::String(exec(t)?),
        Tree::Plain(v) => v.clone(),
        Tree::Map(m) => Value::Object(
            m.iter()
                .map(|(k, t)| Ok((k.clone(), render_tree(t, exec)?)))
                .collect::<Result<_, String>>()?,
        ),
        Tree::List(items) => Value::Array(
            items
                .iter()
                .map(|t| render_tree(t, exec))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// The data of a template for one destination (Argo CD's `initGetVars` plus notifications-engine's
/// `serviceType` and `recipient`).
pub fn template_data(
    app: &Value,
    app_project: &Value,
    context: &BTreeMap<String, String>,
    secrets: &BTreeMap<String, String>,
    service: &str,
    recipient: &str,
) -> Value {
    let mut ctx = serde_json::Map::new();
    ctx.insert(
        "notificationType".into(),
        Value::String(service.to_string()),
    );
    for (k, v) in context {
        ctx.insert(k.clone(), Value::String(v.clone()));
    }
    serde_json::json!({
        "app": app,
        "appProject": app_project,
        "context": ctx,
        "secrets": secrets,
        "serviceType": service,
        "recipient": recipient,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn templates(spec: &[(&str, Value)]) -> (Templates, Vec<Error>) {
        Templates::compile(
            &spec
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn message_webhook_and_service_fields() {
        let (t, errors) = templates(&[
            (
                "a",
                json!({"message": "{{.app.metadata.name}} via {{.serviceType}} to {{.recipient}}",
                "webhook": {"hook": {"method": "POST", "path": "/apps/{{.app.metadata.name}}",
                    "body": "{\"repo\": \"{{call .repo.RepoURLToHTTPS .app.spec.source.repoURL}}\"}"}},
                "email": {"subject": "{{.context.argocdUrl}}", "static": 3}}),
            ),
            (
                "b",
                json!({"message": "{{if eq .serviceType \"slack\"}}x{{end}}"}),
            ),
        ]);
        assert!(errors.is_empty());
        let app = json!({"metadata": {"name": "guestbook"}, "spec": {"source": {"repoURL": "git@github.com:o/r.git"}}});
        let ctx = BTreeMap::from([("argocdUrl".to_string(), "https://argo".to_string())]);
        let data = template_data(&app, &json!({}), &ctx, &BTreeMap::new(), "hook", "r1");
        let n = t.render(&["a".into(), "b".into()], &data).unwrap();
        // b's message renders empty and leaves a's.
        assert_eq!(n.message, "guestbook via hook to r1");
        assert_eq!(n.webhook["hook"].path, "/apps/guestbook");
        assert_eq!(
            n.webhook["hook"].body,
            "{\"repo\": \"https://github.com/o/r.git\"}"
        );
        assert_eq!(
            n.services["email"],
            json!({"subject": "https://argo", "static": 3})
        );
    }

    #[test]
    fn bad_templates_are_named() {
        let (t, errors) = templates(&[
            ("broken", json!({"message": "{{.app"})),
            (
                "huge",
                json!({"message": "{{range $i := until 100000}}0123456789{{end}}"}),
            ),
            (
                "commit",
                json!({"message": "{{(call .repo.GetCommitMetadata \"abc\").Author}}"}),
            ),
        ]);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().starts_with("template broken:"));
        let data = template_data(
            &json!({}),
            &json!({}),
            &BTreeMap::new(),
            &BTreeMap::new(),
            "s",
            "",
        );
        let huge = t.render(&["huge".into()], &data).unwrap_err().to_string();
        assert!(huge.starts_with("template huge:"), "{huge}");
        let commit = t.render(&["commit".into()], &data).unwrap_err().to_string();
        assert!(
            commit.contains("GetCommitMetadata is not implemented"),
            "{commit}"
        );
        let missing = t.render(&["nope".into()], &data).unwrap_err().to_string();
        assert_eq!(missing, "template nope: template 'nope' is not supported");
    }
}
