//! The Helm flags of `app create`, `app set` and `app unset` (Argo's `setHelmOpt`): chart,
//! values files and literal values, parameters (`--helm-set*` and `-p`), release name and the
//! `helm template` switches.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use plumb_model::application::{ApplicationSource, HelmFileParameter, HelmParameter, HelmSource};
use serde_json::Value;

use super::zero::is_zero;

/// The Helm flags of `app create` and `app set`, with `-p`.
#[derive(Debug, Clone, Default, Args)]
pub struct HelmArgs {
    /// Helm Chart name.
    #[arg(long = "helm-chart", value_name = "CHART")]
    pub helm_chart: Option<String>,
    /// Set a parameter override (e.g. -p image.tag=0.2; Helm applications).
    #[arg(short = 'p', long = "parameter", value_name = "NAME=VALUE")]
    pub parameters: Vec<String>,
    /// Helm values file(s) to use.
    #[arg(long = "values", value_name = "FILE")]
    pub values: Vec<String>,
    /// Ignore locally missing valueFiles when setting helm template --values.
    #[arg(long)]
    pub ignore_missing_value_files: bool,
    /// Filename to import as a literal Helm values block.
    #[arg(long = "values-literal-file", value_name = "FILE")]
    pub values_literal_file: Option<PathBuf>,
    /// Helm release-name.
    #[arg(long = "release-name", value_name = "NAME")]
    pub release_name: Option<String>,
    /// Pass credentials to all domain.
    #[arg(long)]
    pub helm_pass_credentials: bool,
    /// Helm set values on the command line (repeatable: --helm-set key1=val1 --helm-set key2=val2).
    #[arg(long = "helm-set", value_name = "KEY=VALUE")]
    pub helm_set: Vec<String>,
    /// Helm set STRING values on the command line (repeatable).
    #[arg(long = "helm-set-string", value_name = "KEY=VALUE")]
    pub helm_set_string: Vec<String>,
    /// Helm set values from respective files (repeatable: --helm-set-file key1=path1).
    #[arg(long = "helm-set-file", value_name = "KEY=PATH")]
    pub helm_set_file: Vec<String>,
    /// Skip helm crd installation step.
    #[arg(long)]
    pub helm_skip_crds: bool,
    /// Helm namespace to use when running helm template (default: the destination namespace).
    #[arg(long, value_name = "NAMESPACE")]
    pub helm_namespace: Option<String>,
    /// Helm kube-version to use when running helm template.
    #[arg(long, value_name = "VERSION")]
    pub helm_kube_version: Option<String>,
    /// Helm api-versions ([group/]version/kind) to use when running helm template (repeatable).
    #[arg(long = "helm-api-versions", value_name = "API")]
    pub helm_api_versions: Vec<String>,
}

impl HelmArgs {
    /// Whether any of these flags other than `-p` was given.
    pub fn any(&self) -> bool {
        self.helm_chart.is_some()
            || !self.values.is_empty()
            || self.ignore_missing_value_files
            || self.values_literal_file.is_some()
            || self.release_name.is_some()
            || self.helm_pass_credentials
            || !self.helm_set.is_empty()
            || !self.helm_set_string.is_empty()
            || !self.helm_set_file.is_empty()
            || self.helm_skip_crds
            || self.helm_namespace.is_some()
            || self.helm_kube_version.is_some()
            || !self.helm_api_versions.is_empty()
    }

