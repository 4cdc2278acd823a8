//! Warning Events on Applications for failed deliveries and abandoned evaluations, posted in
//! the background (never on the reconcile path) and dropped beyond a queue bound.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::DynamicObject;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tokio::sync::mpsc;

const QUEUE: usize = 1024;

#[derive(Clone)]
pub(super) struct Events {
    tx: mpsc::Sender<(ObjectReference, Event)>,
}

impl Events {
    pub(super) fn new(client: kube::Client) -> Self {
        let reporter = Reporter {
            controller: "plumb-notifications-controller".to_string(),
            instance: std::env::var("POD_NAME")
                .or_else(|_| std::env::var("HOSTNAME"))
                .ok(),
        };
        let (tx, mut rx) = mpsc::channel::<(ObjectReference, Event)>(QUEUE);
        let recorder = Recorder::new(client, reporter);
        tokio::spawn(async move {
            while let Some((reference, event)) = rx.recv().await {
                if let Err(e) = recorder.publish(&event, &reference).await {
                    tracing::warn!("posting event {}: {e}", event.reason);
                }
            }
        });
        Self { tx }
    }

    pub(super) fn warning(&self, app: &DynamicObject, reason: &str, note: String) {
        let reference = ObjectReference {
            api_version: Some("argoproj.io/v1alpha1".into()),
            kind: Some("Application".into()),
            name: app.metadata.name.clone(),
            namespace: app.metadata.namespace.clone(),
            uid: app.metadata.uid.clone(),
            ..ObjectReference::default()
        };
        // The Event note is limited to 1 KiB by the API server.
        let note: String = note.chars().take(1000).collect();
        let event = Event {
            type_: EventType::Warning,
            reason: reason.to_string(),
            note: Some(note),
            action: "Notify".to_string(),
            secondary: None,
        };
        if self.tx.try_send((reference, event)).is_err() {
            tracing::warn!("event {reason} dropped: too many events waiting");
        }
    }
}
