//! The source-type flags `app create` and `app set` share (Argo's `cmd/util/app.go`:
//! `ConstructSource`, `setHelmOpt`, `setKustomizeOpt`, `setJsonnetOpt`, `SetParameterOverrides`):
//! Helm values, parameters and release name, Kustomize images, labels and name affixes,
//! directory recursion and globs, Jsonnet arguments, a plugin's name and env, and `-p`.
//! Flags are applied in pflag's visiting order (by name), as Argo does, so the same command line
//! gives the same source.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use plumb_model::application::{
    ApplicationSource, DirectorySource, EnvEntry, HelmFileParameter, HelmParameter, HelmSource,
    JsonnetSource, JsonnetVar, KustomizeReplica, KustomizeSource, PluginSource,
};
use serde_json::Value;

/// Source-type flags of `app create` and `app set`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SourceTypeArgs {
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
    /// Kustomize nameprefix.
    #[arg(long = "nameprefix", value_name = "PREFIX", allow_hyphen_values = true)]
    pub name_prefix: Option<String>,
    /// Kustomize namesuffix.
    #[arg(long = "namesuffix", value_name = "SUFFIX", allow_hyphen_values = true)]
    pub name_suffix: Option<String>,
    /// Kustomize images (e.g. --kustomize-image node:8.15.0 --kustomize-image mysql=mariadb).
    #[arg(long = "kustomize-image", value_name = "IMAGE")]
    pub kustomize_images: Vec<String>,
    /// Kustomize replicas (e.g. --kustomize-replica my-deployment=2).
    #[arg(long = "kustomize-replica", value_name = "NAME=COUNT")]
    pub kustomize_replicas: Vec<String>,
    /// Set common labels in Kustomize.
    #[arg(long = "kustomize-common-label", value_name = "KEY=VALUE")]
    pub kustomize_common_labels: Vec<String>,
    /// Set common annotations in Kustomize.
    #[arg(long = "kustomize-common-annotation", value_name = "KEY=VALUE")]
    pub kustomize_common_annotations: Vec<String>,
    /// Do not apply common label to selectors or templates.
    #[arg(long)]
    pub kustomize_label_without_selector: bool,
    /// Force common labels in Kustomize.
    #[arg(long = "kustomize-force-common-label")]
    pub kustomize_force_common_label: bool,
    /// Force common annotations in Kustomize.
    #[arg(long = "kustomize-force-common-annotation")]
    pub kustomize_force_common_annotation: bool,
    /// Kustomize namespace.
    #[arg(long, value_name = "NAMESPACE")]
    pub kustomize_namespace: Option<String>,
    /// Recurse directory.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub directory_recurse: Option<bool>,
    /// Set glob expression used to exclude files from application source path.
    #[arg(long, value_name = "GLOB")]
    pub directory_exclude: Option<String>,
    /// Set glob expression used to include files from application source path.
    #[arg(long, value_name = "GLOB")]
    pub directory_include: Option<String>,
    /// Jsonnet top level string arguments.
    #[arg(long = "jsonnet-tla-str", value_name = "NAME=VALUE")]
    pub jsonnet_tla_str: Vec<String>,
    /// Jsonnet top level code arguments.
    #[arg(long = "jsonnet-tla-code", value_name = "NAME=CODE")]
    pub jsonnet_tla_code: Vec<String>,
    /// Jsonnet string ext var.
    #[arg(long = "jsonnet-ext-var-str", value_name = "NAME=VALUE")]
    pub jsonnet_ext_var_str: Vec<String>,
    /// Jsonnet ext var.
    #[arg(long = "jsonnet-ext-var-code", value_name = "NAME=CODE")]
    pub jsonnet_ext_var_code: Vec<String>,
    /// Additional jsonnet libs (prefixed by repoRoot).
    #[arg(long = "jsonnet-libs", value_name = "PATH")]
    pub jsonnet_libs: Vec<String>,
    /// Config management plugin name.
    #[arg(long, value_name = "NAME")]
    pub config_management_plugin: Option<String>,
    /// Additional plugin envs (NAME=VALUE).
    #[arg(long = "plugin-env", value_name = "NAME=VALUE")]
    pub plugin_envs: Vec<String>,
}

