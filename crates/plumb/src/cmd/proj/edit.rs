//! `plumb proj edit PROJECT`: Argo CD's `argocd proj edit` (`NewProjectEditCommand`): the
//! project's spec as YAML in `$EDITOR` (as `plumb app edit`: else `$VISUAL`, else `vi`), then,
//! when the text changed, the new spec is read strictly (one YAML document, no duplicate keys, a
//! valid AppProjectSpec) and written in place of the stored spec by the writer every `proj` verb
//! uses (checked as Argo's API server checks a project, refused when it would make Applications
//! invalid, guarded by resourceVersion; fields Plumb does not model are kept as written).
//! Unchanged or emptied text is Argo's `edit cancelled, no valid changes were saved`; a refused
//! text opens the editor again with the error on top when standard input is a terminal.

use std::io::IsTerminal;

use anyhow::{Context, Result, bail};
use clap::Args;
use plumb_model::application::AppProjectSpec;
use serde_json::Value;

use super::ProjClient;
use super::update::Change;
use crate::cmd::app::edit::{run_editor, strip_comments, temp_file};
use crate::exit::Outcome;

/// `plumb proj edit`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Edit the information on project with name PROJECT\n  plumb proj edit PROJECT"
)]
pub struct EditArgs {
    /// Project name.
    pub project: String,
}

/// Reads an edited spec: one YAML document, a map, no duplicate keys, an AppProjectSpec; the
/// JSON to store (as written, so unmodelled fields are kept).
pub fn parse_spec(text: &str, file: &str) -> Result<Value> {
    let (docs, duplicates) = plumb_yaml::read_documents_reporting(text, file)?;
    if let Some(d) = duplicates.first() {
        bail!("{d}");
    }
    let [doc] = docs.as_slice() else {
        bail!(
            "{file}: expected the spec as one YAML document, found {}",
            docs.len()
        );
    };
    if !doc.value.is_object() {
        bail!("{file}: the spec must be a map");
    }
    serde_json::from_value::<AppProjectSpec>(doc.value.clone())
        .with_context(|| format!("error unmarshaling input into project spec ({file})"))?;
    Ok(doc.value.clone())
}

/// Runs `plumb proj edit`.
pub async fn run(client: &ProjClient, args: EditArgs) -> Result<Outcome> {
    let stored = client.read_value(&args.project).await?;
    let spec = stored
        .get("spec")
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    let original = plumb_yaml::to_yaml_string(&spec);
    let mut shown = original.clone();
    let interactive = std::io::stdin().is_terminal();
    loop {
        let file = temp_file(&args.project, &shown)?;
        run_editor(&file.0)?;
        let edited = std::fs::read_to_string(&file.0)
            .with_context(|| format!("reading {}", file.0.display()))?;
        if edited.trim().is_empty() || edited == shown || strip_comments(&edited) == original {
            bail!("edit cancelled, no valid changes were saved");
        }
        let text = strip_comments(&edited);
        let result = save(client, &args.project, &text, &file.0.display().to_string()).await;
        match result {
            Ok(()) => return Ok(Outcome::Success),
            Err(e) if interactive => {
                let comment: String = format!("{e:#}")
                    .lines()
                    .map(|l| format!("# {l}\n"))
                    .collect();
                shown = format!("{comment}{text}");
            }
            Err(e) => return Err(e),
        }
    }
}

async fn save(client: &ProjClient, name: &str, text: &str, file: &str) -> Result<()> {
    let spec = parse_spec(text, file)?;
    client
        .update(name, |p| {
            if p["spec"] == spec {
                return Ok(Change::Keep);
            }
            p["spec"] = spec.clone();
            Ok(Change::Write)
        })
        .await
        .context("failed to update project")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edited_spec_is_read_strictly_and_kept_as_written() {
        let v = parse_spec("sourceRepos: ['*']\nfutureField: {x: 1}\n", "p-edit.yaml").unwrap();
        assert_eq!(v["futureField"]["x"], 1);
        for (text, err) in [
            ("a: 1\na: 2\n", "duplicate"),
            ("- x\n", "must be a map"),
            (
                "sourceRepos: 7\n",
                "error unmarshaling input into project spec",
            ),
            ("a: 1\n---\nb: 2\n", "one YAML document"),
        ] {
            let e = format!("{:#}", parse_spec(text, "p-edit.yaml").unwrap_err());
            assert!(e.contains(err), "{text:?}: {e}");
        }
    }
}
