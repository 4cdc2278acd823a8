//! What the controller remembers of each Application between reconciles: refresh requests
//! seen, automated attempts retried after a failure, the last automation skip reported, and
//! which Applications exist.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Instant;

/// Per-Application memory, keyed by `namespace/name`.
#[derive(Default)]
pub(crate) struct AppMemory {
    /// When the watcher last saw a refresh requested for each Application (the refresh
    /// annotation set or changed): a Git listing begun since answers it.
    refresh_seen: Mutex<HashMap<String, Instant>>,
    /// Automated attempts started again after a failure: Application → (revision, count).
    auto_failures: Mutex<HashMap<String, (String, u32)>>,
    /// The last automation skip reported per Application (so each is said once).
    last_skip: Mutex<HashMap<String, String>>,
    /// Keys of the Applications reconciled, kept by the Application watcher.
    pub(crate) known_apps: Mutex<BTreeSet<String>>,
}

impl AppMemory {
    /// The watcher saw a refresh of `name` requested.
    pub(crate) fn refresh_asked(&self, name: &str) {
        self.refresh_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), Instant::now());
    }

    /// Drops the refresh request seen for a deleted Application.
    pub(crate) fn forget_refresh(&self, name: &str) {
        self.refresh_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// When a refresh of `name` was asked for, if the watcher saw one.
    pub(crate) fn refresh_asked_at(&self, name: &str) -> Option<Instant> {
        self.refresh_seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied()
    }

    /// Failed automated attempts started again for `revision` (0 after a revision change).
    pub(crate) fn auto_failures(&self, name: &str, revision: &str) -> u32 {
        let mut m = self.auto_failures.lock().unwrap_or_else(|e| e.into_inner());
        match m.get(name) {
            Some((rev, n)) if rev == revision => *n,
            _ => {
                m.insert(name.to_string(), (revision.to_string(), 0));
                0
            }
        }
    }

    pub(crate) fn count_auto_failure(&self, name: &str) {
        if let Some((_, n)) = self
            .auto_failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(name)
        {
            *n += 1;
        }
    }

    /// Drops what automation remembers of a deleted Application.
    pub(crate) fn forget_automation(&self, name: &str) {
        self.auto_failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        self.last_skip
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }

    /// Records a skip message; returns whether it is new for this Application.
    pub(crate) fn note_skip(&self, name: &str, message: &str) -> bool {
        let mut m = self.last_skip.lock().unwrap_or_else(|e| e.into_inner());
        if m.get(name).map(String::as_str) == Some(message) {
            return false;
        }
        m.insert(name.to_string(), message.to_string());
        true
    }
}
