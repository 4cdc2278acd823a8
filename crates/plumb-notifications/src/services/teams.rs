//! Microsoft Teams (notifications-engine's `pkg/services/teams.go`): `POST` to the recipient's
//! incoming webhook URL from `recipientUrls`, a MessageCard (`@type`, `context`, `title`,
//! `summary`, `text`, `themeColor`, `sections`, `potentialAction`; `facts` become one more
//! section) or, when the template has `teams.template`, that text as is. Teams answers `1` on
//! success; anything else is an error, as in Argo.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::fields::{json_field, parse_options, text_field};
use super::http;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Options {
    recipient_urls: BTreeMap<String, String>,
    insecure_skip_verify: bool,
}

/// A configured Teams service (the webhook URLs are secrets: never shown).
pub struct TeamsService {
    name: String,
    recipient_urls: BTreeMap<String, String>,
    http: reqwest::Client,
}

impl TeamsService {
    pub fn new(name: &str, options: &Value) -> Result<Self, Error> {
        let o: Options = parse_options(name, options)?;
        Ok(Self {
            name: name.to_string(),
            http: http::client(name, o.insecure_skip_verify)?,
            recipient_urls: o.recipient_urls,
        })
    }

    fn err(&self, message: String) -> Error {
        Error::Service {
            service: self.name.clone(),
            message,
        }
    }

    /// The body notifications-engine sends (`teamsNotificationToReader`).
    pub fn body(&self, n: &Notification) -> Result<String, Error> {
        let t = n.services.get("teams");
        let template = text_field(t, "template");
        if !template.is_empty() {
            return Ok(template);
        }
        let mut m = Map::new();
        m.insert("@type".into(), json!("MessageCard"));
        m.insert("context".into(), json!("https://schema.org/extensions"));
        for (field, default) in [("title", ""), ("summary", ""), ("text", n.message.as_str())] {
            let v = text_field(t, field);
            m.insert(
                field.into(),
                json!(if v.is_empty() { default.to_string() } else { v }),
            );
        }
        let color = text_field(t, "themeColor");
        if !color.is_empty() {
            m.insert("themeColor".into(), json!(color));
        }
        let list = |field: &str| -> Result<Option<Vec<Value>>, Error> {
            match json_field(&self.name, t, field)? {
                None => Ok(None),
                Some(Value::Array(a)) => Ok(Some(a)),
                Some(_) => Err(self.err(format!("teams {field}: expected a JSON list"))),
            }
        };
        let mut sections = list("sections")?.unwrap_or_default();
        if let Some(facts) = list("facts")? {
            sections.push(json!({"facts": facts}));
        }
        // Go's `omitempty` leaves out empty lists.
        if let Some(actions) = list("potentialAction")?.filter(|a| !a.is_empty()) {
            m.insert("potentialAction".into(), Value::Array(actions));
        }
        if !sections.is_empty() {
            m.insert("sections".into(), Value::Array(sections));
        }
        Ok(Value::Object(m).to_string())
    }

    pub async fn send(&self, n: &Notification, dest: &Destination) -> Result<(), Error> {
        let url = self.recipient_urls.get(&dest.recipient).ok_or_else(|| {
            self.err(format!(
                "no teams webhook configured for recipient {}",
                dest.recipient
            ))
        })?;
        let rb = self
            .http
            .post(url)
            .header("Content-Type", "application/json")
            .body(self.body(n)?);
        let r = http::send(&self.name, rb).await?;
        if r.body != "1" {
            return Err(self.err(format!(
                "teams webhook post to {} error (code {}): {}",
                http::host(url),
                r.status,
                http::excerpt(&r.body)
            )));
        }
        Ok(())
    }
}
