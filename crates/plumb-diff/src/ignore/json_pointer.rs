//! RFC 6901 JSON pointers (`/metadata/annotations/a.b~1c`) and removal of the value they name.
//! Removing a path that does not exist is a no-op, as in Argo CD (its JSON-patch `remove`
//! errors are skipped).

use serde_json::Value;

/// Splits a pointer into unescaped tokens (`~1` → `/`, `~0` → `~`). `""` is the whole object.
pub(crate) fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

/// A path step for [`remove_path`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Object key, or array index when the target is an array and the text is a number.
    Token(String),
    /// Array index (from jq paths).
    Index(i64),
}

/// The value at `path`, if any.
pub(crate) fn get_path<'a>(root: &'a Value, path: &[Step]) -> Option<&'a Value> {
    let mut v = root;
    for step in path {
        v = match (v, step) {
            (Value::Object(m), Step::Token(k)) => m.get(k)?,
            (Value::Array(a), step) => a.get(index(a.len(), step)?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// Sets the value at `path`, creating missing objects on the way (list elements must exist);
/// returns whether it was set.
pub(crate) fn set_path(root: &mut Value, path: &[Step], value: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        *root = value;
        return true;
    };
    let mut v = root;
    for step in parents {
        v = match (v, step) {
            (Value::Object(m), Step::Token(k)) => m
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Default::default())),
            (Value::Array(a), step) => match index(a.len(), step) {
                Some(i) => &mut a[i],
                None => return false,
            },
            _ => return false,
        };
    }
    match (v, last) {
        (Value::Object(m), Step::Token(k)) => {
            m.insert(k.clone(), value);
            true
        }
        (Value::Array(a), step) => match index(a.len(), step) {
            Some(i) => {
                a[i] = value;
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// Removes the value at `path`; returns whether something was removed. Containers left empty
/// by the removal are removed too, up the path (Argo removes empty maps and lists after its
/// ignore patches; doing it only along the removed path keeps `{}` vs missing visible
/// elsewhere).
pub(crate) fn remove_path(root: &mut Value, path: &[Step]) -> bool {
    fn go(v: &mut Value, path: &[Step], top: bool) -> bool {
        let Some((first, rest)) = path.split_first() else {
            return false;
        };
        let removed = if rest.is_empty() {
            match (v, first) {
                (Value::Object(m), Step::Token(k)) => m.remove(k).is_some(),
                (Value::Array(a), step) => match index(a.len(), step) {
                    Some(i) => {
                        a.remove(i);
                        true
                    }
                    None => false,
                },
                _ => false,
            }
        } else {
            let child = match (&mut *v, first) {
                (Value::Object(m), Step::Token(k)) => m.get_mut(k),
                (Value::Array(a), step) => match index(a.len(), step) {
                    Some(i) => a.get_mut(i),
                    None => None,
                },
                _ => None,
            };
            let Some(child) = child else { return false };
            let removed = go(child, rest, false);
            let now_empty = match child {
                Value::Object(m) => m.is_empty(),
                Value::Array(a) => a.is_empty(),
                _ => false,
            };
            if removed && now_empty {
                match (v, first) {
                    (Value::Object(m), Step::Token(k)) => {
                        m.remove(k);
                    }
                    (Value::Array(a), step) => {
                        if let Some(i) = index(a.len(), step) {
                            a.remove(i);
                        }
                    }
                    _ => {}
                }
            }
            removed
        };
        let _ = top;
        removed
    }
    if path.is_empty() {
        // The empty pointer names the whole object: nothing is left to compare.
        let had = !root.is_null();
        *root = Value::Null;
        return had;
    }
    go(root, path, true)
}

fn index(len: usize, step: &Step) -> Option<usize> {
    let i = match step {
        Step::Token(t) => t.parse::<usize>().ok()?,
        Step::Index(i) if *i < 0 => usize::try_from(i64::try_from(len).ok()? + i).ok()?,
        Step::Index(i) => usize::try_from(*i).ok()?,
    };
    (i < len).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn steps(p: &str) -> Vec<Step> {
        tokens(p).unwrap().into_iter().map(Step::Token).collect()
    }

    #[test]
    fn escapes() {
        assert_eq!(
            tokens("/metadata/annotations/a.b~1c~0d").unwrap(),
            ["metadata", "annotations", "a.b/c~d"]
        );
        assert_eq!(tokens("").unwrap(), Vec::<String>::new());
        assert!(tokens("no-slash").is_none());
    }

    #[test]
    fn remove_existing_and_missing() {
        let mut v = json!({"spec": {"replicas": 3, "template": {"x": 1}}, "metadata": {"annotations": {"a/b": "1"}}});
        assert!(remove_path(&mut v, &steps("/spec/replicas")));
        assert!(!remove_path(&mut v, &steps("/spec/missing/deeper")));
        assert!(remove_path(&mut v, &steps("/metadata/annotations/a~1b")));
        // The annotations map became empty and went with it; metadata too.
        assert_eq!(v, json!({"spec": {"template": {"x": 1}}}));
    }

    #[test]
    fn remove_array_elements() {
        let mut v = json!({"webhooks": [{"clientConfig": {"caBundle": "x", "url": "u"}}]});
        assert!(remove_path(
            &mut v,
            &steps("/webhooks/0/clientConfig/caBundle")
        ));
        assert!(!remove_path(&mut v, &steps("/webhooks/5/clientConfig")));
        assert_eq!(v, json!({"webhooks": [{"clientConfig": {"url": "u"}}]}));
    }
}
