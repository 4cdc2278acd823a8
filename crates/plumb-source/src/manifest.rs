//! One desired object and where it came from.

use plumb_model::ResourceKey;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// A rendered Kubernetes object with its origin, for error messages and `plumb render`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The object as rendered (`apiVersion`, `kind`, `metadata`, ...).
    pub object: Value,
    /// Where it came from: a file relative to the repository root, or for tool output the
    /// template file the tool named (`# Source:` for Helm) or `kustomize build <path>`.
    pub file: String,
    /// 0-based position of the document in that file or stream.
    pub index: usize,
    /// 1-based line of the document's first content line (0 when unknown, as for Jsonnet).
    pub line: usize,
}

impl Manifest {
    /// The object's identity (group/Kind/namespace/name).
    pub fn key(&self) -> ResourceKey {
        let s = |p: &str| {
            self.object
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let api_version = s("/apiVersion");
        ResourceKey::new(
            plumb_model::group_of(&api_version),
            s("/kind"),
            s("/metadata/namespace"),
            s("/metadata/name"),
        )
    }

    /// Where the object came from, as `file:line` (or `file#index` when the line is unknown).
    pub fn origin(&self) -> String {
        if self.line > 0 {
            format!("{}:{}", self.file, self.line)
        } else {
            format!("{}#{}", self.file, self.index)
        }
    }
}

/// Turns a YAML/JSON stream into manifests: documents read as kubectl reads them, `List` kinds
/// flattened, empty documents skipped, and every object checked to be a Kubernetes object.
pub(crate) fn from_stream(
    text: &str,
    file: &str,
    source_for: impl Fn(usize) -> Option<String>,
) -> Result<Vec<Manifest>> {
    let docs = plumb_yaml::read_documents(text, file).map_err(|source| Error::Yaml {
        file: file.to_owned(),
        source,
    })?;
    let docs = plumb_yaml::flatten_lists(docs);
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        if doc.value.is_null() {
            continue;
        }
        let origin = source_for(doc.line).unwrap_or_else(|| file.to_owned());
        out.push(checked(doc.value, origin, doc.index, doc.line)?);
    }
    Ok(out)
}

/// The objects of an operation's `sync.manifests` (what `argocd app sync --local` / `plumb app
/// sync --local` sends: one YAML or JSON document per entry, rendered on the user's machine),
/// read as rendered output is read; each is named `operation.sync.manifests[i]` in errors.
///
/// ```
/// let objs = plumb_source::local_manifests(&[
///     r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}"#.to_string(),
/// ])?;
/// assert_eq!(objs[0].key().name, "a");
/// assert!(plumb_source::local_manifests(&["kind: ConfigMap".to_string()]).is_err());
/// # Ok::<(), plumb_source::Error>(())
/// ```
pub fn local_manifests(manifests: &[String]) -> Result<Vec<Manifest>> {
    let mut out = Vec::with_capacity(manifests.len());
    for (i, text) in manifests.iter().enumerate() {
        let file = format!("operation.sync.manifests[{i}]");
        out.extend(from_stream(text, &file, |_| None)?);
    }
    Ok(out)
}

/// Checks that `value` is a Kubernetes object (a mapping with string `apiVersion` and `kind`).
pub(crate) fn checked(value: Value, file: String, index: usize, line: usize) -> Result<Manifest> {
    let invalid = |detail: &str| Error::InvalidManifest {
        file: file.clone(),
        line,
        detail: detail.to_owned(),
    };
    let Some(obj) = value.as_object() else {
        return Err(invalid(
            "document is not a mapping (expected a Kubernetes object)",
        ));
    };
    for field in ["apiVersion", "kind"] {
        match obj.get(field) {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(_) => return Err(invalid(&format!("{field}: expected a non-empty string"))),
            None => {
                return Err(invalid(&format!(
                    "Object '{}' is missing",
                    if field == "kind" { "Kind" } else { field }
                )));
            }
        }
    }
    Ok(Manifest {
        object: value,
        file,
        index,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lists_skips_empty_documents_and_names_bad_ones() {
        let text = "---\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: ns}\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: b}\n";
        let m = from_stream(text, "apps/list.yaml", |_| None).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].key().to_string(), "/ConfigMap/ns/a");
        assert_eq!(m[1].key().to_string(), "apps/Deployment//b");
        assert_eq!(m[0].file, "apps/list.yaml");

        let err = from_stream(
            "apiVersion: v1\nkind: ConfigMap\n---\nmetadata: {name: x}\n",
            "a.yaml",
            |_| None,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid manifest a.yaml:4: Object 'apiVersion' is missing"
        );
    }

    #[test]
    fn duplicate_keys_are_read_as_argo_cd_reads_them() {
        // sigs.k8s.io/yaml and kubectl keep the last value (plumb-yaml logs a warning naming
        // file, line and key).
        let m = from_stream(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
            "dup.yaml",
            |_| None,
        )
        .unwrap();
        assert_eq!(m[0].key().to_string(), "/ConfigMap//b");
    }
}
