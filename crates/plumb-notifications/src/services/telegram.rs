//! Telegram (notifications-engine's `pkg/services/telegram.go` over OvyFlash/telegram-bot-api):
//! per notification `getMe`, then `sendMessage`, both `POST https://api.telegram.org/bot{token}/
//! {method}`, form-encoded as the library sends them: `chat_id` (`@{recipient}`, or the number
//! of a recipient starting with `-`, with `message_thread_id` after a `|`), `text`,
//! `parse_mode=Markdown`, and the library's empty `business_connection_id`, `entities=null`,
//! `link_preview_options={}`, `reply_parameters={"message_id":0}`.
//!
//! `apiURL` is a Plumb-only option: the library's endpoint is a constant, so without it no test
//! could reach a loopback receiver. Argo ignores the key. The token is in the URL's path: errors
//! never show the URL.

use serde::Deserialize;
use serde_json::Value;

use super::fields::{api_url, parse_options};
use super::http;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

/// The library's `APIEndpoint` without its `bot%s/%s`.
pub const API_URL: &str = "https://api.telegram.org";

#[derive(Deserialize, Default)]
#[serde(default)]
struct Options {
    token: String,
    #[serde(rename = "apiURL")]
    api_url: String,
}

/// A configured Telegram service (its token is never shown).
pub struct TelegramService {
    name: String,
    token: String,
    api_url: String,
    http: reqwest::Client,
}

impl TelegramService {
    pub fn new(name: &str, options: &Value) -> Result<Self, Error> {
        let o: Options = parse_options(name, options)?;
        let given = o.api_url.trim_end_matches('/');
        // Only an empty option means the default ("/" is refused, not defaulted).
        let api_url = if o.api_url.is_empty() {
            API_URL.to_string()
        } else {
            api_url(name, given, None)?
        };
        Ok(Self {
            name: name.to_string(),
            http: http::client(name, false)?,
            token: o.token,
            api_url,
        })
    }

    fn err(&self, message: String) -> Error {
        Error::Service {
            service: self.name.clone(),
            message,
        }
    }

    /// The `sendMessage` form (sorted, as Go's `url.Values.Encode`).
    pub fn form(
        &self,
        n: &Notification,
        dest: &Destination,
    ) -> Result<Vec<(String, String)>, Error> {
        let mut f = vec![("business_connection_id".to_string(), String::new())];
        let r = &dest.recipient;
        if r.starts_with('-') {
            let mut parts = r.split('|');
            let chat = parts.next().unwrap_or_default();
            let id: i64 = chat.parse().map_err(|_| {
                self.err(format!("recipient {r}: chat id {chat:?} is not a number"))
            })?;
            f.push(("chat_id".into(), id.to_string()));
            if let Some(thread) = parts.next() {
                let t: i64 = thread.parse().map_err(|_| {
                    self.err(format!(
                        "recipient {r}: thread id {thread:?} is not a number"
                    ))
                })?;
                if t != 0 {
                    f.push(("message_thread_id".into(), t.to_string()));
                }
            }
        } else {
            f.push(("chat_id".into(), format!("@{r}")));
        }
        f.push(("entities".into(), "null".into()));
        f.push(("link_preview_options".into(), "{}".into()));
        f.push(("parse_mode".into(), "Markdown".into()));
        f.push(("reply_parameters".into(), r#"{"message_id":0}"#.into()));
        if !n.message.is_empty() {
            f.push(("text".into(), n.message.clone()));
        }
        f.sort();
        Ok(f)
    }

    async fn call(&self, method: &str, form: &[(String, String)]) -> Result<(), Error> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let rb = self
            .http
            .post(format!("{}/bot{}/{method}", self.api_url, self.token))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(body);
        let r = http::send(&self.name, rb).await?;
        let v: Value = serde_json::from_str(&r.body).map_err(|_| {
            self.err(format!(
                "telegram {method}: status {}, not a JSON answer",
                r.status
            ))
        })?;
        if v.get("ok") != Some(&Value::Bool(true)) {
            let d = v.get("description").and_then(Value::as_str).unwrap_or("");
            return Err(self.err(format!(
                "telegram {method}: {}",
                http::excerpt(d).replace(self.token.as_str(), "<token>")
            )));
        }
        Ok(())
    }

    pub async fn send(&self, n: &Notification, dest: &Destination) -> Result<(), Error> {
        let form = self.form(n, dest)?;
        self.call("getMe", &[]).await?;
        self.call("sendMessage", &form).await
    }
}
