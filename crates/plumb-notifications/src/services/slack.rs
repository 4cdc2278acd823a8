//! Slack (notifications-engine's `pkg/services/slack.go` over slack-go v0.16): the Web API's
//! `chat.postMessage` with the bot `token`, form-encoded as slack-go sends it (`token`,
//! `channel`, `text`, `username`, `icon_emoji`/`icon_url`, `attachments`, `blocks`,
//! `thread_ts`, `reply_broadcast`, `unfurl_links`/`unfurl_media`); `apiURL` (default
//! `https://slack.com/api/`) is prefixed as is, as slack-go does. Argo's Slack service has no
//! incoming-webhook mode: incoming webhooks go through the webhook service.
//!
//! Threads: the first message of a `groupingKey` keeps its `ts`, the next ones are sent with
//! it as `thread_ts` (and `chat.update` for the `Update`/`PostAndUpdate` delivery policies). As
//! in Argo, this is kept in memory only, so a restart starts new threads.

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::fields::{api_url, json_field, parse_options, text_field};
use super::http;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

/// slack-go's `APIURL`.
pub const DEFAULT_API_URL: &str = "https://slack.com/api/";
/// Threads remembered (a `groupingKey` per revision would otherwise grow without end).
const MAX_THREADS: usize = 10_000;
/// 429 answers waited out per message (slack-go waits forever).
const MAX_RATE_LIMITED: u32 = 5;
/// The longest `Retry-After` obeyed.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Options {
    username: String,
    icon: String,
    token: String,
    #[serde(rename = "apiURL")]
    api_url: String,
    disable_unfurl: bool,
    insecure_skip_verify: bool,
}

/// Per (service, recipient, groupingKey): the thread's `ts`; per (service, recipient): the
/// channel id Slack answered. Global like notifications-engine's `slackState`, so a
/// configuration reload keeps the threads.
#[derive(Default)]
struct Threads {
    ts: BTreeMap<(String, String, String), String>,
    channels: BTreeMap<(String, String), String>,
}

static THREADS: LazyLock<Mutex<Threads>> = LazyLock::new(Mutex::default);

/// A configured Slack service (its token is never shown).
pub struct SlackService {
    name: String,
    options: Options,
    http: reqwest::Client,
}

#[derive(PartialEq)]
enum Policy {
    Post,
    PostAndUpdate,
    Update,
}

/// The form values of one message (sorted, as Go's `url.Values.Encode`).
pub type Form = BTreeMap<&'static str, String>;

impl SlackService {
    pub fn new(name: &str, options: &Value) -> Result<Self, Error> {
        let mut o: Options = parse_options(name, options)?;
        o.api_url = api_url(name, &o.api_url, Some(DEFAULT_API_URL))?;
        Ok(Self {
            name: name.to_string(),
            http: http::client(name, o.insecure_skip_verify)?,
            options: o,
        })
    }

    fn err(&self, message: String) -> Error {
        Error::Service {
            service: self.name.clone(),
            message,
        }
    }

