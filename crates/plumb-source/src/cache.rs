//! Rendered manifests by cache key: a bounded in-memory LRU in front of one JSON file per key.
//!
//! The key (built by the renderer) hashes repository, commit SHA, path, the source parameters and
//! the tool versions, so an entry never goes stale: a new commit or a changed parameter is a new
//! key. Disk entries are written to a temporary file and renamed, so readers never see half a file.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::manifest::Manifest;

pub(crate) struct ManifestCache {
    dir: Option<PathBuf>,
    max_memory_bytes: usize,
    inner: Mutex<Lru>,
}

#[derive(Default)]
struct Lru {
    entries: HashMap<String, Entry>,
    /// Last use → key; the first entry is the least recently used.
    order: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
}

struct Entry {
    manifests: Arc<Vec<Manifest>>,
    size: usize,
    used: u64,
}

impl ManifestCache {
    pub(crate) fn new(dir: Option<PathBuf>, max_memory_bytes: usize) -> Self {
        Self {
            dir,
            max_memory_bytes,
            inner: Mutex::new(Lru::default()),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<Arc<Vec<Manifest>>> {
        if let Ok(mut lru) = self.inner.lock()
            && let Some(hit) = lru.touch(key)
        {
            return Some(hit);
        }
        let path = self.dir.as_ref()?.join(format!("{key}.json"));
        let bytes = std::fs::read(&path).ok()?;
        let manifests: Vec<Manifest> = match serde_json::from_slice(&bytes) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring unreadable manifest cache entry");
                return None;
            }
        };
        let manifests = Arc::new(manifests);
        self.remember(key, Arc::clone(&manifests), bytes.len());
        Some(manifests)
    }

    pub(crate) fn put(&self, key: &str, manifests: Arc<Vec<Manifest>>) {
        let bytes = serde_json::to_vec(manifests.as_ref()).unwrap_or_default();
        if let Some(dir) = &self.dir {
            let write = || -> std::io::Result<()> {
                std::fs::create_dir_all(dir)?;
                let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
                std::io::Write::write_all(&mut tmp, &bytes)?;
                tmp.persist(dir.join(format!("{key}.json")))
                    .map_err(|e| e.error)?;
                Ok(())
            };
            if let Err(e) = write() {
                tracing::warn!(dir = %dir.display(), error = %e, "could not write manifest cache entry");
            }
        }
        self.remember(key, manifests, bytes.len());
    }

    fn remember(&self, key: &str, manifests: Arc<Vec<Manifest>>, size: usize) {
        if size > self.max_memory_bytes {
            return;
        }
        let Ok(mut lru) = self.inner.lock() else {
            return;
        };
        lru.tick += 1;
        let used = lru.tick;
        if let Some(old) = lru.entries.insert(
            key.to_owned(),
            Entry {
                manifests,
                size,
                used,
            },
        ) {
            lru.order.remove(&old.used);
            lru.bytes -= old.size;
        }
        lru.order.insert(used, key.to_owned());
        lru.bytes += size;
        while lru.bytes > self.max_memory_bytes {
            let Some((_, oldest)) = lru.order.pop_first() else {
                break;
            };
            if let Some(e) = lru.entries.remove(&oldest) {
                lru.bytes -= e.size;
            }
        }
    }

    #[cfg(test)]
    fn memory_keys(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|l| l.order.values().cloned().collect())
            .unwrap_or_default()
    }
}

impl Lru {
    fn touch(&mut self, key: &str) -> Option<Arc<Vec<Manifest>>> {
        self.tick += 1;
        let tick = self.tick;
        let entry = self.entries.get_mut(key)?;
        self.order.remove(&entry.used);
        entry.used = tick;
        self.order.insert(tick, key.to_owned());
        Some(Arc::clone(&entry.manifests))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str) -> Arc<Vec<Manifest>> {
        Arc::new(vec![Manifest {
            object: serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
            file: "a.yaml".into(),
            index: 0,
            line: 1,
        }])
    }

    #[test]
    fn memory_is_bounded_least_recently_used_first_and_disk_refills_it() {
        let dir = tempfile::tempdir().unwrap();
        let one = serde_json::to_vec(m("a").as_ref()).unwrap().len();
        let cache = ManifestCache::new(Some(dir.path().to_path_buf()), one * 2);
        cache.put("k1", m("a"));
        cache.put("k2", m("b"));
        assert!(cache.get("k1").is_some()); // k1 is now the most recent
        cache.put("k3", m("c"));
        assert_eq!(cache.memory_keys(), ["k1", "k3"]);
        // k2 left memory but not disk.
        assert_eq!(cache.get("k2").unwrap()[0].object["metadata"]["name"], "b");
        assert_eq!(cache.memory_keys(), ["k3", "k2"]);
        assert!(cache.get("missing").is_none());
    }
}
