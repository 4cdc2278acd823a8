//! The workers: each reconciles one Application at a time, and the same Application never runs
//! on two at once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::shared::Shared;
use plumb_app::{Error, Result, chain};

type WorkRx = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>;

/// The Applications a worker is reconciling now.
type InFlight = Arc<Mutex<HashSet<String>>>;

/// Starts the workers and hands them the queued Applications until the queue closes.
pub(super) async fn run(
    shared: Arc<Shared>,
    mut queue: mpsc::UnboundedReceiver<String>,
) -> Result<()> {
    let work_tx = spawn_workers(&shared);
    while let Some(name) = queue.recv().await {
        tracing::trace!(app = %name, "dispatch");
        if work_tx.send(name).is_err() {
            break;
        }
    }
    Err(Error::Task("the work queue closed".into()))
}

fn spawn_workers(shared: &Arc<Shared>) -> mpsc::UnboundedSender<String> {
    let in_flight: InFlight = Arc::default();
    let (work_tx, work_rx) = async_channel();
    for _ in 0..shared.config.workers.max(1) {
        tokio::spawn(work(shared.clone(), in_flight.clone(), work_rx.clone()));
    }
    work_tx
}

fn async_channel() -> (mpsc::UnboundedSender<String>, WorkRx) {
    let (tx, rx) = mpsc::unbounded_channel();
    (tx, Arc::new(tokio::sync::Mutex::new(rx)))
}

/// One worker's loop.
async fn work(shared: Arc<Shared>, in_flight: InFlight, work_rx: WorkRx) {
    loop {
        // An Application's key: `namespace/name`.
        let Some(name) = work_rx.lock().await.recv().await else {
            return;
        };
        tracing::trace!(app = %name, "worker took");
        if !claim(&in_flight, &name) {
            // Busy elsewhere: try again shortly (out of the pending set, so the retry is not
            // swallowed by deduplication).
            shared.queue.taken(&name);
            push_later(&shared, name, Duration::from_millis(200));
            continue;
        }
        shared.queue.taken(&name);
        if !shared.owns(&name) {
            // Another replica's: its metrics are that replica's to publish.
            if let Some((ns, n)) = name.split_once('/') {
                shared.metrics.remove_app(ns, n);
            }
            release(&in_flight, &name);
            continue;
        }
        reconcile(&shared, &name).await;
        release(&in_flight, &name);
    }
}

/// Marks an Application as being reconciled; false when another worker has it.
fn claim(in_flight: &InFlight, name: &str) -> bool {
    in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string())
}

fn release(in_flight: &InFlight, name: &str) {
    in_flight
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(name);
}

/// Queues an Application again after `delay`.
fn push_later(shared: &Arc<Shared>, name: String, delay: Duration) {
    let shared = shared.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        shared.queue.push(&name);
    });
}

/// Reconciles one Application; a failure is retried after 5 s.
async fn reconcile(shared: &Arc<Shared>, name: &str) {
    // Requests made for this Application carry its namespace and name.
    let (app_ns, app_name) = name
        .split_once('/')
        .unwrap_or((shared.config.control_namespace.as_str(), name));
    let reconciled = plumb_app::k8s_requests::for_app(
        app_ns,
        app_name,
        "",
        crate::reconcile::reconcile(shared, name),
    )
    .await;
    if let Err(e) = reconciled {
        tracing::warn!(app = %name, "reconcile failed: {}", chain(&e));
        push_later(shared, name.to_string(), Duration::from_secs(5));
    }
}
