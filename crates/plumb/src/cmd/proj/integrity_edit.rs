//! The edits of `plumb proj source-integrity git policies add|update|delete` (Argo's
//! `cmd/argocd/commands/project_source_integrity.go`), made on a project's JSON: policies are
//! named by their position in `spec.sourceIntegrity.git.policies` (the ID `list` shows), keys are
//! stored as Argo stores them (a fingerprint as its 16-digit key ID).

use anyhow::{Result, anyhow, bail};
use clap::Args;
use plumb_model::application::{
    SourceIntegrity, SourceIntegrityGit, SourceIntegrityGitPolicy, SourceIntegrityGitPolicyGpg,
    SourceIntegrityGitPolicyRepo,
};
use serde_json::Value;

use super::update::Change;

/// Argo's error when a project has no Git policy.
pub fn no_policies(project: &str) -> anyhow::Error {
    anyhow!("no source integrity git policies defined for project {project:?}")
}

/// `plumb proj source-integrity git policies add PROJECT`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Project name.
    pub project: String,
    /// Repository URL pattern (can be repeated)
    #[arg(long = "repo-url", value_delimiter = ',')]
    pub repo_urls: Vec<String>,
    /// GPG verification mode (strict, head, or none)
    #[arg(long, default_value = "")]
    pub gpg_mode: String,
    /// GPG key ID (can be repeated)
    #[arg(long = "gpg-key", value_delimiter = ',')]
    pub gpg_keys: Vec<String>,
}

/// `plumb proj source-integrity git policies update PROJECT POLICY_ID`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Project name.
    pub project: String,
    /// Policy ID (from `list`).
    pub policy_id: String,
    /// Set GPG verification mode (strict, head, or none)
    #[arg(long, default_value = "")]
    pub gpg_mode: String,
    /// Set repository URL pattern (replaces existing)
    #[arg(long = "repo-url", value_delimiter = ',')]
    pub repo_urls: Vec<String>,
    /// Add repository URL pattern
    #[arg(long = "add-repo-url", value_delimiter = ',')]
    pub add_repo_urls: Vec<String>,
    /// Delete repository URL pattern
    #[arg(long = "delete-repo-url", value_delimiter = ',')]
    pub delete_repo_urls: Vec<String>,
    /// Set GPG key ID (replaces existing)
    #[arg(long = "gpg-key", value_delimiter = ',')]
    pub gpg_keys: Vec<String>,
    /// Add GPG key ID
    #[arg(long = "add-gpg-key", value_delimiter = ',')]
    pub add_gpg_keys: Vec<String>,
    /// Delete GPG key ID
    #[arg(long = "delete-gpg-key", value_delimiter = ',')]
    pub delete_gpg_keys: Vec<String>,
    /// Skip explicit confirmation
    #[arg(short = 'y', long)]
    pub yes: bool,
}

/// The project's source integrity, as written.
pub fn read(project: &Value) -> Result<Option<SourceIntegrity>> {
    match project.pointer("/spec/sourceIntegrity") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| anyhow!("reading spec.sourceIntegrity: {e}")),
    }
}

fn write(project: &mut Value, si: Option<SourceIntegrity>) -> Result<()> {
    let spec = &mut project["spec"];
    if !spec.is_object() {
        *spec = Value::Object(serde_json::Map::new());
    }
    let Value::Object(spec) = spec else {
        bail!("the project's spec is not an object");
    };
    match si {
        Some(si) => spec.insert("sourceIntegrity".into(), serde_json::to_value(si)?),
        None => spec.remove("sourceIntegrity"),
    };
    Ok(())
}

/// The Git policies, or Argo's error when there are none.
pub fn policies(project: &Value, name: &str) -> Result<Vec<SourceIntegrityGitPolicy>> {
    match read(project)?.and_then(|si| si.git) {
        Some(git) if !git.policies.is_empty() => Ok(git.policies),
        _ => Err(no_policies(name)),
    }
}

