//! Rendered manifests by cache key: a bounded in-memory LRU in front of one file per key.
//!
//! The key (built by the renderer) hashes the content the render read (Git object ids of the
//! paths, or the commit), the source parameters and the tool versions, so an entry never goes
//! stale: a change is a new key. Both tiers are bounded by size and evict the least recently used
//! entry first; an entry in memory is compact JSON text (parsed on use), so the bound is close to
//! what it really holds. The renderer also drops an entry from memory as soon as no Application
//! points at it any more ([`ManifestCache::forget`]): an old commit's manifests do not linger.
//!
//! Disk files are untrusted when read back: each starts with a header line giving the format,
//! the body's length and a SHA-256 of the installation's salt and the body; a file whose length or
//! digest differs (cut short, corrupted, or written by someone who cannot read the salt) is
//! removed and the source is rendered again. Files are written to a temporary file (mode 0600)
//! and renamed, in a directory only the controller's user may enter.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::manifest::Manifest;

/// The first word of every cache file's header.
const MAGIC: &str = "plumb-manifests/3";

/// One cached render: the objects, and the commit they were rendered at.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) manifests: Arc<Vec<Manifest>>,
    /// The commit (or chart version) of the render that filled the entry.
    pub(crate) rendered_at: String,
}

pub(crate) struct ManifestCache {
    dir: Option<PathBuf>,
    salt: String,
    max_memory_bytes: usize,
    max_disk_bytes: u64,
    inner: Mutex<Lru>,
    /// Bytes of cache files on disk, as far as this process knows (scanned at start).
    disk_bytes: Mutex<Option<u64>>,
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
    /// The manifests as compact JSON.
    json: Arc<[u8]>,
    rendered_at: String,
    used: u64,
}

impl ManifestCache {
    pub(crate) fn new(
        dir: Option<PathBuf>,
        salt: &str,
        max_memory_bytes: usize,
        max_disk_bytes: u64,
    ) -> Self {
        Self {
            dir,
            salt: salt.to_owned(),
            max_memory_bytes,
            max_disk_bytes,
            inner: Mutex::new(Lru::default()),
            disk_bytes: Mutex::new(None),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<Hit> {
        let in_memory = self.inner.lock().ok().and_then(|mut lru| lru.touch(key));
        if let Some((json, rendered_at)) = in_memory {
            match serde_json::from_slice::<Vec<Manifest>>(&json) {
                Ok(m) => {
                    return Some(Hit {
                        manifests: Arc::new(m),
                        rendered_at,
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "dropping an unreadable in-memory manifest entry");
                    self.forget(key);
                }
            }
        }
        let path = self.dir.as_ref()?.join(format!("{key}.json"));
        let bytes = std::fs::read(&path).ok()?;
        let Some((rendered_at, body)) = self.verify(&bytes) else {
            tracing::warn!(path = %path.display(), "manifest cache file fails its length or digest check: removed, rendering again");
            let _ = std::fs::remove_file(&path);
            return None;
        };
        let manifests: Vec<Manifest> = match serde_json::from_slice(body) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring unreadable manifest cache entry");
                return None;
            }
        };
        // Recently used files are the last evicted from disk.
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        self.remember(key, Arc::from(body), &rendered_at);
        Some(Hit {
            manifests: Arc::new(manifests),
            rendered_at,
        })
    }

    pub(crate) fn put(&self, key: &str, manifests: &[Manifest], rendered_at: &str) {
        let Ok(body) = serde_json::to_vec(manifests) else {
            return;
        };
        if let Some(dir) = &self.dir {
            let file = self.encode(&body, rendered_at);
            let len = file.len() as u64;
            match write(dir, key, &file) {
                Ok(()) => self.account_disk(dir, key, len),
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not write manifest cache entry")
                }
            }
        }
        self.remember(key, Arc::from(body), rendered_at);
    }

    /// Drops `key` from memory (its file stays): no Application points at it any more.
    pub(crate) fn forget(&self, key: &str) {
        if let Ok(mut lru) = self.inner.lock()
            && let Some(e) = lru.entries.remove(key)
        {
            lru.order.remove(&e.used);
            lru.bytes -= e.json.len();
        }
    }

