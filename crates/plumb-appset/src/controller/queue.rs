//! The work queue of ApplicationSet keys (`namespace/name`): a key waits at most once, is
//! never reconciled by two workers at once (one that changes while reconciled runs again
//! afterwards), and can be scheduled for later (`requeueAfterSeconds`, error backoff).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

#[derive(Default)]
struct State {
    queued: HashSet<String>,
    active: HashSet<String>,
    dirty: HashSet<String>,
    /// The earliest wake-up scheduled per key.
    scheduled: BTreeMap<String, Instant>,
}

/// The sending side, shared by watchers and workers.
#[derive(Clone)]
pub struct Queue {
    tx: mpsc::UnboundedSender<String>,
    state: Arc<Mutex<State>>,
}

impl Queue {
    /// A queue and its receiving end.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self {
                tx,
                state: Arc::default(),
            },
            rx,
        )
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for `key` to be reconciled.
    pub fn push(&self, key: &str) {
        let mut st = self.state();
        if st.active.contains(key) {
            st.dirty.insert(key.to_string());
            return;
        }
        if st.queued.insert(key.to_string()) {
            // The receiver lives as long as the controller; a send fails only at shutdown.
            let _ = self.tx.send(key.to_string());
        }
    }

    /// Asks for `key` to be reconciled after `delay` (an earlier request wins).
    pub fn push_after(&self, key: &str, delay: Duration) {
        let at = Instant::now() + delay;
        {
            let mut st = self.state();
            match st.scheduled.get(key) {
                Some(existing) if *existing <= at => return,
                _ => {
                    st.scheduled.insert(key.to_string(), at);
                }
            }
        }
        let queue = self.clone();
        let key = key.to_string();
        tokio::spawn(async move {
            tokio::time::sleep_until(at).await;
            let due = {
                let mut st = queue.state();
                if st.scheduled.get(&key) == Some(&at) {
                    st.scheduled.remove(&key);
                    true
                } else {
                    false
                }
            };
            if due {
                queue.push(&key);
            }
        });
    }

    /// A worker takes `key` off the queue: it is active until [`Queue::done`].
    pub fn start(&self, key: &str) -> bool {
        let mut st = self.state();
        st.queued.remove(key);
        st.active.insert(key.to_string())
    }

    /// A worker finished `key`; if it changed meanwhile it is queued again.
    pub fn done(&self, key: &str) {
        let again = {
            let mut st = self.state();
            st.active.remove(key);
            st.dirty.remove(key)
        };
        if again {
            self.push(key);
        }
    }

    /// Drops the wake-ups of a deleted set.
    pub fn forget(&self, key: &str) {
        self.state().scheduled.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn keys_wait_once_and_rerun_after_changes_while_active() {
        let (q, mut rx) = Queue::new();
        q.push("a/x");
        q.push("a/x");
        assert_eq!(rx.recv().await.as_deref(), Some("a/x"));
        assert!(rx.try_recv().is_err());
        assert!(q.start("a/x"));
        q.push("a/x");
        assert!(rx.try_recv().is_err());
        q.done("a/x");
        assert_eq!(rx.recv().await.as_deref(), Some("a/x"));
    }

    #[tokio::test(start_paused = true)]
    async fn later_requests_keep_the_earliest() {
        let (q, mut rx) = Queue::new();
        q.push_after("a/x", Duration::from_secs(10));
        q.push_after("a/x", Duration::from_secs(60));
        tokio::time::sleep(Duration::from_secs(11)).await;
        assert_eq!(rx.recv().await.as_deref(), Some("a/x"));
        q.start("a/x");
        q.done("a/x");
        tokio::time::sleep(Duration::from_secs(100)).await;
        assert!(rx.try_recv().is_err());
    }
}