/// Argo's `validateGpgMode`.
fn gpg_mode(mode: &str) -> Result<String> {
    match mode {
        "strict" | "head" | "none" => Ok(mode.to_string()),
        "" => bail!("gpg-mode must be set"),
        _ => bail!("gpg-mode must be one of: strict, head, none"),
    }
}

/// A key as Argo stores it (`sourceintegrity.KeyID`), or Argo's error (which names the key it
/// could not read as `''`, the value its code holds by then).
fn key_id(key: &str) -> Result<String> {
    plumb_source::key_id(key).map_err(|e| anyhow!("invalid GPG key ID '': {e}"))
}

/// A policy ID of `count` policies, or Argo's error.
pub fn policy_index(id: &str, count: usize) -> Result<usize> {
    let index: i64 = id
        .parse()
        .map_err(|_| anyhow!("invalid POLICY_ID '{id}'"))?;
    if index < 0 || index as usize >= count {
        bail!(
            "the POLICY_ID {index} is out of range (0-{})",
            count as i64 - 1
        );
    }
    Ok(index as usize)
}

/// Appends the policy `a` describes.
pub fn add(project: &mut Value, a: &AddArgs) -> Result<SourceIntegrityGitPolicy> {
    let mode = gpg_mode(&a.gpg_mode)?;
    let keys = a
        .gpg_keys
        .iter()
        .map(|k| key_id(k))
        .collect::<Result<Vec<_>>>()?;
    let policy = SourceIntegrityGitPolicy {
        repos: a
            .repo_urls
            .iter()
            .map(|u| SourceIntegrityGitPolicyRepo { url: u.clone() })
            .collect(),
        gpg: Some(SourceIntegrityGitPolicyGpg { mode, keys }),
    };
    let mut si = read(project)?.unwrap_or_default();
    si.git
        .get_or_insert_with(SourceIntegrityGit::default)
        .policies
        .push(policy.clone());
    write(project, Some(si))?;
    Ok(policy)
}

/// Removes the policies `ids` (already checked), dropping `sourceIntegrity` when none is left
/// (Argo's `cleanupSourceIntegrityIfEmpty`).
pub fn delete(project: &mut Value, ids: &[usize]) -> Result<Change> {
    let mut si = read(project)?.unwrap_or_default();
    let Some(git) = si.git.as_mut() else {
        return Ok(Change::Keep);
    };
    let kept = std::mem::take(&mut git.policies)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !ids.contains(i))
        .map(|(_, p)| p)
        .collect::<Vec<_>>();
    git.policies = kept;
    let empty = git.policies.is_empty();
    write(project, (!empty).then_some(si))?;
    Ok(Change::Write)
}

