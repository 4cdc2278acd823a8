//! Server-side diff results of one cluster, reused until the desired or the live object changes:
//! keyed by the diff configuration, the hash of the desired object and the live object's uid and
//! resourceVersion. At most two results per live object and configuration, the newest ones (a
//! result for a version the object has left is not asked for again, but while a sync applies,
//! comparisons from the live cache still see the version before the apply's); bounded in entries and in
//! bytes, the least recently used result going first. A result's objects are kept as JSON text,
//! parsed again when it is used: a parsed `Value` costs several times its text (issue #17, the
//! controller's memory: these results were a third of its heap).
use std::collections::HashMap;
use std::sync::Mutex;

use hashlink::LruCache;
use plumb_diff::{DiffResult, Pair, StatusField};
use serde_json::Value;

/// Entries kept by default: 100,000. The byte bound is the memory guard (a result is about
/// 1.1 KiB of text on bench/scale's fleet); at 20,000, 5,000 Applications × 10 objects did not
/// fit and their comparisons dry-ran again.
pub const DEFAULT_MAX_ENTRIES: usize = 100_000;
/// Bytes kept by default (the JSON text of the objects the results hold): 64 MiB.
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;

/// What a cached result is valid under: the diff configuration (ignore rules, normalizer
/// options, attribution) and whether `status` counts (`resource.compareoptions`
/// `ignoreResourceStatusField`).
#[derive(Debug, Clone, Copy)]
pub struct DiffScope {
    /// Identifies the configuration.
    pub config_id: u64,
    /// How `status` is normalized.
    pub status: StatusField,
}

impl DiffScope {
    fn status_ignored(&self, pair: &Pair) -> bool {
        match self.status {
            StatusField::All => true,
            StatusField::Crd => {
                pair.key.group == "apiextensions.k8s.io"
                    && pair.key.kind == "CustomResourceDefinition"
            }
            _ => false,
        }
    }
}

/// What identifies a result: the same desired object diffed against the same live object under
/// the same configuration gives the same result. Where `status` does not count, the live object
/// is identified by what the diff depends on in it ([`plumb_diff::answer_basis`]: not the
/// status, nor another manager's annotations, labels and managedFields entries, nor the
/// resourceVersion), so a controller writing a Deployment's status or revision annotation does
/// not cost a dry run; otherwise by its resourceVersion.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DiffKey {
    config_id: u64,
    desired_hash: String,
    live_uid: String,
    live_version: String,
}

impl DiffKey {
    fn slot(&self) -> ObjectSlot {
        (self.config_id, self.live_uid.clone())
    }
}

/// A lookup: the key, and the exact live version at hand (its content without `status` where
/// `status` does not count, else its resourceVersion). A result computed against another
/// version under the same key is exact but for what the key leaves out, so it is computed
/// again from the dry run's answer it kept (CPU only, no request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The cache key.
    pub key: DiffKey,
    exact: String,
    status_ignored: bool,
}

impl Probe {
    /// The probe of a pair under `scope`; `None` without a desired or a live object, or a
    /// live object without a resourceVersion (never cached).
    pub fn for_pair(scope: DiffScope, pair: &Pair) -> Option<Self> {
        let live = pair.live.as_ref()?;
        let desired = pair.desired.as_ref()?;
        let key = plumb_diff::CacheKey::for_pair(pair)?;
        let status_ignored = scope.status_ignored(pair);
        let (live_version, exact) = if status_ignored {
            let mut basis = plumb_diff::answer_basis(live, desired);
            if let Some(m) = basis.as_object_mut() {
                m.remove("status");
            }
            (
                format!("basis:{}", plumb_diff::hash_value(&basis)),
                format!("content:{}", plumb_diff::hash_value(&without_status(live))),
            )
        } else {
            let rv = key.live_resource_version;
            (rv.clone(), rv)
        };
        Some(Self {
            key: DiffKey {
                config_id: scope.config_id,
                desired_hash: key.desired_hash,
                live_uid: live
                    .pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                live_version,
            },
            exact,
            status_ignored,
        })
    }
}

