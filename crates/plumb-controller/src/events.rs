//! Kubernetes Events on Applications (`kubectl describe application` shows them), with Argo CD's
//! reasons (`OperationStarted`, `OperationCompleted`, `ResourceUpdated`) and Plumb's own for
//! automation (`SelfHeal`, naming what was reverted and who changed it; `AutoSyncSkipped`).
//!
//! Posted as events.k8s.io/v1 Events directly rather than through kube-runtime's `Recorder`:
//! the `Recorder` aggregates by reason and object but not message, so a second `ResourceUpdated`
//! for the same version of an Application ("Updated health status" right after "Updated sync
//! status") became a repeat of the first, its message lost.
//!
//! Repeats are aggregated: the same reason and message for the same Application, right after
//! the same one was posted, is not posted again within [`REPEAT_WINDOW`] (Kubernetes' own event
//! correlator aggregates over the same span). A different message in between posts again, so
//! each transition is still seen; events that record an occurrence rather than a state (an
//! operation started or completed, a self-heal) are always posted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use plumb_model::application::{Application, SyncStatusCode};

/// Normal or Warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventType {
    Normal,
    Warning,
}

/// How long an identical repeat is not posted again.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(600);
/// Reasons that record an occurrence: each is posted, however often it repeats.
const OCCURRENCES: &[&str] = &["OperationStarted", "OperationCompleted", "SelfHeal"];
/// Remembered (Application, type, reason) entries before old ones are dropped.
const REMEMBERED: usize = 10_000;

/// (Application uid or namespace/name, event type, reason).
type Topic = (String, &'static str, String);

/// Publishes events about Applications; failures are logged, never fatal.
#[derive(Clone)]
pub struct Events {
    client: kube::Client,
    /// `reportingInstance`: the Pod's name, else the controller's.
    instance: String,
    /// (Application uid or namespace/name, type, reason) → the last message posted, and when.
    last: Arc<Mutex<HashMap<Topic, (String, Instant)>>>,
}

impl Events {
    /// Events for a sync or health status that changed from what `app` holds (the status before
    /// the write that recorded them).
    pub(crate) async fn status_changes(
        &self,
        app: &Application,
        sync_code: &str,
        health_code: &str,
    ) {
        let prev_sync = app
            .status
            .as_ref()
            .and_then(|s| s.sync.as_ref())
            .map(|s| s.status);
        if prev_sync.map(|s| s.as_str()) != Some(sync_code) {
            self.normal(
                app,
                "ResourceUpdated",
                format!(
                    "Updated sync status: {} -> {sync_code}",
                    prev_sync.map(SyncStatusCode::as_str).unwrap_or("")
                ),
            )
            .await;
        }
        let prev_health = app
            .status
            .as_ref()
            .and_then(|s| s.health.as_ref())
            .and_then(|h| h.status.clone());
        if prev_health.as_deref() != Some(health_code) {
            self.normal(
                app,
                "ResourceUpdated",
                format!(
                    "Updated health status: {} -> {health_code}",
                    prev_health.unwrap_or_default()
                ),
            )
            .await;
        }
    }

    /// A publisher reporting as `plumb-controller`.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            instance: std::env::var("POD_NAME")
                .unwrap_or_else(|_| plumb_model::FIELD_MANAGER.to_string()),
            last: Arc::default(),
        }
    }

    /// A normal event.
    pub async fn normal(&self, app: &Application, reason: &str, note: String) {
        self.publish(app, EventType::Normal, reason, note).await;
    }

    /// A warning event.
    pub async fn warning(&self, app: &Application, reason: &str, note: String) {
        self.publish(app, EventType::Warning, reason, note).await;
    }

    /// Whether `note` repeats the last message of this reason for this Application within the
    /// window; records it otherwise.
    fn is_repeat(&self, app: &Application, type_: EventType, reason: &str, note: &str) -> bool {
        if OCCURRENCES.contains(&reason) {
            return false;
        }
        let who =
            meta_str(app, "uid").unwrap_or_else(|| format!("{}/{}", app.namespace(), app.name()));
        let key = (who, type_.as_str(), reason.to_string());
        let now = Instant::now();
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last
            .get(&key)
            .is_some_and(|(n, at)| n == note && now.duration_since(*at) < REPEAT_WINDOW)
        {
            return true;
        }
        if last.len() >= REMEMBERED {
            last.retain(|_, (_, at)| now.duration_since(*at) < REPEAT_WINDOW);
            if last.len() >= REMEMBERED {
                last.clear();
            }
        }
        last.insert(key, (note.to_string(), now));
        false
    }

    async fn publish(&self, app: &Application, type_: EventType, reason: &str, note: String) {
        if self.is_repeat(app, type_, reason, &note) {
            tracing::debug!(
                app = app.name(),
                reason,
                "event repeated within the window; not posted"
            );
            return;
        }
        let reference = ObjectReference {
            api_version: Some(plumb_model::application::API_VERSION.to_string()),
            kind: Some("Application".to_string()),
            name: Some(app.name().to_string()),
            namespace: Some(app.namespace().to_string()),
            uid: meta_str(app, "uid"),
            resource_version: meta_str(app, "resourceVersion"),
            ..ObjectReference::default()
        };
        let now = jiff::Timestamp::now();
        let namespace = app.namespace().to_string();
        let ev = Event {
            metadata: ObjectMeta {
                // As kube-runtime names them; the Application's name shortened so the whole
                // stays a valid object name.
                name: Some(format!(
                    "{}.{:x}",
                    app.name().chars().take(230).collect::<String>(),
                    now.as_nanosecond()
                )),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(type_.as_str().to_string()),
            reason: Some(reason.to_string()),
            action: Some(reason.to_string()),
            note: Some(note),
            regarding: Some(reference),
            reporting_controller: Some(plumb_model::FIELD_MANAGER.to_string()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        tracing::debug!(app = app.name(), reason, "event");
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        if let Err(e) = api.create(&PostParams::default(), &ev).await {
            tracing::warn!(app = app.name(), reason, "publishing an event failed: {e}");
        }
    }
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

fn meta_str(app: &Application, field: &str) -> Option<String> {
    app.metadata
        .other
        .get(field)
        .and_then(|v| v.as_str())
        .map(str::to_string)
}
