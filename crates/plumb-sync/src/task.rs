//! The input of a sync (one [`SyncTask`] per compared resource) and the selection of a selective
//! sync.

use plumb_model::ResourceKey;
use plumb_model::application::SyncOperationResource;
use serde_json::Value;

/// A compared resource the sync may touch: a desired object to apply (an ordinary object or a
/// hook), or a tracked live object Git no longer declares (to prune).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncTask {
    /// Identity (the name is empty for a `generateName` hook).
    pub key: ResourceKey,
    /// API version (for the result record).
    pub version: String,
    /// What Git declares (with the tracking annotation); `None` for an object to prune.
    pub desired: Option<Value>,
    /// What the cluster holds; `None` when it does not exist yet.
    pub live: Option<Value>,
    /// Whether the comparison found it out of sync (used by `ApplyOutOfSyncOnly`).
    pub out_of_sync: bool,
    /// Another Application that tracks the live object (used by `FailOnSharedResource`).
    pub shared_with: Option<String>,
}

impl SyncTask {
    /// Whether this task deletes an object Git no longer declares.
    pub fn is_prune(&self) -> bool {
        self.desired.is_none()
    }
}

/// Which resources a selective sync (`--resource`) touches; empty selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskSelection {
    resources: Vec<SyncOperationResource>,
}

impl TaskSelection {
    /// A selection from the operation's `resources` list.
    pub fn new(resources: Vec<SyncOperationResource>) -> Self {
        Self { resources }
    }

    /// Whether nothing was selected explicitly (a full sync).
    pub fn is_all(&self) -> bool {
        self.resources.is_empty()
    }

    /// Whether a resource is part of this sync. The namespace of a selector may be omitted.
    pub fn selects(&self, key: &ResourceKey) -> bool {
        self.is_all()
            || self.resources.iter().any(|r| {
                r.group.as_deref().unwrap_or_default() == key.group
                    && r.kind == key.kind
                    && r.name == key.name
                    && r.namespace
                        .as_deref()
                        .is_none_or(|ns| ns.is_empty() || ns == key.namespace)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_matches_group_kind_name_and_optional_namespace() {
        let sel = TaskSelection::new(vec![SyncOperationResource {
            group: Some("apps".into()),
            kind: "Deployment".into(),
            name: "api".into(),
            namespace: None,
        }]);
        assert!(sel.selects(&ResourceKey::new("apps", "Deployment", "shop", "api")));
        assert!(!sel.selects(&ResourceKey::new("", "Service", "shop", "api")));
        assert!(TaskSelection::default().selects(&ResourceKey::new("", "Service", "shop", "api")));
    }
}
