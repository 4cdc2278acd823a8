//! The user's kubeconfig as `argocd cluster add` reads it: which file, the `cluster` and
//! `user` entries of a context, file references read as `*-data`, and Argo's table of contexts
//! (`PrintKubeContexts`) when no context is named.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::cmd::app::ConnArgs;
use crate::output::tabwriter::Table;

/// The kubeconfig file the CLI reads (`--kubeconfig`, the first of `$KUBECONFIG`, `~/.kube/config`).
pub fn path(conn: &ConnArgs) -> Result<PathBuf> {
    if let Some(p) = &conn.kubeconfig {
        return Ok(p.clone());
    }
    if let Some(k) = std::env::var_os("KUBECONFIG").filter(|k| !k.is_empty())
        && let Some(first) = std::env::split_paths(&k).next()
    {
        return Ok(first);
    }
    let home = std::env::var_os("HOME").context("no --kubeconfig, KUBECONFIG or HOME")?;
    Ok(PathBuf::from(home).join(".kube/config"))
}

fn read(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(
        plumb_yaml::read_documents(&text, &path.display().to_string())?
            .into_iter()
            .next()
            .map(|d| d.value)
            .unwrap_or(Value::Null),
    )
}

fn named<'a>(doc: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    doc[list]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == name)
}

/// The `cluster` and `user` entries a kubeconfig context names.
pub fn context_entries(path: &Path, context: &str) -> Result<(Value, Value)> {
    let doc = read(path)?;
    let ctx = named(&doc, "contexts", context)
        .with_context(|| format!("context {context} does not exist in kubeconfig"))?;
    let cluster = named(
        &doc,
        "clusters",
        ctx["context"]["cluster"].as_str().unwrap_or_default(),
    )
    .map(|c| c["cluster"].clone())
    .with_context(|| format!("the cluster of context {context} is not in the kubeconfig"))?;
    let user = named(
        &doc,
        "users",
        ctx["context"]["user"].as_str().unwrap_or_default(),
    )
    .map(|u| u["user"].clone())
    .unwrap_or(Value::Null);
    Ok((cluster, user))
}

/// Argo's `PrintKubeContexts`: `CURRENT NAME CLUSTER SERVER`, by name.
pub fn contexts_table(path: &Path) -> String {
    let doc = read(path).unwrap_or(Value::Null);
    let current = doc["current-context"].as_str().unwrap_or_default();
    let mut rows: Vec<[String; 4]> = doc["contexts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let name = c["name"].as_str()?;
            let cluster = c["context"]["cluster"].as_str()?;
            let server = named(&doc, "clusters", cluster)?["cluster"]["server"].as_str()?;
            let mark = if name == current { "*" } else { " " };
            Some([mark.into(), name.into(), cluster.into(), server.into()])
        })
        .collect();
    rows.sort_by(|a, b| a[1].cmp(&b[1]));
    let mut t = Table::with(0, 2);
    t.line("CURRENT\tNAME\tCLUSTER\tSERVER");
    for r in &rows {
        t.row(&[r[0].as_str(), r[1].as_str(), r[2].as_str(), r[3].as_str()]);
    }
    t.render()
}

/// A kubeconfig `*-data` field, or the file its `*` twin names (relative to the kubeconfig),
/// base64 as the cluster Secret holds it.
pub fn data_or_file(entry: &Value, data: &str, file: &str, base: &Path) -> Result<Option<String>> {
    if let Some(d) = entry[data].as_str().filter(|d| !d.is_empty()) {
        return Ok(Some(d.to_string()));
    }
    match entry[file].as_str().filter(|f| !f.is_empty()) {
        Some(f) => {
            let path = base.join(f);
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            Ok(Some(STANDARD.encode(bytes)))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_listed_as_argo_lists_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            "current-context: b\nclusters:\n- name: c1\n  cluster: {server: 'https://one:6443'}\ncontexts:\n- name: b\n  context: {cluster: c1, user: u}\n- name: a\n  context: {cluster: c1, user: u}\n- name: broken\n  context: {cluster: nosuch, user: u}\n",
        )
        .unwrap();
        assert_eq!(
            contexts_table(&path),
            "CURRENT  NAME  CLUSTER  SERVER\n         a     c1       https://one:6443\n*        b     c1       https://one:6443\n"
        );
        let e = context_entries(&path, "nosuch").unwrap_err().to_string();
        assert_eq!(e, "context nosuch does not exist in kubeconfig");
        std::fs::write(dir.path().join("ca.crt"), b"CA").unwrap();
        let entry = serde_json::json!({"certificate-authority": "ca.crt"});
        let ca = data_or_file(
            &entry,
            "certificate-authority-data",
            "certificate-authority",
            dir.path(),
        );
        assert_eq!(ca.unwrap().as_deref(), Some("Q0E="));
    }
}
