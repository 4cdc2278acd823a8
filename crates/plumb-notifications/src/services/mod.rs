//! The notification services other than the webhook, each building the request
//! notifications-engine's `pkg/services/<type>.go` builds, and the choice of service by type.

mod fields;
mod googlechat;
mod http;
mod mattermost;
mod opsgenie;
mod pagerdutyv2;
mod slack;
mod teams;
mod telegram;

pub use googlechat::GoogleChatService;
pub use mattermost::MattermostService;
pub use opsgenie::OpsgenieService;
pub use pagerdutyv2::PagerDutyV2Service;
pub use slack::SlackService;
pub use teams::TeamsService;
pub use telegram::TelegramService;

use crate::config::ServiceSpec;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;
use crate::webhook::{WebhookOptions, WebhookService};

/// The types Plumb can send to.
pub const IMPLEMENTED: &[&str] = &[
    "googlechat",
    "mattermost",
    "opsgenie",
    "pagerdutyv2",
    "slack",
    "teams",
    "telegram",
    "webhook",
];

/// A configured service of any implemented type.
pub enum Service {
    Webhook(WebhookService),
    Slack(SlackService),
    Mattermost(MattermostService),
    Teams(TeamsService),
    GoogleChat(GoogleChatService),
    PagerDutyV2(PagerDutyV2Service),
    Opsgenie(OpsgenieService),
    Telegram(TelegramService),
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
            "googlechat" => Service::GoogleChat(GoogleChatService::new(name, o)?),
            "pagerdutyv2" => Service::PagerDutyV2(PagerDutyV2Service::new(name, o)?),
            "opsgenie" => Service::Opsgenie(OpsgenieService::new(name, o)?),
            "telegram" => Service::Telegram(TelegramService::new(name, o)?),
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
            Service::GoogleChat(s) => s.send(notification, dest).await,
            Service::PagerDutyV2(s) => s.send(notification, dest).await,
            Service::Opsgenie(s) => s.send(notification, dest).await,
            Service::Telegram(s) => s.send(notification, dest).await,
        }
    }
}
