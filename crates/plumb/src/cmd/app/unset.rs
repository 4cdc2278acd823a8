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
use super::source_flags::{is_zero, remove_image};
use crate::exit::Outcome;

/// `plumb app unset`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  # Unset a Helm parameter and a values file\n  plumb app unset my-app -p image.tag --values values-prod.yaml\n\n  # Unset Kustomize overrides\n  plumb app unset my-app --kustomize-image nginx --nameprefix"
)]
pub struct UnsetArgs {
    /// Application name.
    pub name: String,
    /// Unset a parameter override (e.g. -p image.tag).
    #[arg(short = 'p', long = "parameter", value_name = "NAME")]
    pub parameters: Vec<String>,
    /// Unset one or more Helm values files.
    #[arg(long = "values", value_name = "FILE")]
    pub values: Vec<String>,
    /// Unset literal Helm values block.
    #[arg(long)]
    pub values_literal: bool,
    /// Unset the helm ignore-missing-value-files option (revert to false).
    #[arg(long)]
    pub ignore_missing_value_files: bool,
    /// Unset passCredentials.
    #[arg(long)]
    pub pass_credentials: bool,
    /// Kustomize namesuffix.
    #[arg(long = "namesuffix")]
    pub name_suffix: bool,
    /// Kustomize nameprefix.
    #[arg(long = "nameprefix")]
    pub name_prefix: bool,
    /// Kustomize version.
    #[arg(long)]
    pub kustomize_version: bool,
    /// Kustomize namespace.
    #[arg(long)]
    pub kustomize_namespace: bool,
    /// Kustomize images name (e.g. --kustomize-image node --kustomize-image mysql).
    #[arg(long = "kustomize-image", value_name = "IMAGE")]
    pub kustomize_images: Vec<String>,
    /// Kustomize replicas name (e.g. --kustomize-replica my-deployment).
    #[arg(long = "kustomize-replica", value_name = "NAME")]
    pub kustomize_replicas: Vec<String>,
    /// Unset plugin env variables (e.g --plugin-env name).
    #[arg(long = "plugin-env", value_name = "NAME")]
    pub plugin_envs: Vec<String>,
    /// Unset ref on the source.
    #[arg(long = "ref")]
    pub reference: bool,
    /// Position of the source from the list of sources of the app. Counting starts at 1.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub source_position: Option<i64>,
}

impl UnsetArgs {
    fn kustomize_is_zero(&self) -> bool {
        !self.name_prefix
            && !self.name_suffix
            && !self.kustomize_version
            && !self.kustomize_namespace
            && self.kustomize_images.is_empty()
            && self.kustomize_replicas.is_empty()
    }
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

/// Argo's `unset`, on one source.
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
    if let Some(k) = source.kustomize.as_mut() {
        if o.kustomize_is_zero() {
            return early(updated);
        }
        for (flag, field) in [
            (o.name_prefix, &mut k.name_prefix),
            (o.name_suffix, &mut k.name_suffix),
            (o.kustomize_version, &mut k.version),
            (o.kustomize_namespace, &mut k.namespace),
        ] {
            if flag && field.as_deref().is_some_and(|v| !v.is_empty()) {
                *field = None;
                updated = true;
            }
        }
        if let Some(images) = k.images.as_mut() {
            for image in &o.kustomize_images {
                updated |= remove_image(images, image);
            }
            if images.is_empty() {
                k.images = None;
            }
        }
        if let Some(replicas) = k.replicas.as_mut() {
            for name in &o.kustomize_replicas {
                if let Some(i) = replicas.iter().position(|r| &r.name == name) {
                    replicas.remove(i);
                    updated = true;
                }
            }
            if replicas.is_empty() {
                k.replicas = None;
            }
        }
        if is_zero(&*k) {
            source.kustomize = None;
        }
    }
    if let Some(h) = source.helm.as_mut() {
        if o.parameters.is_empty()
            && o.values.is_empty()
            && !o.values_literal
            && !o.ignore_missing_value_files
            && !o.pass_credentials
        {
            return early(updated);
        }
        if let Some(params) = h.parameters.as_mut() {
            for name in &o.parameters {
                if let Some(i) = params.iter().position(|p| p.name.as_deref() == Some(name)) {
                    params.remove(i);
                    updated = true;
                }
            }
            if params.is_empty() {
                h.parameters = None;
            }
        }
        if o.values_literal && (h.values.is_some() || h.values_object.is_some()) {
            h.values = None;
            h.values_object = None;
            updated = true;
        }
        if let Some(files) = h.value_files.as_mut() {
            for file in &o.values {
                if let Some(i) = files.iter().position(|f| f == file) {
                    files.remove(i);
                    updated = true;
                }
            }
            if files.is_empty() {
                h.value_files = None;
            }
        }
        if o.ignore_missing_value_files && h.ignore_missing_value_files == Some(true) {
            h.ignore_missing_value_files = None;
            updated = true;
        }
        if o.pass_credentials && h.pass_credentials == Some(true) {
            h.pass_credentials = None;
            updated = true;
        }
        if is_zero(&*h) {
            source.helm = None;
        }
    }
    if let Some(p) = source.plugin.as_mut() {
        if o.plugin_envs.is_empty() {
            return if need_ref {
                UnsetResult::Unchanged
            } else {
                UnsetResult::NothingApplies
            };
        }
        if let Some(env) = p.env.as_mut() {
            for name in &o.plugin_envs {
                if let Some(i) = env.iter().position(|e| &e.name == name) {
                    env.remove(i);
                    updated = true;
                }
            }
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
        let Some(spec_patch) = super::set::merge_patch(
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