    /// Bytes held in memory.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.inner.lock().map(|l| l.bytes).unwrap_or_default()
    }

    /// `MAGIC <body length> <sha256(salt, rendered_at, body)> <rendered_at>\n<body>`.
    fn encode(&self, body: &[u8], rendered_at: &str) -> Vec<u8> {
        let digest = self.digest(rendered_at, body);
        let mut out = format!("{MAGIC} {} {digest} {rendered_at}\n", body.len()).into_bytes();
        out.extend_from_slice(body);
        out
    }

    fn digest(&self, rendered_at: &str, body: &[u8]) -> String {
        let mut h = Sha256::new();
        h.update(self.salt.as_bytes());
        h.update(b"\n");
        h.update(rendered_at.as_bytes());
        h.update(b"\n");
        h.update(body);
        hex(&h.finalize())
    }

    /// The body of a cache file and the commit it was rendered at, when its header is ours and
    /// its length and digest match.
    fn verify<'a>(&self, file: &'a [u8]) -> Option<(String, &'a [u8])> {
        let nl = file.iter().position(|b| *b == b'\n')?;
        let header = std::str::from_utf8(&file[..nl]).ok()?;
        let body = &file[nl + 1..];
        let mut parts = header.split(' ');
        let (magic, len, digest) = (parts.next()?, parts.next()?, parts.next()?);
        let rendered_at = parts.next().unwrap_or_default().to_owned();
        if magic != MAGIC || parts.next().is_some() || len.parse::<usize>().ok()? != body.len() {
            return None;
        }
        let expected = self.digest(&rendered_at, body);
        // Not a secret comparison: the digest is only meaningful with the salt, which the
        // attacker this defends against cannot read.
        (expected == digest).then_some((rendered_at, body))
    }

    fn remember(&self, key: &str, json: Arc<[u8]>, rendered_at: &str) {
        let size = json.len();
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
                json,
                rendered_at: rendered_at.to_owned(),
                used,
            },
        ) {
            lru.order.remove(&old.used);
            lru.bytes -= old.json.len();
        }
        lru.order.insert(used, key.to_owned());
        lru.bytes += size;
        while lru.bytes > self.max_memory_bytes {
            let Some((_, oldest)) = lru.order.pop_first() else {
                break;
            };
            if let Some(e) = lru.entries.remove(&oldest) {
                lru.bytes -= e.json.len();
            }
        }
    }

    /// Adds a written file to the disk total; past the bound, removes the least recently used
    /// files (by modification time, which a read refreshes) down to 80 % of it.
    fn account_disk(&self, dir: &Path, key: &str, added: u64) {
        let Ok(mut total) = self.disk_bytes.lock() else {
            return;
        };
        let now = match *total {
            Some(t) => t + added,
            None => scan(dir).iter().map(|f| f.1).sum(),
        };
        if now <= self.max_disk_bytes {
            *total = Some(now);
            return;
        }
        let mut files = scan(dir);
        files.sort_by_key(|f| f.2);
        let written = dir.join(format!("{key}.json"));
        let mut left: u64 = files.iter().map(|f| f.1).sum();
        let target = self.max_disk_bytes / 5 * 4;
        for (path, len, _) in files {
            if left <= target {
                break;
            }
            if path != written && std::fs::remove_file(&path).is_ok() {
                left -= len;
            }
        }
        *total = Some(left);
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
    fn touch(&mut self, key: &str) -> Option<(Arc<[u8]>, String)> {
        self.tick += 1;
        let tick = self.tick;
        let entry = self.entries.get_mut(key)?;
        self.order.remove(&entry.used);
        entry.used = tick;
        self.order.insert(tick, key.to_owned());
        Some((Arc::clone(&entry.json), entry.rendered_at.clone()))
    }
}

