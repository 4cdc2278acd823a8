//! The live object's `metadata.managedFields`, decoded: which field manager owns which field.
//!
//! Each entry's `fieldsV1` is a trie whose keys are `f:<field>` (a map field), `k:<json>` (a list
//! element named by its key fields, e.g. `k:{"name":"payments-api"}`), `v:<json>` (a set
//! element), `i:<index>` (a list element by position) and `.` (the node itself). Attribution and
//! the `managedFieldsManagers` ignore rule both walk these tries with [`FieldPath`]s.

use serde_json::Value;

use crate::path::{FieldPath, Segment, key_value_text};

/// One managedFields entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedEntry {
    /// Field manager name (`kubectl-client-side-apply`, `plumb-controller`...).
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// When the manager last wrote (RFC 3339), empty when not recorded.
    pub time: String,
    /// `subresource` (`status`, `scale`) when the write went through one.
    pub subresource: String,
    fields: Node,
}

/// A node of a fieldsV1 trie; list keys (`k:{...}`) are parsed once, when the entry is read.
#[derive(Debug, Clone, Default, PartialEq)]
struct Node {
    children: Vec<(Step, Node)>,
}

/// One fieldsV1 key.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// `f:<name>`.
    Field(String),
    /// `k:<json object>`: the element whose key fields have these values (as printed).
    Keyed(Vec<(String, String)>),
    /// `i:<n>`.
    Index(usize),
    /// `v:<json>` and anything unrecognised: matched by its raw text only.
    Other(String),
}

impl Step {
    fn parse(raw: &str) -> Step {
        if let Some(f) = raw.strip_prefix("f:") {
            return Step::Field(f.to_string());
        }
        if let Some(i) = raw.strip_prefix("i:").and_then(|i| i.parse().ok()) {
            return Step::Index(i);
        }
        if let Some(Ok(Value::Object(m))) =
            raw.strip_prefix("k:").map(serde_json::from_str::<Value>)
        {
            return Step::Keyed(
                m.iter()
                    .map(|(k, v)| (k.clone(), key_value_text(v)))
                    .collect(),
            );
        }
        Step::Other(raw.to_string())
    }

    fn raw(&self) -> String {
        match self {
            Step::Field(f) => format!("f:{f}"),
            Step::Index(i) => format!("i:{i}"),
            Step::Keyed(pairs) => {
                let m: serde_json::Map<String, Value> = pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect();
                format!("k:{}", Value::Object(m))
            }
            Step::Other(raw) => raw.clone(),
        }
    }
}

impl Node {
    fn from_json(v: &Value) -> Node {
        let children = v
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| k.as_str() != ".")
                    .map(|(k, v)| (Step::parse(k), Node::from_json(v)))
                    .collect()
            })
            .unwrap_or_default();
        Node { children }
    }

    /// The child that a path segment names, if the trie has it.
    fn child(&self, seg: &Segment) -> Option<&Node> {
        self.children.iter().find_map(|(step, node)| {
            let hit = match (step, seg) {
                (Step::Field(f), Segment::Key(k)) => f == k,
                (Step::Index(i), Segment::Index(j)) => i == j,
                (Step::Keyed(pairs), Segment::Keyed { field, value }) => {
                    pairs.iter().any(|(k, v)| k == field && v == value)
                }
                _ => false,
            };
            hit.then_some(node)
        })
    }

    /// Depth of the longest prefix of `path` present in the trie.
    fn matched_depth(&self, path: &FieldPath) -> usize {
        self.matched(path).0
    }

    /// Depth of the longest prefix of `path` present in the trie, and whether the trie ends
    /// there (a leaf: the manager owns that value whole, as for an atomic list, which
    /// managedFields records as `f:containers: {}` with nothing below).
    fn matched(&self, path: &FieldPath) -> (usize, bool) {
        let mut node = self;
        for (depth, seg) in path.0.iter().enumerate() {
            match node.child(seg) {
                Some(next) => node = next,
                None => return (depth, node.children.is_empty()),
            }
        }
        (path.0.len(), node.children.is_empty())
    }
}

/// How much of the value at a path a manager owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ownership {
    /// Nothing at or below the path.
    None,
    /// Some fields below the path, not the value as a whole.
    Part,
    /// The value whole: the path is a leaf of the manager's trie, or lies inside one (an atomic
    /// list or map, whose elements managedFields does not record).
    Whole,
}

impl ManagedEntry {
    /// How much of the value at `path` this entry owns.
    pub fn ownership(&self, path: &FieldPath) -> Ownership {
        let (depth, leaf) = self.fields.matched(path);
        match (depth == path.0.len(), leaf) {
            (true, true) if depth > 0 => Ownership::Whole,
            (true, _) => Ownership::Part,
            (false, true) if depth > 0 => Ownership::Whole,
            _ => Ownership::None,
        }
    }

    /// Whether this entry owns exactly `path` (the field or the list element itself).
    pub fn owns(&self, path: &FieldPath) -> bool {
        self.fields.matched_depth(path) == path.0.len()
    }

