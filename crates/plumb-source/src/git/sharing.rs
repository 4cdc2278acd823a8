//! One ref listing and one fetch per repository at a time, shared by every Application on it.
//!
//! A thousand Applications on one repository all ask "where is `main` now?" within a poll wave;
//! each answer costs a round trip to the Git server. Listings are therefore kept per normalised
//! URL for a short time (`Limits::ref_cache_ttl`, a few seconds) and a listing in flight is joined
//! by everyone who asks meanwhile (single flight). A hard refresh asks for a listing that started
//! after it asked; a webhook or refresh annotation invalidates what is kept for the repository.
//! Errors are shared with those waiting on the same flight, never kept.
//!
//! Fetches are coalesced by a per-repository gate: whoever finds a commit missing takes the gate,
//! checks again, and fetches only when it is still missing, so the many renders that need the
//! same new commit wait for one fetch instead of each running their own.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::revision::RemoteRef;
use crate::error::{Error, Result};

/// How many repositories' listings are kept; past it the oldest is dropped.
const MAX_REPOSITORIES: usize = 4096;

/// What a finished listing left: the refs, or the error (rebuilt for each waiter).
type Outcome = std::result::Result<Arc<Vec<RemoteRef>>, SharedError>;

/// A listing error as every waiter receives it.
#[derive(Debug, Clone)]
pub(crate) struct SharedError {
    timeout: Option<Duration>,
    url: String,
    detail: String,
}

impl SharedError {
    fn of(e: &Error, url: &str) -> Self {
        match e {
            Error::FetchTimeout { url, limit } => Self {
                timeout: Some(*limit),
                url: url.clone(),
                detail: String::new(),
            },
            Error::RepositoryUnreachable { url, detail } => Self {
                timeout: None,
                url: url.clone(),
                detail: detail.clone(),
            },
            other => Self {
                timeout: None,
                url: url.to_owned(),
                detail: other.to_string(),
            },
        }
    }

    fn error(&self) -> Error {
        match self.timeout {
            Some(limit) => Error::FetchTimeout {
                url: self.url.clone(),
                limit,
            },
            None => Error::RepositoryUnreachable {
                url: self.url.clone(),
                detail: self.detail.clone(),
            },
        }
    }
}

/// One listing in flight, joined by everyone who needs one that starts no earlier.
struct Flight {
    started: Instant,
    done: Mutex<Option<Outcome>>,
    cond: Condvar,
}

impl Flight {
    fn wait(&self) -> Outcome {
        let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(o) = done.as_ref() {
                return o.clone();
            }
            done = self.cond.wait(done).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn finish(&self, outcome: Outcome) {
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
        self.cond.notify_all();
    }
}

#[derive(Default)]
struct Slot {
    /// The last successful listing and when it started.
    last: Option<(Instant, Arc<Vec<RemoteRef>>)>,
    flight: Option<Arc<Flight>>,
    /// Listings that started before this instant are stale (a refresh asked for newer).
    stale_before: Option<Instant>,
}

/// Ref listings by repository key.
#[derive(Default)]
pub(crate) struct Listings {
    slots: Mutex<HashMap<String, Slot>>,
}

impl Listings {
    /// The refs of the repository `key`, from a listing that started no earlier than
    /// `not_before`: the one kept, the one in flight, or a new one made with `list`.
    pub(crate) fn get(
        &self,
        key: &str,
        url: &str,
        not_before: Instant,
        list: impl FnOnce() -> Result<Vec<RemoteRef>>,
    ) -> Result<Arc<Vec<RemoteRef>>> {
        let flight = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            if !slots.contains_key(key) && slots.len() >= MAX_REPOSITORIES {
                evict_oldest(&mut slots);
            }
            let slot = slots.entry(key.to_owned()).or_default();
            let not_before = slot.stale_before.map_or(not_before, |s| s.max(not_before));
            if let Some((started, refs)) = &slot.last
                && *started >= not_before
            {
                return Ok(Arc::clone(refs));
            }
            if let Some(f) = &slot.flight
                && f.started >= not_before
            {
                let f = Arc::clone(f);
                drop(slots);
                return f.wait().map_err(|e| e.error());
            }
            let f = Arc::new(Flight {
                started: Instant::now(),
                done: Mutex::new(None),
                cond: Condvar::new(),
            });
            slot.flight = Some(Arc::clone(&f));
            f
        };
        let outcome: Outcome = match list() {
            Ok(refs) => Ok(Arc::new(refs)),
            Err(e) => Err(SharedError::of(&e, url)),
        };
        {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            let slot = slots.entry(key.to_owned()).or_default();
            if slot
                .flight
                .as_ref()
                .is_some_and(|f| Arc::ptr_eq(f, &flight))
            {
                slot.flight = None;
            }
            if let Ok(refs) = &outcome
                && slot.last.as_ref().is_none_or(|(t, _)| *t <= flight.started)
            {
                slot.last = Some((flight.started, Arc::clone(refs)));
            }
        }
        flight.finish(outcome.clone());
        outcome.map_err(|e| e.error())
    }

