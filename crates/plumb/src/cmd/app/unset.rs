//! `plumb app unset NAME ...`: Argo CD's `argocd app unset` (`unset` in
//! `cmd/argocd/commands/app.go`): removes Helm parameters, values files, the literal values block
//! and switches, Kustomize name affixes, version, namespace, images and replicas, plugin env
//! entries and a source's `ref`. Nothing matching is not an error (nothing is written); flags
//! that do not apply to the source's type are Argo's "nothing to unset" (exit 1).

use anyhow::{Result, bail};
use clap::Args;
use plumb_model::application::{Application, ApplicationSource};
use serde_json::Value;

use super::client::AppClient;
use super::flags::source::{HelmUnsetArgs, KustomizeUnsetArgs, PluginUnsetArgs};
use crate::exit::Outcome;

/// `plumb app unset`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Unset a Helm parameter and a values file\n  plumb app unset my-app -p image.tag --values values-prod.yaml\n\n  # Unset Kustomize overrides\n  plumb app unset my-app --kustomize-image nginx --nameprefix"
)]
pub struct UnsetArgs {
    /// Application name.
    pub name: String,
    #[command(flatten)]
    pub helm: HelmUnsetArgs,
    #[command(flatten)]
    pub kustomize: KustomizeUnsetArgs,
    #[command(flatten)]
    pub plugin: PluginUnsetArgs,
    /// Unset ref on the source.
    #[arg(long = "ref")]
    pub reference: bool,
    /// Position of the source from the list of sources of the app. Counting starts at 1.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub source_position: Option<i64>,
}

/// What unsetting did to a source (Argo's `(updated, nothingToUnset)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsetResult {
    /// Something was removed.
    Updated,
    /// The flags apply but nothing matched.
    Unchanged,
    /// No flag applies to the source.
    NothingApplies,
}

/// Argo's `unset`, on one source: the ref, then the Kustomize, Helm and plugin blocks. A block
/// the source has but no flag applies to ends it early, as in Argo.
pub fn unset(source: &mut ApplicationSource, o: &UnsetArgs) -> UnsetResult {
    let mut updated = false;
    let mut need_ref = false;
    if o.reference && source.reference.as_deref().is_some_and(|r| !r.is_empty()) {
        source.reference = None;
        updated = true;
        need_ref = true;
    }
    let early = |updated: bool| {
        if !need_ref {
            UnsetResult::NothingApplies
        } else if updated {
            UnsetResult::Updated
        } else {
            UnsetResult::Unchanged
        }
    };
    match o.kustomize.unset(source) {
        Some(changed) => updated |= changed,
        None => return early(updated),
    }
    match o.helm.unset(source) {
        Some(changed) => updated |= changed,
        None => return early(updated),
    }
    if let Some(p) = source.plugin.as_mut() {
        match o.plugin.unset(p) {
            Some(changed) => updated |= changed,
            // Argo reports "nothing changed" here even when the ref was removed.
            None if need_ref => return UnsetResult::Unchanged,
            None => return UnsetResult::NothingApplies,
        }
    }
    if updated {
        UnsetResult::Updated
    } else {
        UnsetResult::Unchanged
    }
}

/// The Application with the flags applied to the chosen source.
pub fn apply(args: &UnsetArgs, app: &Application) -> Result<(Application, UnsetResult)> {
    let mut app = app.clone();
    let spec = &mut app.spec;
    let source = match spec.sources.as_mut().filter(|s| !s.is_empty()) {
        Some(sources) => {
            let count = sources.len();
            match args.source_position {
                Some(p) if p > 0 => {
                    let index = usize::try_from(p - 1).unwrap_or(usize::MAX);
                    if index >= count {
                        bail!(
                            "Source position should be less than the number of sources in the application"
                        );
                    }
                    &mut sources[index]
                }
                _ => bail!(
                    "Source position should be specified and must be greater than 0 for applications with multiple sources"
                ),
            }
        }
        None => spec.source.get_or_insert_with(ApplicationSource::default),
    };
    let result = unset(source, args);
    Ok((app, result))
}

