//! `plumb proj set PROJECT --flags`: Argo's `argocd proj set`. Every flag given replaces its
//! field of the spec (the same flags as `create`); the rest of the project is left as it is.

use anyhow::{Context, Result, bail};
use clap::Args;
use plumb_model::application::AppProjectSpec;
use serde_json::Value;

use super::ProjClient;
use super::create::{SpecFlags, apply_flags};
use super::update::Change;
use crate::exit::Outcome;

/// `plumb proj set`.
#[derive(Debug, Args)]
pub struct SetArgs {
    /// Project name.
    pub project: String,
    /// The spec's fields.
    #[command(flatten)]
    pub flags: SpecFlags,
}

impl SpecFlags {
    /// Whether any flag was given (Argo counts the flags visited).
    pub fn given(&self) -> bool {
        self.description.is_some()
            || !self.dests.is_empty()
            || !self.srcs.is_empty()
            || !self.signature_keys.is_empty()
            || self.orphaned_resources.is_some()
            || self.orphaned_resources_warn.is_some()
            || !self.allow_cluster_resources.is_empty()
            || !self.deny_cluster_resources.is_empty()
            || !self.allow_namespaced_resources.is_empty()
            || !self.deny_namespaced_resources.is_empty()
            || !self.source_namespaces.is_empty()
            || !self.dest_service_accounts.is_empty()
    }
}

/// Applies the flags to the spec's JSON: the fields they change are written from Plumb's model,
/// the others (including those Plumb does not model) are left untouched.
pub fn set_spec(project: &mut Value, flags: &SpecFlags) -> Result<Change> {
    let spec_json = project.get("spec").cloned().unwrap_or(Value::Null);
    let before: AppProjectSpec = if spec_json.is_null() {
        AppProjectSpec::default()
    } else {
        serde_json::from_value(spec_json).context("reading the AppProject's spec")?
    };
    let mut after = before.clone();
    apply_flags(&mut after, flags)?;
    let (before, after) = (
        serde_json::to_value(&before)?,
        serde_json::to_value(&after)?,
    );
    let spec = &mut project["spec"];
    if !spec.is_object() {
        *spec = Value::Object(serde_json::Map::new());
    }
    let keys: std::collections::BTreeSet<&String> = before
        .as_object()
        .into_iter()
        .chain(after.as_object())
        .flat_map(|m| m.keys())
        .collect();
    for key in keys {
        if before.get(key) != after.get(key) {
            match after.get(key) {
                Some(v) => spec[key] = v.clone(),
                None => {
                    if let Some(m) = spec.as_object_mut() {
                        m.remove(key);
                    }
                }
            }
        }
    }
    Ok(Change::Write)
}

/// Runs `plumb proj set`.
pub async fn run(client: &ProjClient, args: SetArgs) -> Result<Outcome> {
    if !args.flags.given() {
        bail!("Please set at least one option to update");
    }
    client
        .update(&args.project, |p| set_spec(p, &args.flags))
        .await?;
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SetArgs,
    }

    #[test]
    fn flags_parse_and_replace_only_their_fields() {
        let cli =
            Cli::try_parse_from(["set", "p", "--description", "d", "-s", "https://a"]).unwrap();
        assert!(cli.args.flags.given());
        let mut project = json!({"metadata": {"name": "p"}, "spec": {
            "sourceRepos": ["https://old"], "sourceIntegrity": {"git": {}}, "destinations": [{"server": "s", "namespace": "n"}]
        }});
        set_spec(&mut project, &cli.args.flags).unwrap();
        assert_eq!(project["spec"]["sourceRepos"], json!(["https://a"]));
        assert_eq!(project["spec"]["description"], json!("d"));
        assert_eq!(project["spec"]["sourceIntegrity"], json!({"git": {}}));
        assert_eq!(
            project["spec"]["destinations"],
            json!([{"server": "s", "namespace": "n"}])
        );
        let cli = Cli::try_parse_from(["set", "p"]).unwrap();
        assert!(!cli.args.flags.given());
    }
}
