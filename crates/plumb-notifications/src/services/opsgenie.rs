//! Opsgenie (notifications-engine's `pkg/services/opsgenie.go` over opsgenie-go-sdk-v2 v1.2.23):
//! `POST https://{apiUrl}/v2/alerts` (`http://` when the host has no `api` in it, as the SDK
//! does for its tests) with `Authorization: GenieKey {apiKeys[recipient]}` and the alert: the
//! message, the template's `opsgenie` fields, the recipient as a `team` responder and
//! `source: Argo CD`. The SDK's responder struct writes `type` and `username` always (its
//! `omitempty` tags have a space in them, which Go ignores). 5xx, 429 and connection errors are
//! retried 4 times, as the SDK's retryablehttp client.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::fields::{parse_options, text_field};
use super::http;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

/// The SDK's default retries.
const RETRY_MAX: u32 = 4;

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Options {
    api_url: String,
    api_keys: BTreeMap<String, String>,
    insecure_skip_verify: bool,
}

/// A configured Opsgenie service (the API keys are never shown).
pub struct OpsgenieService {
    name: String,
    url: String,
    api_keys: BTreeMap<String, String>,
    http: reqwest::Client,
}

/// A responder as the SDK's `alert.Responder` marshals it.
fn responder(v: &Value) -> Value {
    let f = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut m = Map::new();
    m.insert("type".into(), json!(f("type")));
    for k in ["name", "id"] {
        if !f(k).is_empty() {
            m.insert(k.into(), json!(f(k)));
        }
    }
    m.insert("username".into(), json!(f("username")));
    Value::Object(m)
}

impl OpsgenieService {
    pub fn new(name: &str, options: &Value) -> Result<Self, Error> {
        let o: Options = parse_options(name, options)?;
        let host = if o.api_url.is_empty() {
            "api.opsgenie.com".to_string()
        } else {
            o.api_url
        };
        let scheme = if host.contains("api") {
            "https"
        } else {
            "http"
        };
        let url = format!("{scheme}://{host}/v2/alerts");
        if url::Url::parse(&url).is_err() {
            return Err(Error::Service {
                service: name.to_string(),
                message: "apiUrl: not a host name".to_string(),
            });
        }
        Ok(Self {
            name: name.to_string(),
            http: http::client(name, o.insecure_skip_verify)?,
            api_keys: o.api_keys,
            url,
        })
    }

    fn err(&self, message: String) -> Error {
        Error::Service {
            service: self.name.clone(),
            message,
        }
    }

    /// The `CreateAlertRequest` notifications-engine builds, as JSON.
    pub fn alert(&self, n: &Notification, dest: &Destination) -> Result<Value, Error> {
        let mut a = Map::new();
        a.insert("message".into(), json!(n.message));
        let s = n.services.get("opsgenie");
        if let Some(s) = s {
            if text_field(Some(s), "description").is_empty() {
                return Err(self.err("opsgenie notification description is missing".into()));
            }
            for k in ["alias", "description", "entity", "priority", "user", "note"] {
                let v = text_field(Some(s), k);
                if !v.is_empty() {
                    a.insert(k.into(), json!(v));
                }
            }
            for k in ["actions", "tags"] {
                if let Some(l) = s.get(k).and_then(Value::as_array).filter(|l| !l.is_empty()) {
                    a.insert(k.into(), Value::Array(l.clone()));
                }
            }
            if let Some(d) = s
                .get("details")
                .and_then(Value::as_object)
                .filter(|d| !d.is_empty())
            {
                a.insert("details".into(), Value::Object(d.clone()));
            }
            if let Some(l) = s
                .get("visibleTo")
                .and_then(Value::as_array)
                .filter(|l| !l.is_empty())
            {
                a.insert("visibleTo".into(), l.iter().map(responder).collect());
            }
        }
        if n.message.is_empty() {
            return Err(self.err("message can not be empty".into()));
        }
        a.insert(
            "responders".into(),
            json!([responder(&json!({"type": "team", "id": dest.recipient}))]),
        );
        a.insert("source".into(), json!("Argo CD"));
        Ok(Value::Object(a))
    }

    pub async fn send(&self, n: &Notification, dest: &Destination) -> Result<(), Error> {
        let key = self.api_keys.get(&dest.recipient).ok_or_else(|| {
            self.err(format!(
                "no API key configured for recipient {}",
                dest.recipient
            ))
        })?;
        let body = self.alert(n, dest)?.to_string();
        let mut attempt = 0;
        loop {
            let rb = self
                .http
                .post(&self.url)
                .header("Content-Type", "application/json; charset=utf-8")
                .header("Authorization", format!("GenieKey {key}"))
                .body(body.clone());
            let outcome = http::send(&self.name, rb).await;
            let retry = match &outcome {
                Err(_) => true,
                Ok(r) => r.status == 429 || (r.status >= 500 && r.status != 501),
            };
            if retry && attempt < RETRY_MAX {
                tokio::time::sleep(Duration::from_secs(1 << attempt).min(Duration::from_secs(30)))
                    .await;
                attempt += 1;
                continue;
            }
            let r = outcome?;
            if r.status >= 400 {
                let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
                let message = v.get("message").and_then(Value::as_str).unwrap_or("");
                return Err(self.err(format!(
                    "Error occurred with Status code: {}, Message: {}",
                    r.status,
                    http::excerpt(message).replace(key.as_str(), "<api key>")
                )));
            }
            return Ok(());
        }
    }
}
