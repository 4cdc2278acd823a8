//! What the live cache holds for each object and what its stream yields.

use std::collections::BTreeSet;
use std::sync::Arc;

use plumb_model::{GroupKind, ResourceKey};
use serde_json::Value;

use super::tracking::TrackedBy;

/// What the cache knows about one live object.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveObject {
    /// Identity.
    pub key: ResourceKey,
    /// The version it was watched in (the kind's preferred version).
    pub api_version: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
    /// Owner references.
    pub owners: Vec<OwnerRef>,
    /// The Application tracking it, if any. Objects whose tracking id names another object
    /// (copied annotations) count as untracked here.
    pub tracked_by: Option<TrackedBy>,
    /// The full object as compact JSON, kept only for tracked objects. Text costs about a tenth
    /// of the memory of a parsed `serde_json::Value` (see docs/performance.md).
    pub(crate) body: Option<Arc<str>>,
}

impl LiveObject {
    /// The full object (tracked objects only), parsed from the cached JSON.
    pub fn object(&self) -> Option<Value> {
        // The text was written by serde_json from a decoded object, so it always parses.
        self.body
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
    }

    /// Whether the full object is cached (the object is tracked by an Application).
    pub fn has_object(&self) -> bool {
        self.body.is_some()
    }
}

/// One owner reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    /// Owner's apiVersion.
    pub api_version: String,
    /// Owner's kind.
    pub kind: String,
    /// Owner's name.
    pub name: String,
    /// Owner's uid.
    pub uid: String,
    /// Whether the owner is the managing controller.
    pub controller: bool,
}

/// Which Applications an object change concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppChange {
    /// The object that changed (or was deleted).
    pub key: ResourceKey,
    /// Applications tracking the object (before or after the change): compare again.
    pub managed: BTreeSet<String>,
    /// Applications tracking one of its owners (a ReplicaSet's Pod, ...): resource tree only.
    pub tree: BTreeSet<String>,
}

/// What the live cache stream yields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LiveEvent {
    /// An object changed after its kind's initial list.
    Changed(AppChange),
    /// A kind finished its initial list.
    KindSynced(GroupKind),
    /// Every watched kind finished its initial list: the cache is complete.
    Ready,
}
