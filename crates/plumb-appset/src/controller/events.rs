//! Kubernetes Events on ApplicationSets, with Argo's reasons and messages: `created` /
//! `updated` (`created Application "x"`, controller-runtime's operation results) and `Deleted`;
//! plus a Warning carrying the reason and message of an `ErrorOccurred` condition when it
//! appears (Argo only writes the condition; `kubectl describe` then shows why).

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use plumb_model::applicationset::ApplicationSet;

/// Posts events; failures are logged, never fatal.
#[derive(Clone)]
pub(crate) struct Events {
    recorder: Recorder,
}

impl Events {
    pub(crate) fn new(client: kube::Client) -> Self {
        let instance = std::env::var("POD_NAME")
            .or_else(|_| std::env::var("HOSTNAME"))
            .ok();
        let reporter = Reporter {
            controller: "plumb-applicationset-controller".to_string(),
            instance,
        };
        Self {
            recorder: Recorder::new(client, reporter),
        }
    }

    pub(crate) async fn normal(&self, set: &ApplicationSet, reason: &str, note: String) {
        self.post(set, EventType::Normal, reason, note).await;
    }

    pub(crate) async fn warning(&self, set: &ApplicationSet, reason: &str, note: String) {
        self.post(set, EventType::Warning, reason, note).await;
    }

    async fn post(&self, set: &ApplicationSet, type_: EventType, reason: &str, note: String) {
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
        if let Err(e) = self.recorder.publish(&event, &reference).await {
            tracing::warn!(set = %set.name(), "posting event {reason}: {e}");
        }
    }
}