/// Writes `bytes` as `<dir>/<key>.json` atomically; the directory is made private (0700) and
/// the file is created 0600.
fn write(dir: &Path, key: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if !dir.is_dir() {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(dir.join(format!("{key}.json")))
        .map_err(|e| e.error)?;
    Ok(())
}

/// The cache files of `dir`: path, length, modification time.
fn scan(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((
                e.path(),
                m.len(),
                m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            ))
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str) -> Vec<Manifest> {
        vec![Manifest {
            object: serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
            file: "a.yaml".into(),
            index: 0,
            line: 1,
        }]
    }

    fn name(hit: Option<Hit>) -> String {
        hit.unwrap().manifests[0].object["metadata"]["name"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn memory_is_bounded_least_recently_used_first_and_disk_refills_it() {
        let dir = tempfile::tempdir().unwrap();
        let one = serde_json::to_vec(&m("a")).unwrap().len();
        let cache = ManifestCache::new(Some(dir.path().to_path_buf()), "salt", one * 2, 1 << 20);
        cache.put("k1", &m("a"), "c1");
        cache.put("k2", &m("b"), "c1");
        assert!(cache.get("k1").is_some()); // k1 is now the most recent
        cache.put("k3", &m("c"), "c2");
        assert_eq!(cache.memory_keys(), ["k1", "k3"]);
        // k2 left memory but not disk.
        let hit = cache.get("k2").unwrap();
        assert_eq!(hit.rendered_at, "c1");
        assert_eq!(name(Some(hit)), "b");
        assert_eq!(cache.memory_keys(), ["k3", "k2"]);
        assert!(cache.get("missing").is_none());
        // Forgotten entries leave memory only.
        cache.forget("k3");
        assert_eq!(cache.memory_keys(), ["k2"]);
        assert_eq!(cache.memory_bytes(), one);
        assert_eq!(name(cache.get("k3")), "c");
    }

    #[test]
    fn a_file_that_fails_its_checks_is_removed_and_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let writer = ManifestCache::new(Some(dir.path().to_path_buf()), "salt", 1 << 20, 1 << 20);
        writer.put("k", &m("a"), "c1");
        let path = dir.path().join("k.json");
        let good = std::fs::read(&path).unwrap();
        let fresh = || ManifestCache::new(Some(dir.path().to_path_buf()), "salt", 1 << 20, 1 << 20);
        assert_eq!(name(fresh().get("k")), "a");

        // Cut short, one byte changed, a body swapped with a recomputed length, no header, and
        // a digest made without the salt: each refused and removed.
        let text = String::from_utf8(good.clone()).unwrap();
        let swapped = text.replace("\"a\"", "\"b\"");
        let (header, body) = text.split_once('\n').unwrap();
        let unsalted = {
            let parts: Vec<&str> = header.split(' ').collect();
            let mut h = Sha256::new();
            h.update(b"\nc1\n");
            h.update(body.as_bytes());
            format!(
                "{} {} {} c1\n{body}",
                parts[0],
                parts[1],
                hex(&h.finalize())
            )
        };
        let mut flipped = good.clone();
        let last = flipped.len() - 3;
        flipped[last] ^= 0x20;
        for bad in [
            good[..good.len() - 5].to_vec(),
            flipped,
            swapped.into_bytes(),
            body.as_bytes().to_vec(),
            unsalted.into_bytes(),
        ] {
            std::fs::write(&path, &bad).unwrap();
            assert!(
                fresh().get("k").is_none(),
                "{}",
                String::from_utf8_lossy(&bad)
            );
            assert!(!path.exists());
        }
    }

    #[test]
    fn files_are_private_and_the_disk_is_bounded() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("manifests");
        let size = {
            let probe = ManifestCache::new(None, "salt", 0, 0);
            probe
                .encode(&serde_json::to_vec(&m("k00")).unwrap(), "c")
                .len() as u64
        };
        let cache = ManifestCache::new(Some(dir.clone()), "salt", 0, size * 10);
        for i in 0..25 {
            cache.put(&format!("k{i:02}"), &m(&format!("k{i:02}")), "c");
        }
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("k24.json")), 0o600);
        let total: u64 = scan(&dir).iter().map(|f| f.1).sum();
        assert!(total <= size * 10, "{total} > {}", size * 10);
        // The newest entry is kept.
        assert_eq!(name(cache.get("k24")), "k24");
    }
}