    /// Whether the entry owns a value that contains `path` as a whole: a leaf of its trie on the
    /// way to `path` (an atomic list or map, whose elements managedFields does not record).
    pub fn owns_whole_value_around(&self, path: &FieldPath) -> bool {
        let (depth, leaf) = self.fields.matched(path);
        depth > 0 && depth < path.0.len() && leaf
    }

    /// Every leaf the entry owns, as raw trie keys (used to remove owned fields from objects).
    pub(crate) fn leaves(&self) -> Vec<Vec<String>> {
        fn walk(node: &Node, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
            if node.children.is_empty() {
                if !prefix.is_empty() {
                    out.push(prefix.clone());
                }
                return;
            }
            for (step, child) in &node.children {
                prefix.push(step.raw());
                walk(child, prefix, out);
                prefix.pop();
            }
        }
        let mut out = Vec::new();
        walk(&self.fields, &mut Vec::new(), &mut out);
        out
    }
}

/// Reads `metadata.managedFields` of a live object (entries without `fieldsV1` are skipped).
pub fn managed_entries(live: &Value) -> Vec<ManagedEntry> {
    let Some(list) = live
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let text = |e: &Value, k: &str| {
        e.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    list.iter()
        .filter_map(|e| {
            let fields = e.get("fieldsV1")?;
            Some(ManagedEntry {
                manager: text(e, "manager"),
                operation: text(e, "operation"),
                time: text(e, "time"),
                subresource: text(e, "subresource"),
                fields: Node::from_json(fields),
            })
        })
        .collect()
}

/// The entry that last wrote `path`: the one owning the longest prefix of it (the field itself
/// when it exists in live, else its nearest remaining parent), the most recent on a tie.
/// Returns the entry and whether it owns the exact path.
pub fn last_writer<'a>(
    entries: &'a [ManagedEntry],
    path: &FieldPath,
) -> Option<(&'a ManagedEntry, bool)> {
    let mut best: Option<(&ManagedEntry, usize)> = None;
    for e in entries {
        let depth = e.fields.matched_depth(path);
        if depth == 0 {
            continue;
        }
        best = match best {
            Some((b, d)) if d > depth || (d == depth && b.time >= e.time) => Some((b, d)),
            _ => Some((e, depth)),
        };
    }
    best.map(|(e, d)| (e, d == path.0.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live() -> Value {
        json!({"metadata": {"managedFields": [
            {"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-07-20T10:00:00Z",
             "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                 "k:{\"name\":\"api\"}": {".": {}, "f:image": {}, "f:name": {},
                     "f:securityContext": {".": {}, "f:runAsNonRoot": {}, "f:capabilities": {"f:drop": {}}},
                     "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}}}}}}},
            {"manager": "kubectl-patch", "operation": "Update", "time": "2026-07-20T10:12:03Z",
             "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                 "k:{\"name\":\"api\"}": {"f:securityContext": {"f:allowPrivilegeEscalation": {}}}}}}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
             "time": "2026-07-20T10:00:05Z", "fieldsV1": {"f:status": {"f:replicas": {}}}}
        ]}})
    }

    fn path(parts: &[Segment]) -> FieldPath {
        FieldPath(parts.to_vec())
    }

    fn k(s: &str) -> Segment {
        Segment::Key(s.into())
    }

    fn container() -> Vec<Segment> {
        vec![
            k("spec"),
            k("template"),
            k("spec"),
            k("containers"),
            Segment::Keyed {
                field: "name".into(),
                value: "api".into(),
            },
        ]
    }

    #[test]
    fn exact_owner() {
        let entries = managed_entries(&live());
        let mut p = container();
        p.push(k("image"));
        let (e, exact) = last_writer(&entries, &path(&p)).unwrap();
        assert_eq!(
            (e.manager.as_str(), exact),
            ("kubectl-client-side-apply", true)
        );
        let mut p = container();
        p.extend([
            k("ports"),
            Segment::Keyed {
                field: "containerPort".into(),
                value: "8080".into(),
            },
        ]);
        assert!(entries[0].owns(&path(&p)));
    }

    #[test]
    fn removed_field_goes_to_latest_writer_of_nearest_parent() {
        let entries = managed_entries(&live());
        // runAsNonRoot is owned by client-side apply, but suppose live no longer has a field
        // under securityContext that nobody owns: `seccompProfile`.
        let mut p = container();
        p.extend([k("securityContext"), k("seccompProfile")]);
        let (e, exact) = last_writer(&entries, &path(&p)).unwrap();
        assert_eq!((e.manager.as_str(), exact), ("kubectl-patch", false));
    }

    #[test]
    fn status_subresource_and_leaves() {
        let entries = managed_entries(&live());
        assert_eq!(entries[2].subresource, "status");
        assert_eq!(
            entries[2].leaves(),
            vec![vec!["f:status".to_string(), "f:replicas".to_string()]]
        );
        assert!(last_writer(&entries, &path(&[k("data")])).is_none());
    }
}
