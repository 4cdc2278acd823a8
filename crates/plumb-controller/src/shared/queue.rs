//! The work queue: Applications waiting for a reconcile, now or after a delay.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// A deduplicating queue: an Application waits at most once; one queued while it is being
/// reconciled is reconciled again afterwards.
#[derive(Clone)]
pub(crate) struct Queue {
    tx: mpsc::UnboundedSender<String>,
    pending: Arc<Mutex<HashSet<String>>>,
    /// The pending delayed reconcile of each Application.
    wakes: Arc<Mutex<HashMap<String, Instant>>>,
}

impl Queue {
    /// A queue feeding `tx`.
    pub(crate) fn new(tx: mpsc::UnboundedSender<String>) -> Self {
        Self {
            tx,
            pending: Arc::new(Mutex::new(HashSet::new())),
            wakes: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    pub(crate) fn push(&self, name: &str) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = p.insert(name.to_string());
        tracing::trace!(app = name, queued = fresh, "push");
        if fresh {
            // The receiver lives as long as the controller; a send error means we are stopping.
            let _ = self.tx.send(name.to_string());
        }
    }

    pub(crate) fn taken(&self, name: &str) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// Reconciles the Application again after `after`. One wake-up per Application is kept
    /// (the earliest): a blocked Application reconciled often does not pile up sleeping tasks.
    pub(crate) fn push_after(&self, name: &str, after: Duration) {
        let at = Instant::now() + after;
        {
            let mut wakes = self.wakes.lock().unwrap_or_else(|e| e.into_inner());
            if wakes
                .get(name)
                .is_some_and(|t| *t <= at && *t > Instant::now())
            {
                return;
            }
            wakes.insert(name.to_string(), at);
        }
        let queue = self.clone();
        let name = name.to_string();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            queue.push(&name);
        });
    }

    /// Drops the pending wake-up of a deleted Application.
    pub(crate) fn forget(&self, name: &str) {
        self.wakes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }
}