/// Changes policy `index` as `a` says (Argo's order: repositories, then mode, then keys).
pub fn update(
    project: &mut Value,
    index: usize,
    a: &UpdateArgs,
) -> Result<SourceIntegrityGitPolicy> {
    let editing_keys = !a.delete_gpg_keys.is_empty() || !a.add_gpg_keys.is_empty();
    if !a.gpg_keys.is_empty() && editing_keys {
        bail!("option --gpg-key, cannot be combined with --add-gpg-key or --delete-gpg-key");
    }
    let editing_urls = !a.delete_repo_urls.is_empty() || !a.add_repo_urls.is_empty();
    if !a.repo_urls.is_empty() && editing_urls {
        bail!("option --repo-url, cannot be combined with --add-repo-url or --delete-repo-url");
    }
    let mut si = read(project)?.unwrap_or_default();
    let policy = si
        .git
        .as_mut()
        .and_then(|g| g.policies.get_mut(index))
        .ok_or_else(|| anyhow!("the POLICY_ID {index} is out of range"))?;
    if !a.repo_urls.is_empty() {
        policy.repos = a
            .repo_urls
            .iter()
            .map(|u| SourceIntegrityGitPolicyRepo { url: u.clone() })
            .collect();
    }
    policy
        .repos
        .retain(|r| !a.delete_repo_urls.contains(&r.url));
    for url in &a.add_repo_urls {
        if !policy.repos.iter().any(|r| &r.url == url) {
            policy
                .repos
                .push(SourceIntegrityGitPolicyRepo { url: url.clone() });
        }
    }
    let gpg = policy.gpg.get_or_insert_with(Default::default);
    if !a.gpg_mode.is_empty() {
        gpg.mode = gpg_mode(&a.gpg_mode)?;
    } else if gpg.mode.is_empty() {
        bail!("gpg-mode must be set");
    }
    if !a.gpg_keys.is_empty() {
        gpg.keys = a
            .gpg_keys
            .iter()
            .map(|k| key_id(k))
            .collect::<Result<Vec<_>>>()?;
    }
    let same = |k: &str, key: &str| plumb_source::key_id(k).is_ok_and(|k| k == key);
    for key in &a.delete_gpg_keys {
        let key = key_id(key)?;
        gpg.keys.retain(|k| !same(k, &key));
    }
    for key in &a.add_gpg_keys {
        let key = key_id(key)?;
        if !gpg.keys.iter().any(|k| same(k, &key)) {
            gpg.keys.push(key);
        }
    }
    let updated = policy.clone();
    write(project, Some(si))?;
    Ok(updated)
}