    /// The message's form values as `buildMessageOptions` makes them (no thread yet).
    pub fn form(&self, n: &Notification, dest: &Destination) -> Result<Form, Error> {
        let s = n.services.get("slack");
        let mut f = Form::new();
        f.insert("token", self.options.token.clone());
        f.insert("channel", dest.recipient.clone());
        f.insert("text", n.message.clone());
        let username = Some(text_field(s, "username"))
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| self.options.username.clone());
        if !username.is_empty() {
            f.insert("username", username);
        }
        let icon = Some(text_field(s, "icon"))
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| self.options.icon.clone());
        if icon.len() > 2 && icon.starts_with(':') && icon.ends_with(':') {
            f.insert("icon_emoji", icon);
        } else if url::Url::parse(&icon)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
        {
            f.insert("icon_url", icon);
        } else if !icon.is_empty() {
            tracing::warn!(service = %self.name, "Icon reference is not a valid emoji or url");
        }
        if s.is_some() {
            let mut attachments = json_field(&self.name, s, "attachments")?
                .unwrap_or_else(|| Value::Array(Vec::new()));
            normalize_attachments(&mut attachments);
            f.insert("attachments", attachments.to_string());
            if let Some(blocks) = json_field(&self.name, s, "blocks")?
                .filter(|b| b.as_array().is_some_and(|a| !a.is_empty()))
            {
                f.insert("blocks", blocks.to_string());
            }
        }
        if self.options.disable_unfurl {
            f.insert("unfurl_links", "false".into());
            f.insert("unfurl_media", "false".into());
        }
        Ok(f)
    }

    /// Sends as notifications-engine's `threadedClient.SendMessage`.
    pub async fn send(&self, n: &Notification, dest: &Destination) -> Result<(), Error> {
        let mut form = self.form(n, dest)?;
        let s = n.services.get("slack");
        let key = text_field(s, "groupingKey");
        let broadcast = matches!(
            s.and_then(|s| s.get("notifyBroadcast")),
            Some(Value::Bool(true))
        ) || text_field(s, "notifyBroadcast") == "true";
        let policy = match text_field(s, "deliveryPolicy").as_str() {
            "PostAndUpdate" => Policy::PostAndUpdate,
            "Update" => Policy::Update,
            _ => Policy::Post,
        };
        let thread_key = (self.name.clone(), dest.recipient.clone(), key.clone());
        let ts = (!key.is_empty())
            .then(|| lock().ts.get(&thread_key).cloned())
            .flatten();
        if let Some(ts) = &ts {
            form.insert("thread_ts", ts.clone());
        }
        if ts.is_none() || policy != Policy::Update {
            let mut post = form.clone();
            if broadcast {
                post.insert("reply_broadcast", "true".into());
            }
            let (new_ts, channel) = self.call("chat.postMessage", &post).await?;
            let mut t = lock();
            if !key.is_empty() && ts.is_none() {
                if t.ts.len() >= MAX_THREADS {
                    t.ts.pop_first();
                }
                t.ts.insert(thread_key, new_ts);
            }
            t.channels
                .insert((self.name.clone(), dest.recipient.clone()), channel);
        }
        if let Some(ts) = ts.filter(|_| policy != Policy::Post) {
            let channel = lock()
                .channels
                .get(&(self.name.clone(), dest.recipient.clone()))
                .cloned()
                .unwrap_or_else(|| dest.recipient.clone());
            form.insert("channel", channel);
            form.insert("ts", ts);
            form.insert("as_user", "true".into());
            self.call("chat.update", &form).await?;
        }
        Ok(())
    }

    /// One Web API call; returns the message's `ts` and channel id.
    async fn call(&self, method: &str, form: &Form) -> Result<(String, String), Error> {
        let url = format!("{}{method}", self.options.api_url);
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter())
            .finish();
        let mut limited = 0;
        loop {
            let rb = self
                .http
                .post(&url)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(body.clone());
            let r = http::send(&self.name, rb).await?;
            if r.status == 429 && limited < MAX_RATE_LIMITED {
                limited += 1;
                let wait = r.retry_after.unwrap_or(Duration::from_secs(1));
                tokio::time::sleep(wait.min(MAX_RETRY_AFTER)).await;
                continue;
            }
            if r.status != 200 {
                return Err(self.err(format!("slack {method}: status {}", r.status)));
            }
            let v: Value = serde_json::from_str(&r.body)
                .map_err(|e| self.err(format!("slack {method}: bad answer: {e}")))?;
            let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let error = field("error");
            if v.get("ok") != Some(&Value::Bool(true)) && !error.trim().is_empty() {
                return Err(self.err(format!("slack {method}: {}", http::excerpt(&error))));
            }
            let ts = Some(field("ts"))
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| field("message_ts"));
            return Ok((ts, field("channel")));
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Threads> {
    THREADS.lock().unwrap_or_else(|e| e.into_inner())
}

/// slack-go re-encodes attachments through its `Attachment` struct: `blocks` is always there
/// (`null` when empty: a struct ignores `omitempty`), and `fields` entries always carry
/// `title`, `value` and `short`.
fn normalize_attachments(v: &mut Value) {
    let Some(list) = v.as_array_mut() else { return };
    for a in list {
        if let Some(m) = a.as_object_mut() {
            m.entry("blocks").or_insert(Value::Null);
        }
        let Some(fields) = a.get_mut("fields").and_then(Value::as_array_mut) else {
            continue;
        };
        for f in fields.iter_mut().filter_map(Value::as_object_mut) {
            f.entry("title").or_insert(Value::String(String::new()));
            f.entry("value").or_insert(Value::String(String::new()));
            f.entry("short").or_insert(Value::Bool(false));
        }
    }
}
