//! GnuPG's verdicts remembered per signed content, for one set of keys: a `strict` check
//! re-verifies the same history on every render, and a verdict depends only on the signature,
//! the bytes it covers and the keys. Bounded: at most [`MAX_VERDICTS`] entries (then it starts
//! over), keyed by a SHA-256 of the signature and payload, so a commit or tag is never
//! confused with another.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::status::Status;

/// The most verdicts kept for one set of keys.
pub(crate) const MAX_VERDICTS: usize = 100_000;

/// The cache. A new set of keys gets a new, empty one.
#[derive(Debug, Default)]
pub(crate) struct Verdicts {
    known: Mutex<HashMap<[u8; 32], Status>>,
}

/// What a verdict is remembered by.
pub(crate) fn key(signature: &[u8], payload: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((signature.len() as u64).to_le_bytes());
    h.update(signature);
    h.update(payload);
    h.finalize().into()
}

impl Verdicts {
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<Status> {
        self.known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    pub(crate) fn put(&self, key: [u8; 32], status: Status) {
        let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        if known.len() >= MAX_VERDICTS {
            known.clear();
        }
        known.insert(key, status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpg::status::Verdict;

    #[test]
    fn remembers_by_content_and_stays_bounded() {
        let v = Verdicts::default();
        let s = Status {
            verdict: Verdict::Good,
            key_id: "AAAABBBBCCCCDDDD".into(),
            primary_key_id: None,
        };
        let k = key(b"sig", b"payload");
        assert_ne!(k, key(b"sigp", b"ayload"));
        v.put(k, s.clone());
        assert_eq!(v.get(&k), Some(s.clone()));
        for i in 0..MAX_VERDICTS {
            v.put(key(b"x", &i.to_le_bytes()), s.clone());
        }
        assert!(v.known.lock().unwrap().len() <= MAX_VERDICTS);
    }
}
