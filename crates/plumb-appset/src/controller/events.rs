//! Kubernetes Events on ApplicationSets, with Argo's reasons and messages: `created` /
//! `updated` (`created Application "x"`, controller-runtime's operation results) and `Deleted`;
//! plus a Warning carrying the reason and message of an `ErrorOccurred` condition when it
//! appears (Argo only writes the condition; `kubectl describe` then shows why).
//!
//! Events are posted by one background task, in the order they were raised, never on the
//! reconcile path: a set creating 1,000 Applications would otherwise wait for 1,000 sequential
//! event writes. Each ApplicationSet gets client-go's spam filter (what Argo's recorder applies):
//! a burst of 25 events, then one per 5 minutes; the rest are dropped, as client-go drops them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tokio::sync::mpsc;

use plumb_model::applicationset::ApplicationSet;

/// client-go's `EventSourceObjectSpamFilter`: burst and refill interval per object.
const BURST: f64 = 25.0;
const REFILL_EVERY: Duration = Duration::from_secs(300);
/// Events waiting to be posted; beyond this they are dropped (never blocking a reconcile).
const QUEUE: usize = 4096;

/// Raises events; posting happens in the background and failures are logged, never fatal.
#[derive(Clone)]
pub(crate) struct Events {
    tx: mpsc::Sender<(ObjectReference, Event)>,
}

impl Events {
    /// The handle and its posting task (spawned here: call within a tokio runtime).
    pub(crate) fn new(client: kube::Client) -> Self {
        let instance = std::env::var("POD_NAME")
            .or_else(|_| std::env::var("HOSTNAME"))
            .ok();
        let reporter = Reporter {
            controller: "plumb-applicationset-controller".to_string(),
            instance,
        };
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(post_all(Recorder::new(client, reporter), rx));
        Self { tx }
    }

    pub(crate) async fn normal(&self, set: &ApplicationSet, reason: &str, note: String) {
        self.raise(set, EventType::Normal, reason, note);
    }

    pub(crate) async fn warning(&self, set: &ApplicationSet, reason: &str, note: String) {
        self.raise(set, EventType::Warning, reason, note);
    }

    fn raise(&self, set: &ApplicationSet, type_: EventType, reason: &str, note: String) {
        let reference = ObjectReference {
            api_version: Some(super::owner::API_VERSION.to_string()),
            kind: Some("ApplicationSet".to_string()),
            name: Some(set.name().to_string()),
            namespace: Some(set.namespace().to_string()),
            uid: set
                .metadata
                .other
                .get("uid")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            ..ObjectReference::default()
        };
        let event = Event {
            type_,
            reason: reason.to_string(),
            note: Some(note),
            action: reason.to_string(),
            secondary: None,
        };
        if self.tx.try_send((reference, event)).is_err() {
            tracing::warn!(set = %set.name(), "event {reason} dropped: too many events waiting");
        }
    }
}

/// Posts queued events in order, each set's filtered by its own bucket.
async fn post_all(recorder: Recorder, mut rx: mpsc::Receiver<(ObjectReference, Event)>) {
    let mut buckets: HashMap<String, Bucket> = HashMap::new();
    while let Some((reference, event)) = rx.recv().await {
        let key = format!(
            "{}/{}/{}",
            reference.namespace.as_deref().unwrap_or_default(),
            reference.name.as_deref().unwrap_or_default(),
            reference.uid.as_deref().unwrap_or_default()
        );
        let now = Instant::now();
        if !buckets
            .entry(key)
            .or_insert_with(|| Bucket::full(now))
            .take(now)
        {
            tracing::debug!(reason = %event.reason, "event dropped by the spam filter");
            continue;
        }
        if let Err(e) = recorder.publish(&event, &reference).await {
            tracing::warn!(
                set = reference.name.as_deref().unwrap_or_default(),
                "posting event {}: {e}",
                event.reason
            );
        }
    }
}

/// A token bucket: `BURST` tokens, one more every `REFILL_EVERY`.
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(now: Instant) -> Self {
        Self {
            tokens: BURST,
            at: now,
        }
    }

    /// Whether an event may go now (and uses a token if so).
    fn take(&mut self, now: Instant) -> bool {
        let refill =
            now.saturating_duration_since(self.at).as_secs_f64() / REFILL_EVERY.as_secs_f64();
        self.tokens = (self.tokens + refill).min(BURST);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_25_then_one_per_five_minutes() {
        let start = Instant::now();
        let mut b = Bucket::full(start);
        assert_eq!((0..40).filter(|_| b.take(start)).count(), 25);
        assert!(!b.take(start + Duration::from_secs(299)));
        assert!(b.take(start + Duration::from_secs(301)));
        assert!(!b.take(start + Duration::from_secs(302)));
        // A long quiet time refills the burst, never beyond it.
        let later = start + Duration::from_secs(3600 * 24);
        assert_eq!((0..40).filter(|_| b.take(later)).count(), 25);
    }
}
