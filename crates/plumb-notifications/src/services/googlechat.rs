//! Google Chat (notifications-engine's `pkg/services/googlechat.go`): `POST` to the recipient's
//! webhook from `webhooks`, `{"text": message}` or, when the template has `googlechat.cards` or
//! `googlechat.cardsV2` (YAML or JSON text), `{"text": "", "cards": [...], "cardsV2":
//! [{"cardId": <uuid>, "card": ...}]}`; a `threadKey` is added to the URL's query with
//! `messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD`. As in Argo, the answer's
//! `error` object decides failure, not the status. The webhook URL carries `key` and `token`:
//! never shown.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::fields::{parse_options, text_field};
use super::http;
use crate::error::Error;
use crate::subscriptions::Destination;
use crate::templates::Notification;

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Options {
    webhooks: BTreeMap<String, String>,
    insecure_skip_verify: bool,
}

/// A configured Google Chat service.
pub struct GoogleChatService {
    name: String,
    webhooks: BTreeMap<String, String>,
    http: reqwest::Client,
}

impl GoogleChatService {
    pub fn new(name: &str, options: &Value) -> Result<Self, Error> {
        let o: Options = parse_options(name, options)?;
        Ok(Self {
            name: name.to_string(),
            http: http::client(name, o.insecure_skip_verify)?,
            webhooks: o.webhooks,
        })
    }

    fn err(&self, message: String) -> Error {
        Error::Service {
            service: self.name.clone(),
            message,
        }
    }

    /// A YAML or JSON list field (Go reads them with `sigs.k8s.io/yaml`).
    fn list(&self, section: Option<&Value>, field: &str) -> Result<Option<Vec<Value>>, Error> {
        let text = text_field(section, field);
        if text.is_empty() {
            return Ok(None);
        }
        match serde_saphyr::from_str::<Value>(&text) {
            Ok(Value::Array(a)) => Ok(Some(a)),
            Ok(_) => Err(self.err(format!(
                "cannot create message: googlechat.{field}: expected a list"
            ))),
            Err(e) => Err(self.err(format!("cannot create message: googlechat.{field}: {e}"))),
        }
    }

    /// The body notifications-engine sends (`googleChatNotificationToMessage`), with a random
    /// `cardId` per V2 card as Go's `uuid.New()`.
    pub fn body(&self, n: &Notification) -> Result<Value, Error> {
        let s = n.services.get("googlechat");
        let cards = self.list(s, "cards")?;
        let cards_v2 = self.list(s, "cardsV2")?;
        if cards.is_none() && cards_v2.is_none() {
            return Ok(json!({"text": n.message}));
        }
        let mut m = Map::new();
        m.insert("text".into(), json!(""));
        if let Some(c) = cards.filter(|c| !c.is_empty()) {
            m.insert("cards".into(), Value::Array(c));
        }
        if let Some(c) = cards_v2.filter(|c| !c.is_empty()) {
            let with_ids = c
                .into_iter()
                .map(|card| json!({"cardId": uuid_v4(), "card": card}))
                .collect();
            m.insert("cardsV2".into(), Value::Array(with_ids));
        }
        Ok(Value::Object(m))
    }

    pub async fn send(&self, n: &Notification, dest: &Destination) -> Result<(), Error> {
        let hook = self.webhooks.get(&dest.recipient).ok_or_else(|| {
            self.err(format!(
                "error creating client to webhook: no Google chat webhook configured for recipient {}",
                dest.recipient
            ))
        })?;
        let mut url = url::Url::parse(hook)
            .map_err(|_| self.err("cannot send message: invalid webhook URL".into()))?;
        let thread_key = text_field(n.services.get("googlechat"), "threadKey");
        if !thread_key.is_empty() {
            // Go's `url.Values.Encode`: every parameter, sorted by name.
            let mut q: Vec<(String, String)> = url.query_pairs().into_owned().collect();
            q.push(("threadKey".into(), thread_key));
            q.push((
                "messageReplyOption".into(),
                "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD".into(),
            ));
            q.sort_by(|a, b| a.0.cmp(&b.0));
            url.query_pairs_mut().clear().extend_pairs(q);
        }
        let rb = self
            .http
            .post(url)
            .header("Content-Type", "application/json")
            .body(self.body(n)?.to_string());
        let r = http::send(&self.name, rb).await?;
        let v: Value = serde_json::from_str(&r.body).map_err(|_| {
            self.err(format!(
                "cannot send message: {} answered {} with a body that is not JSON",
                http::host(hook),
                r.status
            ))
        })?;
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            let f = |k: &str| {
                e.get(k)
                    .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
            };
            return Err(self.err(format!(
                "error with message: code={} status={} message={}",
                f("code").unwrap_or_default(),
                f("status").unwrap_or_default(),
                http::excerpt(&f("message").unwrap_or_default())
            )));
        }
        Ok(())
    }
}

/// A random UUID (version 4) from the standard library's hasher seeds, enough for a card id.
fn uuid_v4() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut bytes = [0u8; 16];
    for chunk in bytes.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}