/// Argo's `warnOnProblems`: what makes a policy useless, given the key IDs of the keyring.
pub fn warnings(policy: &SourceIntegrityGitPolicy, keyring: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if policy.repos.is_empty() {
        out.push("Warning: Policy has no repository URLs and will never be used".to_string());
    }
    if let Some(gpg) = &policy.gpg {
        if gpg.keys.is_empty() {
            out.push(
                "Warning: Policy has no GPG keys and will never validate any revision".to_string(),
            );
        } else {
            let mut absent: Vec<&String> =
                gpg.keys.iter().filter(|k| !keyring.contains(k)).collect();
            absent.sort();
            absent.dedup();
            if !absent.is_empty() {
                let names: Vec<&str> = absent.iter().map(|s| s.as_str()).collect();
                out.push(format!(
                    "Warning: Following GPG keys are not in repo-server keyring: {}",
                    names.join(", ")
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FPR: &str = "ABCDEF0123456789ABCDEF014AEE18F83AFDEB23";

    fn add_args(urls: &[&str], mode: &str, keys: &[&str]) -> AddArgs {
        AddArgs {
            project: "p".into(),
            repo_urls: urls.iter().map(|s| s.to_string()).collect(),
            gpg_mode: mode.into(),
            gpg_keys: keys.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn update_args() -> UpdateArgs {
        UpdateArgs {
            project: "p".into(),
            policy_id: "0".into(),
            gpg_mode: String::new(),
            repo_urls: vec![],
            add_repo_urls: vec![],
            delete_repo_urls: vec![],
            gpg_keys: vec![],
            add_gpg_keys: vec![],
            delete_gpg_keys: vec![],
            yes: true,
        }
    }

    #[test]
    fn add_stores_key_ids_and_checks_the_mode() {
        let mut p = json!({"metadata": {"name": "p"}, "spec": {"sourceRepos": ["*"]}});
        assert_eq!(
            policies(&p, "p").unwrap_err().to_string(),
            "no source integrity git policies defined for project \"p\""
        );
        add(
            &mut p,
            &add_args(&["https://github.com/foo/*"], "strict", &[FPR]),
        )
        .unwrap();
        assert_eq!(
            p["spec"]["sourceIntegrity"],
            json!({"git": {"policies": [{"repos": [{"url": "https://github.com/foo/*"}],
                   "gpg": {"mode": "strict", "keys": ["4AEE18F83AFDEB23"]}}]}})
        );
        assert_eq!(p["spec"]["sourceRepos"], json!(["*"]));
        for (mode, err) in [
            ("", "gpg-mode must be set"),
            ("Strict", "gpg-mode must be one of: strict, head, none"),
        ] {
            assert_eq!(
                add(&mut p, &add_args(&[], mode, &[]))
                    .unwrap_err()
                    .to_string(),
                err
            );
        }
        assert_eq!(
            add(&mut p, &add_args(&[], "head", &["D56C4FCF"]))
                .unwrap_err()
                .to_string(),
            "invalid GPG key ID '': 'D56C4FCF' is not a valid GnuPG key ID"
        );
        assert_eq!(policies(&p, "p").unwrap().len(), 1);
    }

    #[test]
    fn update_sets_adds_and_deletes_as_argo() {
        let mut p = json!({"spec": {}});
        add(
            &mut p,
            &add_args(&["a", "b"], "head", &["1111222233334444"]),
        )
        .unwrap();
        let mut a = update_args();
        a.repo_urls = vec!["c".into()];
        a.delete_repo_urls = vec!["a".into()];
        assert!(
            update(&mut p, 0, &a)
                .unwrap_err()
                .to_string()
                .starts_with("option --repo-url")
        );
        let mut a = update_args();
        a.delete_repo_urls = vec!["a".into()];
        a.add_repo_urls = vec!["b".into(), "c".into()];
        a.gpg_mode = "strict".into();
        a.add_gpg_keys = vec![FPR.into(), "1111222233334444".into()];
        let policy = update(&mut p, 0, &a).unwrap();
        let urls: Vec<&str> = policy.repos.iter().map(|r| r.url.as_str()).collect();
        assert_eq!(urls, ["b", "c"]);
        let gpg = policy.gpg.unwrap();
        assert_eq!(gpg.mode, "strict");
        assert_eq!(gpg.keys, ["1111222233334444", "4AEE18F83AFDEB23"]);
        let mut a = update_args();
        a.delete_gpg_keys = vec![FPR.into()];
        let policy = update(&mut p, 0, &a).unwrap();
        assert_eq!(policy.gpg.unwrap().keys, ["1111222233334444"]);
        assert_eq!(policies(&p, "p").unwrap()[0].repos.len(), 2);
    }

    #[test]
    fn delete_by_ids_and_drop_the_field_when_empty() {
        let mut p = json!({"spec": {}});
        for url in ["a", "b", "c"] {
            add(&mut p, &add_args(&[url], "head", &[])).unwrap();
        }
        assert_eq!(
            policy_index("x", 3).unwrap_err().to_string(),
            "invalid POLICY_ID 'x'"
        );
        assert_eq!(
            policy_index("3", 3).unwrap_err().to_string(),
            "the POLICY_ID 3 is out of range (0-2)"
        );
        assert_eq!(
            policy_index("-1", 3).unwrap_err().to_string(),
            "the POLICY_ID -1 is out of range (0-2)"
        );
        delete(&mut p, &[0, 2]).unwrap();
        let left = policies(&p, "p").unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].repos[0].url, "b");
        delete(&mut p, &[0]).unwrap();
        assert!(p["spec"].get("sourceIntegrity").is_none());
    }

    #[test]
    fn warnings_name_what_makes_a_policy_useless() {
        let p: SourceIntegrityGitPolicy = serde_json::from_value(
            json!({"repos": [], "gpg": {"mode": "head", "keys": ["BBBB222233334444", "AAAA222233334444"]}}),
        )
        .unwrap();
        assert_eq!(
            warnings(&p, &["BBBB222233334444".into()]),
            [
                "Warning: Policy has no repository URLs and will never be used",
                "Warning: Following GPG keys are not in repo-server keyring: AAAA222233334444"
            ]
        );
        let no_keys: SourceIntegrityGitPolicy = serde_json::from_value(
            json!({"repos": [{"url": "*"}], "gpg": {"mode": "none", "keys": []}}),
        )
        .unwrap();
        assert_eq!(
            warnings(&no_keys, &[]),
            ["Warning: Policy has no GPG keys and will never validate any revision"]
        );
    }
}
