//! The operations running in this process: the channel that controls each, when a reconcile
//! last wrote the status of an Application whose operation runs here, and the operation
//! processors' permits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plumb_sync::Control;
use tokio::sync::watch;

/// The least time between two status writes by reconciles while this process runs the
/// Application's operation ([`Operations::pace_status`]).
pub(crate) const STATUS_PACE: Duration = Duration::from_secs(5);

/// The operations running here.
pub(crate) struct Operations {
    /// Each running operation, with the channel that tells it to stop.
    running: Mutex<HashMap<String, watch::Sender<Control>>>,
    /// While this process runs an Application's operation: when its status was last written by
    /// a reconcile (or the operation began applying). See [`Operations::pace_status`].
    status_paced: Mutex<HashMap<String, Instant>>,
    /// One permit per operation processor: an operation holds one while it runs.
    pub(crate) slots: Arc<tokio::sync::Semaphore>,
}

impl Operations {
    /// Room for `processors` operations applying at once (at least one).
    pub(crate) fn new(processors: usize) -> Self {
        Self {
            running: Mutex::new(HashMap::new()),
            status_paced: Mutex::new(HashMap::new()),
            slots: Arc::new(tokio::sync::Semaphore::new(processors.max(1))),
        }
    }

    pub(crate) fn is_running(&self, name: &str) -> bool {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(name)
    }

    /// Registers a starting operation; its control follows the Application from now on.
    pub(crate) fn start(&self, name: &str) -> watch::Receiver<Control> {
        let (tx, rx) = watch::channel(Control::default());
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), tx);
        rx
    }

    pub(crate) fn end(&self, name: &str) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.status_paced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// The operation of `name` begins (or began again) to apply: reconciles' status writes are
    /// paced from now on.
    pub(crate) fn applying(&self, name: &str) {
        self.status_paced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), Instant::now());
    }

    /// How long a reconcile of `name`, whose operation this process runs, should wait before it
    /// compares at all (`None`: now). While the sync applies, each object it writes wakes a
    /// reconcile; comparing then would only find a status it may not write yet, and would
    /// dry-run objects whose apply answer has not arrived (the watch is often faster).
    pub(crate) fn status_wait(&self, name: &str) -> Option<Duration> {
        let now = Instant::now();
        self.status_paced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(|last| *last + STATUS_PACE)
            .filter(|at| *at > now)
            .map(|at| at - now)
    }

    /// Whether a reconcile may write the status of `name`, whose operation this process runs,
    /// now (`None`, and the write is counted) or only after the returned wait. While a sync
    /// applies, every object it writes wakes a reconcile whose status differs from the last by
    /// one object; the operation writes its own progress and, at its end, the status with its
    /// result, so the reconciles' intermediate states are written at most once per
    /// [`STATUS_PACE`] (issue #17: about four Application writes per app of a cold start).
    pub(crate) fn pace_status(&self, name: &str) -> Option<Duration> {
        let now = Instant::now();
        let mut paced = self.status_paced.lock().unwrap_or_else(|e| e.into_inner());
        match paced.get(name) {
            Some(last) if now < *last + STATUS_PACE => Some(*last + STATUS_PACE - now),
            _ => {
                paced.insert(name.to_string(), now);
                None
            }
        }
    }

    /// Passes terminate requests and deletion approvals to a running operation.
    pub(crate) fn update_control(&self, name: &str, c: Control) {
        if let Some(tx) = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            tx.send_if_modified(|cur| {
                let changed = *cur != c;
                *cur = c;
                changed
            });
        }
    }

    /// Stops every operation running here (this replica lost its Lease: another one now
    /// counts it dead and fails them as interrupted, so they must not go on writing).
    pub(crate) fn terminate_all(&self) {
        for tx in self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            tx.send_if_modified(|c| !std::mem::replace(&mut c.terminate, true));
        }
    }
}
