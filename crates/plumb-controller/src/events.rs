//! Kubernetes Events on Applications (`kubectl describe application` shows them), with Argo CD's
//! reasons (`OperationStarted`, `OperationCompleted`, `ResourceUpdated`) and Plumb's own for
//! automation (`SelfHeal`, naming what was reverted and who changed it; `AutoSyncSkipped`).

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use plumb_model::application::Application;

/// Publishes events about Applications; failures are logged, never fatal.
#[derive(Clone)]
pub struct Events {
    recorder: Recorder,
}

impl Events {
    /// A publisher reporting as `plumb-controller`.
    pub fn new(client: kube::Client) -> Self {
        let reporter = Reporter {
            controller: plumb_model::FIELD_MANAGER.to_string(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Self {
            recorder: Recorder::new(client, reporter),
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

    async fn publish(&self, app: &Application, type_: EventType, reason: &str, note: String) {
        let reference = ObjectReference {
            api_version: Some(plumb_model::application::API_VERSION.to_string()),
            kind: Some("Application".to_string()),
            name: Some(app.name().to_string()),
            namespace: Some(app.namespace().to_string()),
            uid: meta_str(app, "uid"),
            resource_version: meta_str(app, "resourceVersion"),
            ..ObjectReference::default()
        };
        let ev = Event {
            type_,
            reason: reason.to_string(),
            note: Some(note),
            action: reason.to_string(),
            secondary: None,
        };
        tracing::debug!(app = app.name(), reason, "event");
        if let Err(e) = self.recorder.publish(&ev, &reference).await {
            tracing::warn!(app = app.name(), reason, "publishing an event failed: {e}");
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
