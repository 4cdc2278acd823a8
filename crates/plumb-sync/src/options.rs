//! Sync options (`spec.syncPolicy.syncOptions`, the operation's `syncOptions`, and the
//! `argocd.argoproj.io/sync-options` annotation on an object), as Argo CD spells them.

use serde_json::Value;

use plumb_model::annotations::SYNC_OPTIONS;

/// The sync options Plumb understands; unknown options are kept but ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncOptions {
    options: Vec<(String, String)>,
}

impl SyncOptions {
    /// Parses `Name=value` strings (later entries win).
    pub fn parse<'a>(items: impl IntoIterator<Item = &'a str>) -> Self {
        let mut options = Vec::new();
        for item in items {
            for part in item.split(',') {
                let part = part.trim();
                if part.is_empty() {
                    continue;
                }
                let (k, v) = part.split_once('=').unwrap_or((part, "true"));
                options.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        Self { options }
    }

    /// Options from an object's `argocd.argoproj.io/sync-options` annotation.
    pub fn of_object(obj: &Value) -> Self {
        let ann = obj
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(SYNC_OPTIONS))
            .and_then(Value::as_str)
            .unwrap_or_default();
        Self::parse([ann])
    }

    /// The value of one option, the last one given winning.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `name=true` (case-insensitive value) was given.
    pub fn is_true(&self, name: &str) -> bool {
        self.get(name)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// Options of `self` overridden by those of `other`.
    pub fn merged(&self, other: &SyncOptions) -> SyncOptions {
        let mut options = self.options.clone();
        options.extend(other.options.iter().cloned());
        SyncOptions { options }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_lists_and_last_wins() {
        let o = SyncOptions::parse([
            "CreateNamespace=true",
            "Prune=false,PruneLast=true",
            "Prune=confirm",
        ]);
        assert!(o.is_true("CreateNamespace"));
        assert_eq!(o.get("Prune"), Some("confirm"));
        assert!(o.is_true("PruneLast"));
        assert_eq!(o.get("Replace"), None);
    }

    #[test]
    fn reads_the_object_annotation() {
        let obj = json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-options": "Prune=false, ServerSideApply=true"}}});
        let o = SyncOptions::of_object(&obj);
        assert_eq!(o.get("Prune"), Some("false"));
        assert!(o.is_true("ServerSideApply"));
    }
}
