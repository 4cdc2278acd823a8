//! What the watches have seen of sets and Applications: the fingerprints that decide whether
//! a change queues a reconcile, and which sets have a clusters generator.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// The sets seen: key → (fingerprint of what triggers a reconcile, has a clusters generator).
#[derive(Default)]
pub(crate) struct Known {
    sets: Mutex<BTreeMap<String, (u64, bool)>>,
    apps: Mutex<HashMap<String, u64>>,
}

impl Known {
    pub(crate) fn sets(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (u64, bool)>> {
        self.sets.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn apps(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.apps.lock().unwrap_or_else(|e| e.into_inner())
    }
}
