//! Argo CD notifications (argocd-notifications) for Plumb: the configuration
//! (`argocd-notifications-cm`, `argocd-notifications-secret`), subscriptions from annotations,
//! trigger conditions (expr), templates (Go text/template), the `notified` state kept in an
//! annotation so nothing is sent twice, the services (webhook and `services/`), and the
//! controller loop that `plumb controller` runs. See docs/notifications.md.

mod config;
pub mod controller;
mod engine;
mod error;
mod metrics;
mod selector;
pub mod services;
mod state;
mod subscriptions;
mod templates;
mod triggers;
mod vars;
mod webhook;

pub use config::{Condition, Config, DefaultSubscription, ServiceSpec};
pub use engine::{Delivery, Engine, Outcome, Plan};
pub use error::{Error, Result};
pub use metrics::Metrics;
pub use selector::Selector;
pub use services::{
    GoogleChatService, MattermostService, OpsgenieService, PagerDutyV2Service, Service,
    SlackService, TeamsService, TelegramService,
};
pub use state::{NOTIFIED_ANNOTATION, State, state_key};
pub use subscriptions::{Destination, Destinations, annotation_destinations, global_destinations};
pub use templates::{Notification, Templates, WebhookNotification, template_data};
pub use triggers::{ConditionResult, Triggers, go_format};
pub use vars::{expr_vars, from_json};
pub use webhook::{WebhookOptions, WebhookRequest, WebhookService};