/// What the cache holds for a probe.
#[derive(Debug, Clone, PartialEq)]
pub enum Hit {
    /// The result, computed against this very live version.
    Result(Box<DiffResult>),
    /// The dry run's answer a result under the same key was computed from: the diff against
    /// the live version at hand is computed from it again.
    Answer(Value),
}

/// The live object without what a status write changes.
fn without_status(live: &Value) -> Value {
    let mut v = live.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("status");
    }
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
        if let Some(Value::Array(entries)) = meta.get_mut("managedFields") {
            entries.retain(|e| e.get("subresource").and_then(Value::as_str) != Some("status"));
            if entries.is_empty() {
                meta.remove("managedFields");
            }
        }
    }
    v
}

/// A dry run's answer as kept: what the diff reads of it (the status is normalized away where
/// it does not count, and of managedFields only Plumb's entries are read).
fn kept_answer(answer: &Value, status_ignored: bool) -> Box<str> {
    let mut v = answer.clone();
    if status_ignored && let Some(m) = v.as_object_mut() {
        m.remove("status");
    }
    if let Some(Value::Array(entries)) = v.pointer_mut("/metadata/managedFields") {
        entries.retain(|e| {
            e.get("manager").and_then(Value::as_str) == Some(plumb_model::FIELD_MANAGER)
        });
    }
    v.to_string().into_boxed_str()
}

/// A result as kept: its objects as text, the live version it was computed against, the dry
/// run's answer it came from.
struct Entry {
    /// The result without `normalized_live` and `predicted_live`.
    result: DiffResult,
    normalized_live: Option<Box<str>>,
    predicted_live: Option<Box<str>>,
    exact: String,
    answer: Box<str>,
    bytes: usize,
}

impl Entry {
    fn new(mut result: DiffResult, exact: String, answer: Box<str>) -> Self {
        let text = |v: Option<Value>| v.map(|v| v.to_string().into_boxed_str());
        let normalized_live = text(result.normalized_live.take());
        let predicted_live = text(result.predicted_live.take());
        let changes = result
            .changes
            .iter()
            .map(|c| {
                64 + c.live.as_ref().map_or(0, value_size)
                    + c.predicted.as_ref().map_or(0, value_size)
            })
            .sum::<usize>();
        let bytes = 256
            + normalized_live.as_deref().map_or(0, str::len)
            + predicted_live.as_deref().map_or(0, str::len)
            + exact.len()
            + answer.len()
            + changes;
        Self {
            result,
            normalized_live,
            predicted_live,
            exact,
            answer,
            bytes,
        }
    }

    fn hit(&self, exact: &str) -> Option<Hit> {
        if self.exact == exact {
            return Some(Hit::Result(Box::new(self.result())));
        }
        serde_json::from_str(&self.answer).ok().map(Hit::Answer)
    }

    fn result(&self) -> DiffResult {
        // The text was written by serde_json from a `Value`, so it parses back to the same.
        let parse = |t: &Option<Box<str>>| t.as_deref().and_then(|t| serde_json::from_str(t).ok());
        DiffResult {
            normalized_live: parse(&self.normalized_live),
            predicted_live: parse(&self.predicted_live),
            ..self.result.clone()
        }
    }
}

/// The live object a result was computed against, under one configuration.
type ObjectSlot = (u64, String);

struct Inner {
    entries: LruCache<DiffKey, Entry>,
    /// The keys of the results each live object has, the newest first.
    current: HashMap<ObjectSlot, Vec<DiffKey>>,
    bytes: usize,
}

/// Results kept per live object and configuration.
const PER_OBJECT: usize = 2;

impl Inner {
    /// Forgets a result that left the LRU list.
    fn forget(&mut self, key: &DiffKey) {
        let slot = key.slot();
        if let Some(keys) = self.current.get_mut(&slot) {
            keys.retain(|k| k != key);
            if keys.is_empty() {
                self.current.remove(&slot);
            }
        }
    }