impl SourceTypeArgs {
    /// Whether any source-type flag other than `-p` was given.
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
            || self.name_prefix.is_some()
            || self.name_suffix.is_some()
            || !self.kustomize_images.is_empty()
            || !self.kustomize_replicas.is_empty()
            || !self.kustomize_common_labels.is_empty()
            || !self.kustomize_common_annotations.is_empty()
            || self.kustomize_label_without_selector
            || self.kustomize_force_common_label
            || self.kustomize_force_common_annotation
            || self.kustomize_namespace.is_some()
            || self.directory_recurse.is_some()
            || self.directory_exclude.is_some()
            || self.directory_include.is_some()
            || !self.jsonnet_tla_str.is_empty()
            || !self.jsonnet_tla_code.is_empty()
            || !self.jsonnet_ext_var_str.is_empty()
            || !self.jsonnet_ext_var_code.is_empty()
            || !self.jsonnet_libs.is_empty()
            || self.config_management_plugin.is_some()
            || !self.plugin_envs.is_empty()
    }

    /// Applies the flags to a source, in pflag's order (flag names sorted).
    pub fn apply(&self, source: &mut ApplicationSource) -> Result<()> {
        if let Some(name) = &self.config_management_plugin {
            source.plugin = Some(PluginSource {
                name: Some(name.clone()),
                ..Default::default()
            });
        }
        if let Some(glob) = &self.directory_exclude {
            directory(source).exclude = Some(glob.clone());
        }
        if let Some(glob) = &self.directory_include {
            directory(source).include = Some(glob.clone());
        }
        if let Some(recurse) = self.directory_recurse {
            directory(source).recurse = Some(recurse);
        }
        let helm_step = |source: &mut ApplicationSource,
                         f: &dyn Fn(&mut HelmSource) -> Result<()>| {
            let helm = source.helm.get_or_insert_with(HelmSource::default);
            f(helm)?;
            if is_zero(&*helm) {
                source.helm = None;
            }
            Ok::<(), anyhow::Error>(())
        };
        if !self.helm_api_versions.is_empty() {
            helm_step(source, &|h| {
                h.api_versions = Some(self.helm_api_versions.clone());
                Ok(())
            })?;
        }
        if let Some(chart) = &self.helm_chart {
            source.chart = Some(chart.clone()).filter(|c| !c.is_empty());
        }
        if let Some(v) = &self.helm_kube_version {
            helm_step(source, &|h| {
                h.kube_version = Some(v.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if let Some(ns) = &self.helm_namespace {
            helm_step(source, &|h| {
                h.namespace = Some(ns.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if self.helm_pass_credentials {
            helm_step(source, &|h| {
                h.pass_credentials = Some(true);
                Ok(())
            })?;
        }
        if !self.helm_set.is_empty() {
            helm_step(source, &|h| {
                for text in &self.helm_set {
                    add_parameter(h, helm_parameter(text, false)?);
                }
                Ok(())
            })?;
        }
        if !self.helm_set_file.is_empty() {
            helm_step(source, &|h| {
                for text in &self.helm_set_file {
                    let Some((name, path)) = text.split_once('=') else {
                        bail!(
                            "Expected helm file parameter of the form: param=path. Received: {text}"
                        );
                    };
                    let files = h.file_parameters.get_or_insert_with(Vec::new);
                    let p = HelmFileParameter {
                        name: Some(name.to_string()),
                        path: Some(path.to_string()),
                    };
                    match files.iter_mut().find(|f| f.name.as_deref() == Some(name)) {
                        Some(existing) => *existing = p,
                        None => files.push(p),
                    }
                }
                Ok(())
            })?;
        }
        if !self.helm_set_string.is_empty() {
            helm_step(source, &|h| {
                for text in &self.helm_set_string {
                    add_parameter(h, helm_parameter(text, true)?);
                }
                Ok(())
            })?;
        }
        if self.helm_skip_crds {
            helm_step(source, &|h| {
                h.skip_crds = Some(true);
                Ok(())
            })?;
        }
        if self.ignore_missing_value_files {
            helm_step(source, &|h| {
                h.ignore_missing_value_files = Some(true);
                Ok(())
            })?;
        }
        for (vars, code) in [
            (&self.jsonnet_ext_var_code, true),
            (&self.jsonnet_ext_var_str, false),
        ] {
            for text in vars {
                let var = jsonnet_var(text, code)?;
                jsonnet(source)
                    .ext_vars
                    .get_or_insert_with(Vec::new)
                    .push(var);
            }
        }
        if !self.jsonnet_libs.is_empty() {
            jsonnet(source)
                .libs
                .get_or_insert_with(Vec::new)
                .extend(self.jsonnet_libs.iter().cloned());
        }
        for (vars, code) in [
            (&self.jsonnet_tla_code, true),
            (&self.jsonnet_tla_str, false),
        ] {
            for text in vars {
                let var = jsonnet_var(text, code)?;
                jsonnet(source).tlas.get_or_insert_with(Vec::new).push(var);
            }
        }
        let kustomize_step =
            |source: &mut ApplicationSource, f: &dyn Fn(&mut KustomizeSource) -> Result<()>| {
                let k = source
                    .kustomize
                    .get_or_insert_with(KustomizeSource::default);
                f(k)?;
                if is_zero(&*k) {
                    source.kustomize = None;
                }
                Ok::<(), anyhow::Error>(())
            };
        if !self.kustomize_common_annotations.is_empty() {
            let parsed = parse_labels(&self.kustomize_common_annotations)?;
            kustomize_step(source, &|k| {
                k.common_annotations = Some(parsed.clone());
                Ok(())
            })?;
        }
        if !self.kustomize_common_labels.is_empty() {
            let parsed = parse_labels(&self.kustomize_common_labels)?;
            kustomize_step(source, &|k| {
                k.common_labels = Some(parsed.clone());
                Ok(())
            })?;
        }
        if self.kustomize_force_common_annotation {
            kustomize_step(source, &|k| {
                k.force_common_annotations = Some(true);
                Ok(())
            })?;
        }
        if self.kustomize_force_common_label {
            kustomize_step(source, &|k| {
                k.force_common_labels = Some(true);
                Ok(())
            })?;
        }
        if !self.kustomize_images.is_empty() {
            kustomize_step(source, &|k| {
                for image in &self.kustomize_images {
                    merge_image(k.images.get_or_insert_with(Vec::new), image);
                }
                Ok(())
            })?;
        }
        if self.kustomize_label_without_selector {
            kustomize_step(source, &|k| {
                k.label_without_selector = Some(true);
                Ok(())
            })?;
        }
        if let Some(ns) = &self.kustomize_namespace {
            kustomize_step(source, &|k| {
                k.namespace = Some(ns.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if !self.kustomize_replicas.is_empty() {
            kustomize_step(source, &|k| {
                for text in &self.kustomize_replicas {
                    let replica = kustomize_replica(text)?;
                    let list = k.replicas.get_or_insert_with(Vec::new);
                    match list.iter_mut().find(|r| r.name == replica.name) {
                        Some(existing) => *existing = replica,
                        None => list.push(replica),
                    }
                }
                Ok(())
            })?;
        }
        if let Some(prefix) = &self.name_prefix {
            kustomize_step(source, &|k| {
                k.name_prefix = Some(prefix.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if let Some(suffix) = &self.name_suffix {
            kustomize_step(source, &|k| {
                k.name_suffix = Some(suffix.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if !self.plugin_envs.is_empty() {
            let plugin = source.plugin.get_or_insert_with(PluginSource::default);
            for text in &self.plugin_envs {
                let Some((name, value)) = text.split_once('=').filter(|(n, _)| !n.is_empty())
                else {
                    bail!("Expected env entry of the form: param=value. Received: {text}");
                };
                let env = plugin.env.get_or_insert_with(Vec::new);
                let entry = EnvEntry {
                    name: name.to_string(),
                    value: value.to_string(),
                };
                match env.iter_mut().find(|e| e.name == name) {
                    Some(existing) => *existing = entry,
                    None => env.push(entry),
                }
            }
        }
        if let Some(name) = &self.release_name {
            helm_step(source, &|h| {
                h.release_name = Some(name.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if !self.values.is_empty() {
            helm_step(source, &|h| {
                h.value_files = Some(self.values.clone());
                Ok(())
            })?;
        }
        if let Some(path) = &self.values_literal_file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading --values-literal-file {}", path.display()))?;
            let object = values_object(&text)
                .with_context(|| format!("--values-literal-file {}", path.display()))?;
            helm_step(source, &|h| {
                h.values_object = object.clone();
                h.values = None;
                Ok(())
            })?;
        }
        Ok(())
    }
}

fn directory(source: &mut ApplicationSource) -> &mut DirectorySource {
    source
        .directory
        .get_or_insert_with(DirectorySource::default)
}

fn jsonnet(source: &mut ApplicationSource) -> &mut JsonnetSource {
    directory(source)
        .jsonnet
        .get_or_insert_with(JsonnetSource::default)
}

/// Argo's `IsZero` of the Helm and Kustomize blocks: nothing set.
pub fn is_zero<T: serde::Serialize>(block: &T) -> bool {
    serde_json::to_value(block).is_ok_and(|v| v.as_object().is_none_or(|m| m.is_empty()))
}

/// Argo's `NewHelmParameter`.
pub fn helm_parameter(text: &str, force_string: bool) -> Result<HelmParameter> {
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

fn jsonnet_var(text: &str, code: bool) -> Result<JsonnetVar> {
    let Some((name, value)) = text.split_once('=') else {
        bail!("Expected jsonnet variable of the form: name=value. Received: {text}");
    };
    Ok(JsonnetVar {
        name: name.to_string(),
        value: value.to_string(),
        code: Some(code),
    })
}

fn kustomize_replica(text: &str) -> Result<KustomizeReplica> {
    let parsed = text
        .split_once('=')
        .and_then(|(name, count)| Some((name, count.parse::<i64>().ok()?)));
    let Some((name, count)) = parsed else {
        bail!("expected a replica of the form name=count, got '{text}'");
    };
    Ok(KustomizeReplica {
        name: name.to_string(),
        count: Value::from(count),
    })
}

/// Argo's `label.Parse`: `key=value` each.
pub fn parse_labels(items: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for item in items {
        let Some((k, v)) = item.split_once('=') else {
            bail!("Label should have key=value: {item}");
        };
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// The name part of a Kustomize image override (before `=`, else `:`, else `@`).
fn image_name(image: &str) -> &str {
    for delim in ['=', ':', '@'] {
        if let Some((name, _)) = image.split_once(delim) {
            return name;
        }
    }
    image
}

/// Argo's `MergeImage`: replaces the override of the same image, else appends.
fn merge_image(images: &mut Vec<String>, image: &str) {
    match images
        .iter_mut()
        .find(|i| image_name(i) == image_name(image))
    {
        Some(existing) => *existing = image.to_string(),
        None => images.push(image.to_string()),
    }
}

/// Removes the image overrides named like `image` (`app unset --kustomize-image`); whether any was.
pub fn remove_image(images: &mut Vec<String>, image: &str) -> bool {
    let before = images.len();
    images.retain(|i| image_name(i) != image_name(image));
    images.len() != before
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

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: SourceTypeArgs,
    }

    fn source_after(start: Value, args: &[&str]) -> Result<Value> {
        let cli = Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))?;
        let mut source: ApplicationSource = serde_json::from_value(start)?;
        cli.args.apply(&mut source)?;
        set_parameters(&mut source, None, &cli.args.parameters)?;
        Ok(serde_json::to_value(source)?)
    }

    const REPO: &str = "https://github.com/argoproj/argocd-example-apps.git";

    #[test]
    fn helm_flags() {
        let dir = tempfile::tempdir().unwrap();
        let literal = dir.path().join("values.yaml");
        std::fs::write(&literal, "replicaCount: 2\nimage:\n  tag: \"0.2\"\n").unwrap();
        let got = source_after(
            json!({"repoURL": REPO, "path": "helm-guestbook"}),
            &[
                "--values",
                "values-production.yaml",
                "--helm-set",
                "replicaCount=3",
                "--helm-set",
                "service.type=LoadBalancer",
                "--helm-set",
                "replicaCount=4",
                "--helm-set-string",
                "image.tag=1.0",
                "--helm-set-file",
                "config=files/config.json",
                "--release-name",
                "guestbook-prod",
                "--values-literal-file",
                literal.to_str().unwrap(),
                "--helm-skip-crds",
            ],
        )
        .unwrap();
        assert_eq!(
            got,
            json!({"repoURL": REPO, "path": "helm-guestbook", "helm": {
                "valueFiles": ["values-production.yaml"],
                "parameters": [
                    {"name": "replicaCount", "value": "4"},
                    {"name": "service.type", "value": "LoadBalancer"},
                    {"name": "image.tag", "value": "1.0", "forceString": true}],
                "fileParameters": [{"name": "config", "path": "files/config.json"}],
                "releaseName": "guestbook-prod",
                "valuesObject": {"replicaCount": 2, "image": {"tag": "0.2"}},
                "skipCrds": true}})
        );
        let err =
            source_after(json!({"repoURL": REPO}), &["--helm-set", "replicaCount"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Expected helm parameter of the form: param=value. Received: replicaCount"
        );
    }

    #[test]
    fn kustomize_flags_merge_images_by_name() {
        let got = source_after(
            json!({"repoURL": REPO, "path": "kustomize-guestbook", "kustomize": {"images": ["gcr.io/heptio-images/ks-guestbook-demo:0.1"]}}),
            &[
                "--kustomize-image", "gcr.io/heptio-images/ks-guestbook-demo:0.2",
                "--kustomize-image", "nginx=nginx:1.27", "--kustomize-common-label", "team=web",
                "--nameprefix", "prod-", "--namesuffix", "-v2", "--kustomize-replica", "guestbook-ui=3",
            ],
        )
        .unwrap();
        assert_eq!(
            got["kustomize"],
            json!({"namePrefix": "prod-", "nameSuffix": "-v2",
                "images": ["gcr.io/heptio-images/ks-guestbook-demo:0.2", "nginx=nginx:1.27"],
                "commonLabels": {"team": "web"}, "replicas": [{"name": "guestbook-ui", "count": 3}]})
        );
        assert_eq!(
            source_after(
                json!({"repoURL": REPO}),
                &["--kustomize-common-label", "team"]
            )
            .unwrap_err()
            .to_string(),
            "Label should have key=value: team"
        );
    }

    #[test]
    fn directory_and_jsonnet_flags() {
        let got = source_after(
            json!({"repoURL": REPO, "path": "jsonnet-guestbook"}),
            &[
                "--directory-recurse",
                "--directory-include",
                "*.jsonnet",
                "--directory-exclude",
                "vendor/*",
                "--jsonnet-tla-str",
                "env=prod",
                "--jsonnet-tla-code",
                "replicas=3",
                "--jsonnet-ext-var-str",
                "cluster=eu",
            ],
        )
        .unwrap();
        assert_eq!(
            got["directory"],
            json!({"recurse": true, "include": "*.jsonnet", "exclude": "vendor/*", "jsonnet": {
                "extVars": [{"name": "cluster", "value": "eu", "code": false}],
                "tlas": [{"name": "replicas", "value": "3", "code": true}, {"name": "env", "value": "prod", "code": false}]}})
        );
        let got = source_after(
            json!({"repoURL": REPO, "directory": {"recurse": true}}),
            &["--directory-recurse=false"],
        )
        .unwrap();
        assert_eq!(got["directory"], json!({"recurse": false}));
    }

    #[test]
    fn parameters_follow_the_source_type() {
        // The blue-green example's README: `app set -p image.tag=0.2` on a Helm source.
        let mut helm: ApplicationSource = serde_json::from_value(
            json!({"repoURL": REPO, "path": "blue-green", "helm": {"parameters": [{"name": "image.tag", "value": "0.1"}]}}),
        )
        .unwrap();
        set_parameters(&mut helm, None, &["image.tag=0.2".into()]).unwrap();
        assert_eq!(
            serde_json::to_value(&helm.helm).unwrap(),
            json!({"parameters": [{"name": "image.tag", "value": "0.2"}]})
        );
        // No explicit type: the controller's detected type decides, else `=` means Helm.
        let mut plain: ApplicationSource =
            serde_json::from_value(json!({"repoURL": REPO, "path": "guestbook"})).unwrap();
        let err =
            set_parameters(&mut plain.clone(), Some("Directory"), &["a=b".into()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Parameters can only be set against Helm applications"
        );
        set_parameters(&mut plain, None, &["a=b".into()]).unwrap();
        assert!(plain.helm.is_some());
        let mut kustomize: ApplicationSource =
            serde_json::from_value(json!({"repoURL": REPO, "kustomize": {"namePrefix": "x-"}}))
                .unwrap();
        assert!(set_parameters(&mut kustomize, Some("Helm"), &["a=b".into()]).is_err());
    }
}
