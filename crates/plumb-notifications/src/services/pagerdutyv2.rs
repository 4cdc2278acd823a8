//! PagerDuty Events API v2 (notifications-engine's `pkg/services/pagerdutyv2.go` over
//! go-pagerduty v1.8.0's `ManageEventWithContext`): `POST https://events.pagerduty.com/v2/enqueue`
//! with `User-Agent: go-pagerduty/1.8.0` and `{"routing_key": serviceKeys[recipient],
//! "event_action": "trigger", "dedup_key"?, "client": "ArgoCD", "client_url"?, "payload":
//! {"summary", "source", "severity", "component"?, "group"?, "class"?}}`. Success is 202.
//!
//! `apiURL` is a Plumb-only option: go-pagerduty's endpoint is a constant, so without it no test
//! could reach a loopback receiver. Argo ignores the key; leave it unset in production.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::fields::{api_url, parse_options, text_field};
use super::http;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

/// go-pagerduty's `v2eventEndPoint`.
pub const EVENTS_URL: &str = "https://events.pagerduty.com/v2/enqueue";

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Options {
    service_keys: BTreeMap<String, String>,
    #[serde(rename = "apiURL")]
    api_url: String,
}

/// A configured PagerDuty v2 service (the routing keys are never shown).
pub struct PagerDutyV2Service {
    name: String,
    service_keys: BTreeMap<String, String>,
    url: String,
    http: reqwest::Client,
}

impl PagerDutyV2Service {
    pub fn new(name: &str, options: &Value) -> Result<Self, Error> {
        let o: Options = parse_options(name, options)?;
        let url = api_url(name, &o.api_url, Some(EVENTS_URL))?;
        Ok(Self {
            name: name.to_string(),
            http: http::client(name, false)?,
            service_keys: o.service_keys,
            url,
        })
    }

    fn err(&self, message: String) -> Error {
        Error::Service {
            service: self.name.clone(),
            message,
        }
    }

    /// The event notifications-engine's `buildEvent` makes.
    pub fn event(&self, routing_key: &str, n: &Notification) -> Result<Value, Error> {
        let s = n
            .services
            .get("pagerdutyv2")
            .ok_or_else(|| self.err("no config found for pagerdutyv2".into()))?;
        let f = |k: &str| text_field(Some(s), k);
        let mut payload = Map::new();
        for k in ["summary", "source", "severity"] {
            payload.insert(k.into(), json!(f(k)));
        }
        for k in ["component", "group", "class"] {
            if !f(k).is_empty() {
                payload.insert(k.into(), json!(f(k)));
            }
        }
        let mut e = Map::new();
        e.insert("routing_key".into(), json!(routing_key));
        e.insert("event_action".into(), json!("trigger"));
        if !f("dedupKey").is_empty() {
            e.insert("dedup_key".into(), json!(f("dedupKey")));
        }
        e.insert("client".into(), json!("ArgoCD"));
        if !f("url").is_empty() {
            e.insert("client_url".into(), json!(f("url")));
        }
        e.insert("payload".into(), Value::Object(payload));
        Ok(Value::Object(e))
    }

    pub async fn send(&self, n: &Notification, dest: &Destination) -> Result<(), Error> {
        let key = self.service_keys.get(&dest.recipient).ok_or_else(|| {
            self.err(format!(
                "no API key configured for recipient {}",
                dest.recipient
            ))
        })?;
        let rb = self
            .http
            .post(&self.url)
            .header("User-Agent", "go-pagerduty/1.8.0")
            .header("Content-Type", "application/json")
            .body(self.event(key, n)?.to_string());
        let r = http::send(&self.name, rb).await?;
        if r.status != 202 {
            return Err(self.err(format!(
                "HTTP response with status code: {}: {}",
                r.status,
                http::excerpt(&r.body).replace(key.as_str(), "<routing key>")
            )));
        }
        Ok(())
    }
}
