//! A cache for server-side results, keyed by (hash of the desired object, live
//! `resourceVersion`): a dry-run only needs repeating when Git or the live object changed. The
//! caller owns the cache (one per application or per cluster) and decides when to clear it.

use std::collections::HashMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::pair::Pair;
use crate::result::DiffResult;

/// What identifies a server-side result.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey {
    /// SHA-256 (hex) of the desired object's canonical JSON (sorted keys).
    pub desired_hash: String,
    /// The live object's `metadata.resourceVersion`.
    pub live_resource_version: String,
}

impl CacheKey {
    /// The key for a pair; `None` when there is no desired or no live object, or live has no
    /// resourceVersion (such pairs are never cached).
    pub fn for_pair(pair: &Pair) -> Option<Self> {
        let desired = pair.desired.as_ref()?;
        let rv = pair
            .live
            .as_ref()?
            .pointer("/metadata/resourceVersion")?
            .as_str()?;
        Some(Self {
            desired_hash: hash_value(desired),
            live_resource_version: rv.to_string(),
        })
    }
}

/// SHA-256 hex of a value's canonical JSON.
pub fn hash_value(v: &Value) -> String {
    let mut hasher = Sha256::new();
    feed(&mut hasher, v);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn feed(h: &mut Sha256, v: &Value) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            h.update(b"{");
            for k in keys {
                h.update(serde_json::to_string(k).unwrap_or_default().as_bytes());
                h.update(b":");
                feed(h, &m[k]);
                h.update(b",");
            }
            h.update(b"}");
        }
        Value::Array(a) => {
            h.update(b"[");
            for e in a {
                feed(h, e);
                h.update(b",");
            }
            h.update(b"]");
        }
        other => h.update(other.to_string().as_bytes()),
    }
}

/// Server-side results by [`CacheKey`].
#[derive(Debug, Default)]
pub struct ServerSideCache {
    entries: HashMap<CacheKey, DiffResult>,
}

impl ServerSideCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached result for `key`.
    pub fn get(&self, key: &CacheKey) -> Option<&DiffResult> {
        self.entries.get(key)
    }

    /// Stores a result.
    pub fn insert(&mut self, key: CacheKey, result: DiffResult) {
        self.entries.insert(key, result);
    }

    /// Drops every entry (a hard refresh).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hash_ignores_key_order() {
        let a: Value = serde_json::from_str(r#"{"a": 1, "b": {"c": [1, 2]}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b": {"c": [1, 2]}, "a": 1}"#).unwrap();
        assert_eq!(hash_value(&a), hash_value(&b));
        assert_ne!(
            hash_value(&a),
            hash_value(&json!({"a": 2, "b": {"c": [1, 2]}}))
        );
    }
}