    /// Records `key` as its object's newest result; returns the results it pushes out.
    fn newest(&mut self, key: &DiffKey) -> Vec<DiffKey> {
        let keys = self.current.entry(key.slot()).or_default();
        keys.retain(|k| k != key);
        keys.insert(0, key.clone());
        keys.split_off(keys.len().min(PER_OBJECT))
    }
}

/// The bounded cache of server-side results.
pub struct DiffCache {
    inner: Mutex<Inner>,
    max_entries: usize,
    max_bytes: usize,
}

impl Default for DiffCache {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_ENTRIES, DEFAULT_MAX_BYTES)
    }
}

impl DiffCache {
    /// A cache holding at most `max_entries` results and about `max_bytes`.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                entries: LruCache::new_unbounded(),
                current: HashMap::new(),
                bytes: 0,
            }),
            max_entries: max_entries.max(1),
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What is cached for `probe` (marked most recently used).
    pub fn get(&self, probe: &Probe) -> Option<Hit> {
        self.lock()
            .entries
            .get(&probe.key)
            .and_then(|e| e.hit(&probe.exact))
    }

    /// Stores a result, computed from the dry run's `answer`, in place of the live object's
    /// previous one, evicting the least recently used ones beyond the bounds. A result larger
    /// than the whole byte budget is not kept.
    pub fn insert(&self, probe: Probe, result: DiffResult, answer: &Value) {
        let Probe {
            key,
            exact,
            status_ignored,
        } = probe;
        let entry = Entry::new(result, exact, kept_answer(answer, status_ignored));
        if entry.bytes > self.max_bytes {
            return;
        }
        let mut inner = self.lock();
        for old in inner.newest(&key) {
            if let Some(e) = inner.entries.remove(&old) {
                inner.bytes -= e.bytes;
            }
        }
        inner.bytes += entry.bytes;
        if let Some(old) = inner.entries.insert(key, entry) {
            inner.bytes -= old.bytes;
        }
        while inner.entries.len() > self.max_entries || inner.bytes > self.max_bytes {
            let Some((key, e)) = inner.entries.remove_lru() else {
                break;
            };
            inner.bytes -= e.bytes;
            inner.forget(&key);
        }
    }

    /// Number of results held.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no result is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held (the objects' text and an estimate of the rest).
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

/// Answers of recent applies, per object: (hash of the desired object written, the object as
/// stored), until a comparison uses one as its dry run's answer (then the result is in the
/// [`DiffCache`]). Lets a reconcile that runs while a sync is applying (the watch reports each
/// write) skip the dry run of what was just applied. Bounded; the least recent goes first.
pub struct AppliedAnswers {
    /// (hash of the desired object, the stored object as JSON text).
    inner: Mutex<LruCache<plumb_model::ResourceKey, (String, Box<str>)>>,
}

/// Answers kept at most (a few MiB of objects).
pub const APPLIED_ANSWERS_KEPT: usize = 2_000;

impl Default for AppliedAnswers {
    fn default() -> Self {
        Self {
            inner: Mutex::new(LruCache::new(APPLIED_ANSWERS_KEPT)),
        }
    }
}