    /// Forgets what is kept for `key`: the next caller lists again (a listing already in
    /// flight that started before now is not joined either).
    pub(crate) fn invalidate(&self, key: &str) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get_mut(key) {
            slot.last = None;
            slot.stale_before = Some(Instant::now());
        }
    }

    /// How many repositories have a slot (for tests of the bound).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots.lock().map(|s| s.len()).unwrap_or_default()
    }
}

fn evict_oldest(slots: &mut HashMap<String, Slot>) {
    let oldest = slots
        .iter()
        .filter(|(_, s)| s.flight.is_none())
        .min_by_key(|(_, s)| s.last.as_ref().map(|(t, _)| *t))
        .map(|(k, _)| k.clone());
    if let Some(k) = oldest {
        slots.remove(&k);
    }
}

/// One gate per key: per repository around "is the commit here? if not, fetch", per cache key
/// around a render.
#[derive(Default)]
pub(crate) struct Gates {
    gates: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl Gates {
    /// Runs `f` holding the gate of `key`.
    pub(crate) fn with<T>(&self, key: &str, f: impl FnOnce() -> T) -> T {
        let gate = {
            let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
            if gates.len() >= MAX_REPOSITORIES {
                // Gates nobody holds can go; a held one is kept by its holder's Arc anyway.
                gates.retain(|_, g| Arc::strong_count(g) > 1);
            }
            Arc::clone(gates.entry(key.to_owned()).or_default())
        };
        let _held = gate.lock().unwrap_or_else(|p| p.into_inner());
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn refs(target: &str) -> Vec<RemoteRef> {
        vec![RemoteRef {
            name: "HEAD".into(),
            target: target.into(),
            symref_target: None,
        }]
    }

    #[test]
    fn concurrent_callers_share_one_listing_and_a_fresh_one_is_kept() {
        let listings = Arc::new(Listings::default());
        let calls = Arc::new(AtomicUsize::new(0));
        let start = Instant::now();
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (listings, calls) = (Arc::clone(&listings), Arc::clone(&calls));
                std::thread::spawn(move || {
                    listings
                        .get("k", "https://git.example.com/a", start, || {
                            calls.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(200));
                            Ok(refs("a"))
                        })
                        .map(|r| r[0].target.clone())
                })
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().unwrap().unwrap(), "a");
        }
        // Every caller started before the first listing began or joined it: at most a listing
        // for those who came after the flight ended and found it kept (none here: it is kept).
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // Kept: a caller content with a listing since `start` lists nothing.
        let again = listings.get("k", "u", start, || panic!("must not list"));
        assert_eq!(again.unwrap()[0].target, "a");
        // A caller who needs a newer listing (hard refresh) gets one.
        let newer = listings.get("k", "u", Instant::now(), || Ok(refs("b")));
        assert_eq!(newer.unwrap()[0].target, "b");
    }

    #[test]
    fn invalidation_forces_a_new_listing_and_errors_are_not_kept() {
        let listings = Listings::default();
        let long_ago = Instant::now();
        listings.get("k", "u", long_ago, || Ok(refs("a"))).unwrap();
        listings.invalidate("k");
        let e = listings
            .get("k", "https://git.example.com/a", long_ago, || {
                Err(Error::RepositoryUnreachable {
                    url: "https://git.example.com/a".into(),
                    detail: "connection refused".into(),
                })
            })
            .unwrap_err();
        assert!(
            matches!(&e, Error::RepositoryUnreachable { detail, .. } if detail == "connection refused"),
            "{e}"
        );
        // The error was not kept: the next caller lists again.
        let ok = listings.get("k", "u", long_ago, || Ok(refs("c"))).unwrap();
        assert_eq!(ok[0].target, "c");
    }

    #[test]
    fn the_number_of_repositories_kept_is_bounded() {
        let listings = Listings::default();
        let t = Instant::now();
        for i in 0..MAX_REPOSITORIES + 10 {
            listings
                .get(&format!("k{i}"), "u", t, || Ok(refs("a")))
                .unwrap();
        }
        assert_eq!(listings.len(), MAX_REPOSITORIES);
    }

    #[test]
    fn a_gate_serialises_fetches_of_one_repository() {
        let gates = Arc::new(Gates::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let max = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (gates, inside, max) =
                    (Arc::clone(&gates), Arc::clone(&inside), Arc::clone(&max));
                std::thread::spawn(move || {
                    gates.with("k", || {
                        let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        max.fetch_max(n, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(10));
                        inside.fetch_sub(1, Ordering::SeqCst);
                    })
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(max.load(Ordering::SeqCst), 1);
    }
}