    /// The flags named `helm-*` and `ignore-missing-value-files`, in pflag's order.
    pub fn apply_template_flags(&self, source: &mut ApplicationSource) -> Result<()> {
        if !self.helm_api_versions.is_empty() {
            edit(source, |h| {
                h.api_versions = Some(self.helm_api_versions.clone());
                Ok(())
            })?;
        }
        if let Some(chart) = &self.helm_chart {
            source.chart = Some(chart.clone()).filter(|c| !c.is_empty());
        }
        if let Some(v) = &self.helm_kube_version {
            edit(source, |h| {
                h.kube_version = Some(v.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if let Some(ns) = &self.helm_namespace {
            edit(source, |h| {
                h.namespace = Some(ns.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if self.helm_pass_credentials {
            edit(source, |h| {
                h.pass_credentials = Some(true);
                Ok(())
            })?;
        }
        self.apply_set_flags(source)?;
        if self.helm_skip_crds {
            edit(source, |h| {
                h.skip_crds = Some(true);
                Ok(())
            })?;
        }
        if self.ignore_missing_value_files {
            edit(source, |h| {
                h.ignore_missing_value_files = Some(true);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `--helm-set`, `--helm-set-file` and `--helm-set-string`.
    fn apply_set_flags(&self, source: &mut ApplicationSource) -> Result<()> {
        if !self.helm_set.is_empty() {
            edit(source, |h| {
                for text in &self.helm_set {
                    add_parameter(h, helm_parameter(text, false)?);
                }
                Ok(())
            })?;
        }
        if !self.helm_set_file.is_empty() {
            edit(source, |h| {
                for text in &self.helm_set_file {
                    add_file_parameter(h, text)?;
                }
                Ok(())
            })?;
        }
        if !self.helm_set_string.is_empty() {
            edit(source, |h| {
                for text in &self.helm_set_string {
                    add_parameter(h, helm_parameter(text, true)?);
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `--release-name`, `--values` and `--values-literal-file`, in pflag's order.
    pub fn apply_release_and_values(&self, source: &mut ApplicationSource) -> Result<()> {
        if let Some(name) = &self.release_name {
            edit(source, |h| {
                h.release_name = Some(name.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if !self.values.is_empty() {
            edit(source, |h| {
                h.value_files = Some(self.values.clone());
                Ok(())
            })?;
        }
        if let Some(path) = &self.values_literal_file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading --values-literal-file {}", path.display()))?;
            let object = values_object(&text)
                .with_context(|| format!("--values-literal-file {}", path.display()))?;
            edit(source, |h| {
                h.values_object = object;
                h.values = None;
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// Changes the Helm block (added when missing) and drops it when left empty, as each of Argo's
/// `setHelmOpt` steps does.
fn edit(
    source: &mut ApplicationSource,
    change: impl FnOnce(&mut HelmSource) -> Result<()>,
) -> Result<()> {
    let helm = source.helm.get_or_insert_with(HelmSource::default);
    change(helm)?;
    if is_zero(&*helm) {
        source.helm = None;
    }
    Ok(())
}

/// Argo's `NewHelmParameter`.
fn helm_parameter(text: &str, force_string: bool) -> Result<HelmParameter> {
    let Some((name, value)) = text.split_once('=') else {
        bail!("Expected helm parameter of the form: param=value. Received: {text}");
    };
    Ok(HelmParameter {
        name: Some(name.to_string()),
        value: Some(value.to_string()),
        force_string: force_string.then_some(true),
    })
}

/// Argo's `AddParameter`: replaces the parameter of the same name, else appends.
fn add_parameter(helm: &mut HelmSource, p: HelmParameter) {
    let list = helm.parameters.get_or_insert_with(Vec::new);
    match list.iter_mut().find(|x| x.name == p.name) {
        Some(existing) => *existing = p,
        None => list.push(p),
    }
}

/// `--helm-set-file NAME=PATH`: replaces the file parameter of the same name, else appends.
fn add_file_parameter(helm: &mut HelmSource, text: &str) -> Result<()> {
    let Some((name, path)) = text.split_once('=') else {
        bail!("Expected helm file parameter of the form: param=path. Received: {text}");
    };
    let files = helm.file_parameters.get_or_insert_with(Vec::new);
    let p = HelmFileParameter {
        name: Some(name.to_string()),
        path: Some(path.to_string()),
    };
    match files.iter_mut().find(|f| f.name.as_deref() == Some(name)) {
        Some(existing) => *existing = p,
        None => files.push(p),
    }
    Ok(())
}

/// Argo's `SetValuesString`: a YAML map (or string) stored as `valuesObject`.
fn values_object(text: &str) -> Result<Option<Value>> {
    if text.is_empty() {
        return Ok(None);
    }
    let docs = plumb_yaml::read_documents(text, "values")?;
    let value = match docs.as_slice() {
        [] => Value::Null,
        [doc] => doc.value.clone(),
        _ => bail!("expected one YAML document"),
    };
    match value {
        Value::Object(_) | Value::String(_) => Ok(Some(value)),
        other => bail!("invalid type: the values must be a map, not {other}"),
    }
}

/// Argo's `SetParameterOverrides`: `-p NAME=VALUE` are Helm parameters when the source is a
/// Helm source (its explicit type, else the type the controller detected, else a `=` in the first
/// parameter); any other source type is refused.
pub fn set_parameters(
    source: &mut ApplicationSource,
    detected_type: Option<&str>,
    parameters: &[String],
) -> Result<()> {
    let Some(first) = parameters.first() else {
        return Ok(());
    };
    let explicit = [
        (source.helm.is_some(), "Helm"),
        (source.kustomize.is_some(), "Kustomize"),
        (source.directory.is_some(), "Directory"),
        (source.plugin.is_some(), "Plugin"),
    ];
    let set: Vec<&str> = explicit
        .iter()
        .filter(|(present, _)| *present)
        .map(|(_, t)| *t)
        .collect();
    let source_type = match set.as_slice() {
        [one] => Some(*one),
        [] => detected_type
            .filter(|t| !t.is_empty())
            .or_else(|| first.contains('=').then_some("Helm")),
        _ => bail!("multiple application sources defined: {}", set.join(",")),
    };
    if source_type != Some("Helm") {
        bail!("Parameters can only be set against Helm applications");
    }
    let helm = source.helm.get_or_insert_with(HelmSource::default);
    for text in parameters {
        match helm_parameter(text, false) {
            Ok(p) => add_parameter(helm, p),
            // Argo logs the bad one and sets the others.
            Err(e) => eprintln!("{e}"),
        }
    }
    Ok(())
}

/// The Helm flags of `app unset`.
#[derive(Debug, Clone, Default, Args)]
pub struct HelmUnsetArgs {
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
}

impl HelmUnsetArgs {
    fn is_zero(&self) -> bool {
        self.parameters.is_empty()
            && self.values.is_empty()
            && !self.values_literal
            && !self.ignore_missing_value_files
            && !self.pass_credentials
    }

    /// Removes what the flags name from the source's Helm block (dropped when left empty);
    /// `None` when the source has one but no Helm flag was given, else whether anything was
    /// removed.
    pub fn unset(&self, source: &mut ApplicationSource) -> Option<bool> {
        let Some(h) = source.helm.as_mut() else {
            return Some(false);
        };
        if self.is_zero() {
            return None;
        }
        let mut updated = self.unset_lists(h);
        if self.values_literal && (h.values.is_some() || h.values_object.is_some()) {
            h.values = None;
            h.values_object = None;
            updated = true;
        }
        if self.ignore_missing_value_files && h.ignore_missing_value_files == Some(true) {
            h.ignore_missing_value_files = None;
            updated = true;
        }
        if self.pass_credentials && h.pass_credentials == Some(true) {
            h.pass_credentials = None;
            updated = true;
        }
        if is_zero(&*h) {
            source.helm = None;
        }
        Some(updated)
    }

    /// `-p` and `--values`; whether any was removed.
    fn unset_lists(&self, h: &mut HelmSource) -> bool {
        let mut updated = false;
        if let Some(params) = h.parameters.as_mut() {
            for name in &self.parameters {
                if let Some(i) = params.iter().position(|p| p.name.as_deref() == Some(name)) {
                    params.remove(i);
                    updated = true;
                }
            }
            if params.is_empty() {
                h.parameters = None;
            }
        }
        if let Some(files) = h.value_files.as_mut() {
            for file in &self.values {
                if let Some(i) = files.iter().position(|f| f == file) {
                    files.remove(i);
                    updated = true;
                }
            }
            if files.is_empty() {
                h.value_files = None;
            }
        }
        updated
    }
}