impl AppliedAnswers {
    /// Records the answer of applying `desired`.
    pub fn insert(&self, key: &plumb_model::ResourceKey, desired: &Value, stored: &Value) {
        let entry = (
            plumb_diff::hash_value(desired),
            stored.to_string().into_boxed_str(),
        );
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), entry);
    }

    /// The answer that predicts a dry run of `desired` against `live`, taken out.
    pub fn take_prediction(
        &self,
        key: &plumb_model::ResourceKey,
        desired: &Value,
        live: &Value,
    ) -> Option<Value> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (hash, text) = inner.get(key)?;
        let stored: Value = serde_json::from_str(text).ok()?;
        if !crate::written::predicts(hash, &stored, desired, live) {
            return None;
        }
        inner.remove(key);
        Some(stored)
    }

    /// Number of answers held.
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn value_size(v: &Value) -> usize {
    match v {
        Value::Null | Value::Bool(_) => 4,
        Value::Number(_) => 8,
        Value::String(s) => s.len() + 2,
        Value::Array(a) => 2 + a.iter().map(|e| value_size(e) + 1).sum::<usize>(),
        Value::Object(m) => {
            2 + m
                .iter()
                .map(|(k, e)| k.len() + 4 + value_size(e))
                .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_diff::{DiffConfig, Strategy};
    use serde_json::json;

    fn pair(name: &str, rv: &str, data: &str) -> Pair {
        let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "web"}, "data": {"k": data}});
        let mut live = desired.clone();
        live["metadata"]["resourceVersion"] = json!(rv);
        live["metadata"]["uid"] = json!(format!("uid-{name}"));
        plumb_diff::pair(
            vec![plumb_diff::SourcedObject {
                value: desired,
                source: "test.yaml".into(),
            }],
            vec![live],
            &plumb_diff::PairOptions::default(),
        )
        .expect("pair")
        .remove(0)
    }

    /// A scope where status counts: keys follow the resourceVersion.
    fn scope(config_id: u64) -> DiffScope {
        DiffScope {
            config_id,
            status: StatusField::None,
        }
    }

    #[test]
    fn a_status_write_keeps_the_result_where_status_does_not_count() {
        let ignored = DiffScope {
            config_id: 1,
            status: StatusField::All,
        };
        let p = pair("a", "1", "x");
        let mut status_written = p.clone();
        let live = status_written.live.as_mut().expect("live");
        live["metadata"]["resourceVersion"] = json!("2");
        live["status"] = json!({"readyReplicas": 1});
        live["metadata"]["managedFields"] = json!([{"manager": "kube-controller-manager",
            "operation": "Update", "subresource": "status", "time": "2026-12-02T02:00:00Z"}]);
        assert_eq!(key(ignored, &p), key(ignored, &status_written));
        assert_ne!(
            key(scope(1), &p),
            key(scope(1), &status_written),
            "where status counts, any new version is diffed again"
        );
        // A change of anything else is a new live object.
        let mut edited = p.clone();
        edited.live.as_mut().expect("live")["data"]["k"] = json!("changed");
        assert_ne!(key(ignored, &p), key(ignored, &edited));
        let mut labelled = p.clone();
        labelled.live.as_mut().expect("live")["metadata"]["labels"] = json!({"team": "a"});
        assert_ne!(key(ignored, &p), key(ignored, &labelled));
    }

    #[test]
    fn an_apply_answer_serves_one_comparison_of_the_same_desired_and_version() {
        let answers = AppliedAnswers::default();
        let p = pair("a", "7", "x");
        let (desired, stored) = (
            p.desired.clone().expect("desired"),
            p.live.clone().expect("live"),
        );
        answers.insert(&p.key, &desired, &stored);
        let mut newer = stored.clone();
        newer["metadata"]["resourceVersion"] = json!("8");
        newer["data"]["k"] = json!("edited");
        assert!(answers.take_prediction(&p.key, &desired, &newer).is_none());
        let mut edited = desired.clone();
        edited["data"]["k"] = json!("y");
        assert!(answers.take_prediction(&p.key, &edited, &stored).is_none());
        assert_eq!(
            answers.take_prediction(&p.key, &desired, &stored),
            Some(stored.clone())
        );
        assert!(
            answers.is_empty(),
            "used once: the diff cache holds the result from then on"
        );
    }

    fn key(scope: DiffScope, p: &Pair) -> Option<DiffKey> {
        Probe::for_pair(scope, p).map(|p| p.key)
    }

    /// The dry run's answer a test result stands for: the live object itself.
    fn answer(p: &Pair) -> Value {
        p.live.clone().expect("live")
    }

    fn result(p: &Pair) -> DiffResult {
        plumb_diff::diff(p, Strategy::ThreeWay, &DiffConfig::default()).expect("diff")
    }

    #[test]
    fn a_result_is_reused_only_for_the_same_desired_live_version_and_configuration() {
        let cache = DiffCache::default();
        let p = pair("a", "1", "x");
        let key = Probe::for_pair(scope(7), &p).expect("key");
        cache.insert(key.clone(), result(&p), &answer(&p));
        assert!(cache.get(&key).is_some());
        let other_rv = Probe::for_pair(scope(7), &pair("a", "2", "x")).expect("key");
        let other_desired = Probe::for_pair(scope(7), &pair("a", "1", "y")).expect("key");
        let other_config = Probe::for_pair(scope(8), &p).expect("key");
        for k in [other_rv, other_desired, other_config] {
            assert!(cache.get(&k).is_none(), "{k:?}");
        }
    }

    #[test]
    fn a_result_comes_back_whole_from_its_text() {
        let cache = DiffCache::default();
        let mut p = pair("a", "1", "x");
        p.desired.as_mut().expect("desired")["data"]["k"] = json!("changed");
        let r = result(&p);
        assert!(r.modified && !r.changes.is_empty());
        let key = Probe::for_pair(scope(1), &p).expect("key");
        cache.insert(key.clone(), r.clone(), &answer(&p));
        assert_eq!(cache.get(&key), Some(Hit::Result(Box::new(r))));
    }

    #[test]
    fn a_live_object_keeps_its_two_newest_results() {
        let cache = DiffCache::default();
        let versions: Vec<(Probe, Pair)> = ["1", "2", "3"]
            .iter()
            .map(|rv| {
                let p = pair("a", rv, "x");
                (Probe::for_pair(scope(1), &p).expect("key"), p)
            })
            .collect();
        cache.insert(
            versions[0].0.clone(),
            result(&versions[0].1),
            &answer(&versions[0].1),
        );
        let one = cache.bytes();
        cache.insert(
            versions[1].0.clone(),
            result(&versions[1].1),
            &answer(&versions[1].1),
        );
        assert!(cache.get(&versions[0].0).is_some(), "the version before");
        cache.insert(
            versions[2].0.clone(),
            result(&versions[2].1),
            &answer(&versions[2].1),
        );
        assert!(
            cache.get(&versions[0].0).is_none(),
            "a version the object left"
        );
        assert!(cache.get(&versions[1].0).is_some() && cache.get(&versions[2].0).is_some());
        assert_eq!((cache.len(), cache.bytes()), (2, 2 * one));
        // A result asked for again becomes the newest: the older of the other two goes.
        cache.insert(
            versions[1].0.clone(),
            result(&versions[1].1),
            &answer(&versions[1].1),
        );
        cache.insert(
            versions[0].0.clone(),
            result(&versions[0].1),
            &answer(&versions[0].1),
        );
        assert!(cache.get(&versions[2].0).is_none());
        assert!(cache.get(&versions[0].0).is_some() && cache.get(&versions[1].0).is_some());
        // Another configuration, or another object, keeps its own.
        let k3 = Probe::for_pair(scope(2), &versions[0].1).expect("key");
        cache.insert(k3.clone(), result(&versions[0].1), &answer(&versions[0].1));
        let other = pair("b", "1", "x");
        cache.insert(
            Probe::for_pair(scope(1), &other).expect("key"),
            result(&other),
            &answer(&other),
        );
        assert_eq!(cache.len(), 4);
    }

    #[test]
    fn the_least_recently_used_result_goes_first_beyond_the_entry_bound() {
        let cache = DiffCache::new(2, DEFAULT_MAX_BYTES);
        let keys: Vec<(Probe, Pair)> = ["a", "b", "c"]
            .iter()
            .map(|n| {
                let p = pair(n, "1", "x");
                (Probe::for_pair(scope(1), &p).expect("key"), p)
            })
            .collect();
        cache.insert(keys[0].0.clone(), result(&keys[0].1), &answer(&keys[0].1));
        cache.insert(keys[1].0.clone(), result(&keys[1].1), &answer(&keys[1].1));
        // `a` used again: `b` is now the least recently used.
        assert!(cache.get(&keys[0].0).is_some());
        cache.insert(keys[2].0.clone(), result(&keys[2].1), &answer(&keys[2].1));
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&keys[0].0).is_some());
        assert!(cache.get(&keys[1].0).is_none());
        assert!(cache.get(&keys[2].0).is_some());
    }

    #[test]
    fn the_byte_bound_holds_and_accounts_replacements() {
        let p = pair("a", "1", "x");
        let probe = Probe::for_pair(scope(1), &p).expect("key");
        let one = Entry::new(
            result(&p),
            probe.exact.clone(),
            kept_answer(&answer(&p), false),
        )
        .bytes;
        let cache = DiffCache::new(100, one * 2 + one / 2);
        for n in ["a", "b", "c", "d"] {
            let p = pair(n, "1", "x");
            cache.insert(
                Probe::for_pair(scope(1), &p).expect("key"),
                result(&p),
                &answer(&p),
            );
            assert!(cache.bytes() <= one * 2 + one / 2, "{}", cache.bytes());
        }
        assert_eq!(cache.len(), 2);
        // The same key again replaces the entry, it does not count twice.
        let p = pair("d", "1", "x");
        cache.insert(
            Probe::for_pair(scope(1), &p).expect("key"),
            result(&p),
            &answer(&p),
        );
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.bytes(), 2 * one);
        let tiny = DiffCache::new(100, 10);
        tiny.insert(
            Probe::for_pair(scope(1), &p).expect("key"),
            result(&p),
            &answer(&p),
        );
        assert!(
            tiny.is_empty(),
            "a result beyond the whole budget is not kept"
        );
    }

    #[test]
    fn another_managers_label_gets_the_diff_again_from_the_kept_answer() {
        let ignored = DiffScope {
            config_id: 1,
            status: StatusField::All,
        };
        let mut p = pair("a", "1", "x");
        p.live.as_mut().expect("live")["metadata"]["managedFields"] = json!([{
            "manager": "plumb-controller", "operation": "Apply", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:k": {}}}}]);
        let cache = DiffCache::default();
        let probe = Probe::for_pair(ignored, &p).expect("key");
        cache.insert(probe.clone(), result(&p), &answer(&p));
        assert!(matches!(cache.get(&probe), Some(Hit::Result(_))));
        // A policy engine labels the object: same key, another version.
        let mut labelled = p.clone();
        let live = labelled.live.as_mut().expect("live");
        live["metadata"]["resourceVersion"] = json!("2");
        live["metadata"]["labels"] = json!({"policy.example.com/scanned": "true"});
        let later = Probe::for_pair(ignored, &labelled).expect("key");
        assert_eq!(later.key, probe.key);
        let Some(Hit::Answer(kept)) = cache.get(&later) else {
            panic!("the kept answer, not the result of another version");
        };
        assert_eq!(kept, answer(&p), "the answer as the dry run gave it");
        // The diff from it against the labelled version: the label is live's, nothing drifts.
        let again = plumb_diff::diff(
            &labelled,
            Strategy::ServerSide {
                predicted_live: &kept,
            },
            &DiffConfig::default(),
        )
        .expect("diff");
        assert!(!again.modified, "{:?}", again.changes);
        assert_eq!(
            again.normalized_live.expect("live")["metadata"]["labels"]["policy.example.com/scanned"],
            "true"
        );
        // A change of a field Plumb owns is another key: a dry run again.
        let mut edited = labelled.clone();
        edited.live.as_mut().expect("live")["data"]["k"] = json!("edited");
        assert!(
            cache
                .get(&Probe::for_pair(ignored, &edited).expect("key"))
                .is_none()
        );
    }
}
