//! Which lists of built-in kinds are merged by a key (`containers` by `name`, Service `ports` by
//! `port`, ...), loaded from the committed table `data/merge_keys.txt` (derived from the
//! Kubernetes OpenAPI `x-kubernetes-patch-merge-key`; the file says how). Lists not in the table
//! are atomic: compared and replaced as a whole.

use std::collections::HashMap;
use std::sync::OnceLock;

use plumb_model::GroupKind;

const TABLE: &str = include_str!("../data/merge_keys.txt");

/// Merge keys by `group/Kind` (or `*/*`) and path shape (`spec.template.spec.containers[].env`).
#[derive(Debug, Default)]
pub(crate) struct MergeKeys {
    by_kind: HashMap<String, HashMap<String, String>>,
}

impl MergeKeys {
    /// The built-in table.
    pub(crate) fn builtin() -> &'static MergeKeys {
        static TABLE_CELL: OnceLock<MergeKeys> = OnceLock::new();
        TABLE_CELL.get_or_init(|| parse(TABLE))
    }

    /// The merge key of the list at `shape` in an object of kind `gk`, if it has one.
    pub(crate) fn key_for(&self, gk: &GroupKind, shape: &str) -> Option<&str> {
        let kind_key = format!("{}/{}", gk.group, gk.kind);
        self.by_kind
            .get(&kind_key)
            .and_then(|m| m.get(shape))
            .or_else(|| self.by_kind.get("*/*").and_then(|m| m.get(shape)))
            .map(String::as_str)
    }
}

fn parse(text: &str) -> MergeKeys {
    let mut types: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
    let mut placements: Vec<(&str, &str, &str)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["type", ty, path, key] => types.entry(ty).or_default().push((path, key)),
            ["at", kind, prefix, ty] => placements.push((kind, prefix, ty)),
            // The table is compiled in and covered by tests; a malformed line is skipped.
            _ => {}
        }
    }
    let mut by_kind: HashMap<String, HashMap<String, String>> = HashMap::new();
    for (kind, prefix, ty) in placements {
        for (path, key) in types.get(ty).map(Vec::as_slice).unwrap_or_default() {
            let shape = if prefix == "." {
                (*path).to_string()
            } else {
                format!("{prefix}.{path}")
            };
            by_kind
                .entry(kind.to_string())
                .or_default()
                .insert(shape, (*key).to_string());
        }
    }
    MergeKeys { by_kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_spec_lists_in_workloads() {
        let t = MergeKeys::builtin();
        let deploy = GroupKind::new("apps", "Deployment");
        assert_eq!(
            t.key_for(&deploy, "spec.template.spec.containers"),
            Some("name")
        );
        assert_eq!(
            t.key_for(&deploy, "spec.template.spec.containers[].ports"),
            Some("containerPort")
        );
        assert_eq!(
            t.key_for(&deploy, "spec.template.spec.containers[].env"),
            Some("name")
        );
        assert_eq!(
            t.key_for(&deploy, "spec.template.spec.containers[].volumeMounts"),
            Some("mountPath")
        );
        assert_eq!(t.key_for(&deploy, "spec.template.spec.tolerations"), None);
        assert_eq!(t.key_for(&deploy, "metadata.ownerReferences"), Some("uid"));
        let cron = GroupKind::new("batch", "CronJob");
        assert_eq!(
            t.key_for(&cron, "spec.jobTemplate.spec.template.spec.volumes"),
            Some("name")
        );
        let pod = GroupKind::new("", "Pod");
        assert_eq!(t.key_for(&pod, "spec.initContainers[].env"), Some("name"));
        let svc = GroupKind::new("", "Service");
        assert_eq!(t.key_for(&svc, "spec.ports"), Some("port"));
        let hook = GroupKind::new(
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        );
        assert_eq!(t.key_for(&hook, "webhooks"), Some("name"));
        let cr = GroupKind::new("acme.io", "Widget");
        assert_eq!(t.key_for(&cr, "spec.containers"), None);
    }
}
