//! Mattermost (notifications-engine's `pkg/services/mattermost.go`): `POST {apiURL}/api/v4/posts`
//! with `Authorization: Bearer {token}` and `{"channel_id": recipient, "message": message,
//! "props": {"attachments": [...]}}`, the attachments being the template's
//! `mattermost.attachments` JSON text (`[]` when there is none).

use serde::Deserialize;
use serde_json::{Value, json};

use super::fields::{api_url, json_field, parse_options};
use super::http;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Options {
    #[serde(rename = "apiURL")]
    api_url: String,
    token: String,
    insecure_skip_verify: bool,
}

/// A configured Mattermost service (its token is never shown).
pub struct MattermostService {
    name: String,
    api_url: String,
    token: String,
    http: reqwest::Client,
}

impl MattermostService {
    pub fn new(name: &str, options: &Value) -> Result<Self, Error> {
        let o: Options = parse_options(name, options)?;
        Ok(Self {
            name: name.to_string(),
            http: http::client(name, o.insecure_skip_verify)?,
            api_url: api_url(name, &o.api_url, None)?,
            token: o.token,
        })
    }

    /// The JSON body notifications-engine sends.
    pub fn body(&self, n: &Notification, dest: &Destination) -> Result<Value, Error> {
        let section = n.services.get("mattermost");
        let attachments =
            json_field(&self.name, section, "attachments")?.unwrap_or_else(|| json!([]));
        Ok(json!({
            "channel_id": dest.recipient,
            "message": n.message,
            "props": {"attachments": attachments},
        }))
    }

    pub async fn send(&self, n: &Notification, dest: &Destination) -> Result<(), Error> {
        let body = self.body(n, dest)?;
        let rb = self
            .http
            .post(format!("{}/api/v4/posts", self.api_url))
            .header("Content-Type", "application/json")
            .bearer_auth(&self.token)
            .body(body.to_string());
        let r = http::send(&self.name, rb).await?;
        if r.status / 100 != 2 {
            return Err(Error::Service {
                service: self.name.clone(),
                message: format!(
                    "request to {} has failed with error code {} : {}",
                    http::host(&self.api_url),
                    r.status,
                    http::excerpt(&r.body)
                ),
            });
        }
        Ok(())
    }
}
