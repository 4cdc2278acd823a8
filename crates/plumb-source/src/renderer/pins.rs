//! Which manifest cache keys each owner (an Application) points at, so that manifests nobody
//! points at any more leave memory.

use std::collections::HashMap;

/// Which cache keys each owner points at.
#[derive(Default)]
pub(super) struct Pins {
    by_owner: HashMap<String, Vec<String>>,
    count: HashMap<String, usize>,
}

impl Pins {
    /// Records the cache keys `owner` now points at (none: the owner is gone) and returns the
    /// keys nobody points at any more.
    pub(super) fn repin(&mut self, owner: &str, keys: Vec<String>) -> Vec<String> {
        for k in &keys {
            *self.count.entry(k.clone()).or_default() += 1;
        }
        let old = if keys.is_empty() {
            self.by_owner.remove(owner).unwrap_or_default()
        } else {
            self.by_owner
                .insert(owner.to_owned(), keys)
                .unwrap_or_default()
        };
        let mut unpinned = Vec::new();
        for k in old {
            let left = self.count.get_mut(&k).map(|n| {
                *n = n.saturating_sub(1);
                *n
            });
            if left == Some(0) {
                self.count.remove(&k);
                unpinned.push(k);
            }
        }
        unpinned
    }
}
