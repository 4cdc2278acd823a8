//! `plumb app edit NAME`: Argo CD's `argocd app edit` (`cli.InteractiveEdit`): the spec as YAML
//! in `$EDITOR` (else `$VISUAL`, else `vi`; split on spaces as Argo does), then, when the text
//! changed, the new spec is read strictly (one YAML document, no duplicate keys, a valid
//! ApplicationSpec), checked as `app set` checks it (destination form, project rules) and written
//! as a merge patch guarded by the resourceVersion read before editing. Unchanged or emptied text
//! is `Edit cancelled, no valid changes were saved.`; an invalid text is refused without writing,
//! and on a terminal the editor opens again with the error on top (Argo's loop).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use plumb_model::application::{Application, ApplicationSpec};
use serde_json::Value;

use super::client::AppClient;
use crate::exit::Outcome;

/// `plumb app edit`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Edit the spec of an application in $EDITOR\n  plumb app edit guestbook\n\n  # With another editor\n  EDITOR='code --wait' plumb app edit guestbook"
)]
pub struct EditArgs {
    /// Application name.
    name: String,
}

/// The editor command line: `$EDITOR`, else `$VISUAL`, else `vi`.
fn editor() -> (String, Vec<String>) {
    let text = ["EDITOR", "VISUAL"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string());
    let mut parts = text.split_whitespace().map(str::to_string);
    let program = parts.next().unwrap_or_else(|| "vi".to_string());
    (program, parts.collect())
}

/// The spec as the editor shows it.
pub fn spec_yaml(app: &Application) -> Result<String> {
    Ok(plumb_yaml::to_yaml_string(&serde_json::to_value(
        &app.spec,
    )?))
}

/// Drops the `# ...` error lines the previous round put on top (only leading ones: a `#` line
/// inside a block scalar such as `helm.values` is content).
pub(crate) fn strip_comments(text: &str) -> String {
    text.lines()
        .skip_while(|l| l.trim_start().starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Reads an edited spec: one YAML document, no duplicate keys, an ApplicationSpec.
pub fn parse_spec(text: &str, file: &str) -> Result<ApplicationSpec> {
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
    serde_json::from_value(doc.value.clone())
        .with_context(|| format!("{file}: not an Application spec"))
}

pub(crate) struct TempFile(pub(crate) PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub(crate) fn temp_file(name: &str, text: &str) -> Result<TempFile> {
    use std::io::Write as _;
    let dir = std::env::temp_dir();
    for attempt in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let path = dir.join(format!(
            "{name}-{}{nanos}{attempt}-edit.yaml",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                f.write_all(text.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                return Ok(TempFile(path));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    bail!("could not create a temporary file in {}", dir.display())
}

pub(crate) fn run_editor(path: &Path) -> Result<()> {
    let (program, args) = editor();
    let status = std::process::Command::new(&program)
        .args(&args)
        .arg(path)
        .status()
        .with_context(|| format!("starting the editor '{program}' (set EDITOR)"))?;
    if !status.success() {
        bail!("the editor '{program}' exited with {status}");
    }
    Ok(())
}

/// Runs `plumb app edit`.
pub async fn run(client: &AppClient, args: EditArgs) -> Result<Outcome> {
    let app = client.get(&args.name).await?;
    let rv = app
        .metadata
        .other
        .get("resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let original = spec_yaml(&app)?;
    let mut shown = original.clone();
    let interactive = std::io::stdin().is_terminal();
    loop {
        let file = temp_file(&args.name, &shown)?;
        run_editor(&file.0)?;
        let edited = std::fs::read_to_string(&file.0)
            .with_context(|| format!("reading {}", file.0.display()))?;
        if edited.trim().is_empty() || edited == shown || strip_comments(&edited) == original {
            bail!("Edit cancelled, no valid changes were saved.");
        }
        let text = strip_comments(&edited);
        let result = save(client, &app, &rv, &text, &file.0.display().to_string()).await;
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

async fn save(
    client: &AppClient,
    app: &Application,
    rv: &str,
    text: &str,
    file: &str,
) -> Result<()> {
    let spec = parse_spec(text, file)?;
    let mut updated = app.clone();
    updated.spec = spec;
    super::create::validate(&updated)?;
    super::set::check_project(client, &updated).await?;
    let Some(spec_patch) = plumb_model::go::merge_patch::merge_patch(
        &serde_json::to_value(&app.spec)?,
        &serde_json::to_value(&updated.spec)?,
    ) else {
        return Ok(());
    };
    client
        .merge_patch_at(
            &format!("{}/{}", app.namespace(), app.name()),
            rv,
            serde_json::json!({"spec": spec_patch}),
        )
        .await?
        .map(|_| ())
        .ok_or_else(|| {
            anyhow!(
                "failed to update application spec: application '{}' was changed by someone else while you edited it; run plumb app edit again",
                app.name()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_read_strictly() {
        let ok = parse_spec(
            "project: default\nsource:\n  repoURL: https://g/r.git\n  path: guestbook\ndestination:\n  server: https://kubernetes.default.svc\n  namespace: guestbook\n",
            "f.yaml",
        )
        .unwrap();
        assert_eq!(ok.project, "default");
        assert!(parse_spec("project: [unclosed\n", "f.yaml").is_err());
        assert!(
            parse_spec("project: a\nproject: b\n", "f.yaml")
                .unwrap_err()
                .to_string()
                .contains("project")
        );
        assert!(parse_spec("- a\n", "f.yaml").is_err());
        assert!(parse_spec("project: a\n---\nproject: b\n", "f.yaml").is_err());
        assert!(parse_spec("project: 3\nsource: nope\n", "f.yaml").is_err());
    }

    #[test]
    fn the_editor_shows_the_spec_as_yaml() {
        let app: Application = crate::snapshot::fixture("payments-api-outofsync.json");
        let text = spec_yaml(&app).unwrap();
        crate::snapshot::check("edit-payments-spec.yaml", &text);
        // What the editor shows reads back as the same spec.
        assert_eq!(parse_spec(&text, "shown.yaml").unwrap(), app.spec);
    }

    #[test]
    fn error_comments_are_dropped() {
        assert_eq!(
            strip_comments("# bad\n# worse\nproject: x\n"),
            "project: x\n"
        );
    }
}
