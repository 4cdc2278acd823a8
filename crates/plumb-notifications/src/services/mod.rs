//! The notification services other than the webhook, each building the request
//! notifications-engine's `pkg/services/<type>.go` builds, and the choice of service by type.

mod http;
mod mattermost;
mod slack;
mod teams;

use serde_json::Value;

pub use mattermost::MattermostService;
pub use slack::SlackService;
pub use teams::TeamsService;

use crate::config::ServiceSpec;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;
use crate::webhook::{WebhookOptions, WebhookService};

/// The types Plumb can send to.
pub const IMPLEMENTED: &[&str] = &["mattermost", "slack", "teams", "webhook"];

/// A configured service of any implemented type.
pub enum Service {
    Webhook(WebhookService),
    Slack(SlackService),
    Mattermost(MattermostService),
    Teams(TeamsService),
}

impl Service {
    /// The service `name` from its `service.<type>[.<name>]` key.
    pub fn new(name: &str, spec: &ServiceSpec) -> Result<Service, Error> {
        let o = &spec.options;
        Ok(match spec.service_type.as_str() {
            "webhook" => {
                Service::Webhook(WebhookService::new(name, WebhookOptions::parse(name, o)?)?)
            }
            "slack" => Service::Slack(SlackService::new(name, o)?),
            "mattermost" => Service::Mattermost(MattermostService::new(name, o)?),
            "teams" => Service::Teams(TeamsService::new(name, o)?),
            other => {
                return Err(Error::Service {
                    service: name.to_string(),
                    message: format!(
                        "type {other} is not implemented in Plumb yet ({} are)",
                        IMPLEMENTED.join(", ")
                    ),
                });
            }
        })
    }

    /// Sends `notification` to `dest`.
    pub async fn send(&self, notification: &Notification, dest: &Destination) -> Result<(), Error> {
        match self {
            Service::Webhook(s) => s.send(notification, dest).await,
            Service::Slack(s) => s.send(notification, dest).await,
            Service::Mattermost(s) => s.send(notification, dest).await,
            Service::Teams(s) => s.send(notification, dest).await,
        }
    }
}

/// A service's options as its Go struct reads them (unknown keys ignored, as `yaml.Unmarshal`).
pub(crate) fn options<T: serde::de::DeserializeOwned>(
    service: &str,
    options: &Value,
) -> Result<T, Error> {
    serde_json::from_value(options.clone()).map_err(|e| Error::Service {
        service: service.to_string(),
        message: format!("options: {e}"),
    })
}

/// A template field notifications-engine holds as a JSON string (`attachments`, `blocks`,
/// `facts`...): rendered as text, then parsed here. Empty means absent.
pub(crate) fn json_field(
    service: &str,
    section: Option<&Value>,
    field: &str,
) -> Result<Option<Value>, Error> {
    let text = match section.and_then(|s| s.get(field)) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s.clone(),
        // A YAML list written without `|` is what the user meant too.
        Some(other) => return Ok(Some(other.clone())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| Error::Service {
            service: service.to_string(),
            message: format!("failed to unmarshal {field}: {e}"),
        })
}

/// A string field of a template section (`""` when absent).
pub(crate) fn text_field(section: Option<&Value>, field: &str) -> String {
    match section.and_then(|s| s.get(field)) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}