/// Runs `plumb app unset`.
pub async fn run(client: &AppClient, args: UnsetArgs) -> Result<Outcome> {
    for _ in 0..10 {
        let app = client.get(&args.name).await?;
        let (updated, result) = apply(&args, &app)?;
        match result {
            UnsetResult::NothingApplies => {
                eprintln!(
                    "Nothing to unset: no flag given applies to the source of application '{}' (see plumb app unset --help)",
                    args.name
                );
                return Ok(Outcome::Negative);
            }
            UnsetResult::Unchanged => return Ok(Outcome::Success),
            UnsetResult::Updated => {}
        }
        super::set::check_project(client, &updated).await?;
        let Some(spec_patch) = plumb_model::go::merge_patch::merge_patch(
            &serde_json::to_value(&app.spec)?,
            &serde_json::to_value(&updated.spec)?,
        ) else {
            return Ok(Outcome::Success);
        };
        let rv = app
            .metadata
            .other
            .get("resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if client
            .merge_patch_at(&args.name, &rv, serde_json::json!({"spec": spec_patch}))
            .await?
            .is_some()
        {
            return Ok(Outcome::Success);
        }
    }
    bail!(
        "could not update application '{}': it keeps changing",
        args.name
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: UnsetArgs,
    }

    fn run_unset(source: Value, args: &[&str]) -> (Value, UnsetResult) {
        let cli =
            Cli::try_parse_from(["unset", "app"].into_iter().chain(args.iter().copied())).unwrap();
        let mut s: ApplicationSource = serde_json::from_value(source).unwrap();
        let r = unset(&mut s, &cli.args);
        (serde_json::to_value(s).unwrap(), r)
    }

    #[test]
    fn helm_fields() {
        let src = json!({"repoURL": "https://g/r.git", "helm": {
            "parameters": [{"name": "image.tag", "value": "0.2"}, {"name": "replicaCount", "value": "3"}],
            "valueFiles": ["values.yaml", "values-prod.yaml"], "valuesObject": {"a": 1}, "passCredentials": true}});
        let (got, r) = run_unset(
            src.clone(),
            &[
                "-p",
                "image.tag",
                "--values",
                "values-prod.yaml",
                "--values-literal",
                "--pass-credentials",
            ],
        );
        assert_eq!(r, UnsetResult::Updated);
        assert_eq!(
            got["helm"],
            json!({"parameters": [{"name": "replicaCount", "value": "3"}], "valueFiles": ["values.yaml"]})
        );
        let (_, r) = run_unset(src.clone(), &["-p", "missing"]);
        assert_eq!(r, UnsetResult::Unchanged);
        // Kustomize flags on a Helm source: nothing applies.
        let (_, r) = run_unset(src, &["--nameprefix"]);
        assert_eq!(r, UnsetResult::NothingApplies);
    }

    #[test]
    fn kustomize_fields() {
        let src = json!({"repoURL": "https://g/r.git", "kustomize": {
            "namePrefix": "prod-", "images": ["nginx=nginx:1.27", "redis:7"], "replicas": [{"name": "web", "count": 2}]}});
        let (got, r) = run_unset(
            src.clone(),
            &[
                "--nameprefix",
                "--kustomize-image",
                "nginx",
                "--kustomize-replica",
                "web",
            ],
        );
        assert_eq!(r, UnsetResult::Updated);
        assert_eq!(got["kustomize"], json!({"images": ["redis:7"]}));
        let (got, _) = run_unset(
            src.clone(),
            &[
                "--nameprefix",
                "--kustomize-image",
                "redis",
                "--kustomize-image",
                "nginx",
                "--kustomize-replica",
                "web",
            ],
        );
        assert!(got.get("kustomize").is_none());
        let (_, r) = run_unset(src, &["-p", "image.tag"]);
        assert_eq!(r, UnsetResult::NothingApplies);
    }
}
