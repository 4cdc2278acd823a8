//! `plumb proj add-source`, `remove-source`, `add-source-namespace`, `remove-source-namespace`,
//! `add-signature-key`, `remove-signature-key`: Argo's verbs (`cmd/argocd/commands/project.go`).
//! Where Argo prints a note and leaves the project alone (already allowed, not there), so does
//! Plumb, on standard output with exit code 0; where Argo fails, Plumb fails.

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use super::update::{Change, spec_list, text};
use plumb_policy::project::repo_url::normalize;

/// `PROJECT VALUE` (a repository URL, a namespace or a key ID).
#[derive(Debug, Args)]
pub struct ValueArgs {
    /// Project name.
    pub project: String,
    /// The entry.
    pub value: String,
}

/// Argo's `git.SameURL`: equal once normalized.
fn same_url(a: &str, b: &str) -> bool {
    let (a, b) = (normalize(a), normalize(b));
    !a.is_empty() && a == b
}

/// Adds a source repository unless `*` or the same URL is there (a note, then).
pub fn add_source(project: &mut Value, url: &str, note: &mut Option<String>) -> Result<Change> {
    let list = spec_list(project, "sourceRepos");
    for item in list.iter().filter_map(Value::as_str) {
        if item == "*" {
            *note = Some("Source repository '*' already allowed in project".into());
            return Ok(Change::Keep);
        }
        if same_url(item, url) {
            *note = Some(format!(
                "Source repository '{item}' already allowed in project"
            ));
            return Ok(Change::Keep);
        }
    }
    list.push(json!(url));
    Ok(Change::Write)
}

/// Removes a source repository written exactly so (a note when it is not there).
pub fn remove_source(project: &mut Value, url: &str, note: &mut Option<String>) -> Result<Change> {
    let list = spec_list(project, "sourceRepos");
    match list.iter().position(|v| v.as_str() == Some(url)) {
        Some(i) => {
            list.remove(i);
            Ok(Change::Write)
        }
        None => {
            *note = Some(format!(
                "Source repository '{url}' does not exist in project"
            ));
            Ok(Change::Keep)
        }
    }
}

/// Adds a namespace Applications may live in.
pub fn add_source_namespace(
    project: &mut Value,
    namespace: &str,
    note: &mut Option<String>,
) -> Result<Change> {
    let list = spec_list(project, "sourceNamespaces");
    if list
        .iter()
        .any(|v| v.as_str() == Some("*") || v.as_str() == Some(namespace))
    {
        // Argo's text, which names '*' whichever entry matched.
        *note = Some("Source namespace '*' already allowed in project".into());
        return Ok(Change::Keep);
    }
    list.push(json!(namespace));
    Ok(Change::Write)
}

/// Removes a source namespace (never `*`).
pub fn remove_source_namespace(
    project: &mut Value,
    namespace: &str,
    note: &mut Option<String>,
) -> Result<Change> {
    let list = spec_list(project, "sourceNamespaces");
    match list
        .iter()
        .position(|v| v.as_str() == Some(namespace) && namespace != "*")
    {
        Some(i) => {
            list.remove(i);
            Ok(Change::Write)
        }
        None => {
            *note = Some(format!(
                "Source namespace '{namespace}' does not exist in project or cannot be removed"
            ));
            Ok(Change::Keep)
        }
    }
}

/// Argo's `sourceintegrity.KeyID` check: a 16-digit key ID or a 40-digit fingerprint.
pub fn check_key_id(key: &str) -> Result<()> {
    let hex = key.bytes().all(|b| b.is_ascii_hexdigit());
    if !(hex && (key.len() == 16 || key.len() == 40)) {
        bail!("'{key}' is not a valid GnuPG key ID");
    }
    Ok(())
}

/// Adds a GnuPG key ID commits must be signed with.
pub fn add_signature_key(project: &mut Value, key: &str) -> Result<Change> {
    check_key_id(key)?;
    let list = spec_list(project, "signatureKeys");
    if list.iter().any(|k| text(k, "keyID") == key) {
        bail!("Specified signature key is already defined in project");
    }
    list.push(json!({"keyID": key}));
    Ok(Change::Write)
}

/// Removes a GnuPG key ID.
pub fn remove_signature_key(project: &mut Value, key: &str) -> Result<Change> {
    let list = spec_list(project, "signatureKeys");
    let Some(i) = list.iter().position(|k| text(k, "keyID") == key) else {
        bail!("Specified signature key is not configured for project");
    };
    list.remove(i);
    Ok(Change::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_and_namespaces() {
        let mut p = json!({"spec": {"sourceRepos": ["https://github.com/acme/app.git"]}});
        let mut note = None;
        let c = add_source(&mut p, "https://github.com/acme/app", &mut note).unwrap();
        assert_eq!(c, Change::Keep);
        assert_eq!(
            note.take().unwrap(),
            "Source repository 'https://github.com/acme/app.git' already allowed in project"
        );
        add_source(&mut p, "https://github.com/acme/b", &mut note).unwrap();
        assert_eq!(p["spec"]["sourceRepos"].as_array().unwrap().len(), 2);
        remove_source(&mut p, "https://github.com/acme/b", &mut note).unwrap();
        assert_eq!(
            remove_source(&mut p, "https://x", &mut note).unwrap(),
            Change::Keep
        );
        assert_eq!(
            note.take().unwrap(),
            "Source repository 'https://x' does not exist in project"
        );
        add_source_namespace(&mut p, "team-a", &mut note).unwrap();
        assert_eq!(
            add_source_namespace(&mut p, "team-a", &mut note).unwrap(),
            Change::Keep
        );
        assert_eq!(
            remove_source_namespace(&mut p, "team-a", &mut note).unwrap(),
            Change::Write
        );
    }

    #[test]
    fn signature_keys() {
        let mut p = json!({"spec": {}});
        assert!(add_signature_key(&mut p, "nothex").is_err());
        add_signature_key(&mut p, "4AEE18F83AFDEB23").unwrap();
        assert_eq!(
            add_signature_key(&mut p, "4AEE18F83AFDEB23")
                .unwrap_err()
                .to_string(),
            "Specified signature key is already defined in project"
        );
        remove_signature_key(&mut p, "4AEE18F83AFDEB23").unwrap();
        assert_eq!(
            remove_signature_key(&mut p, "4AEE18F83AFDEB23")
                .unwrap_err()
                .to_string(),
            "Specified signature key is not configured for project"
        );
    }
}
