//! The Kustomize flags of `app create`, `app set` and `app unset`: images, replicas, common
//! labels and annotations, name affixes and namespace (Argo's `setKustomizeOpt`).

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use clap::Args;
use plumb_model::application::{ApplicationSource, KustomizeReplica, KustomizeSource};
use serde_json::Value;

use super::zero::is_zero;

/// The Kustomize flags of `app create` and `app set`.
#[derive(Debug, Clone, Default, Args)]
pub struct KustomizeArgs {
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
}

impl KustomizeArgs {
    /// Whether any of these flags was given.
    pub fn any(&self) -> bool {
        self.name_prefix.is_some()
            || self.name_suffix.is_some()
            || !self.kustomize_images.is_empty()
            || !self.kustomize_replicas.is_empty()
            || !self.kustomize_common_labels.is_empty()
            || !self.kustomize_common_annotations.is_empty()
            || self.kustomize_label_without_selector
            || self.kustomize_force_common_label
            || self.kustomize_force_common_annotation
            || self.kustomize_namespace.is_some()
    }

    /// Applies the flags in pflag's order (`kustomize-*`, then the name affixes).
    pub fn apply(&self, source: &mut ApplicationSource) -> Result<()> {
        self.apply_common(source)?;
        self.apply_overrides(source)?;
        if let Some(prefix) = &self.name_prefix {
            edit(source, |k| {
                k.name_prefix = Some(prefix.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if let Some(suffix) = &self.name_suffix {
            edit(source, |k| {
                k.name_suffix = Some(suffix.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `--kustomize-common-annotation`, `--kustomize-common-label` and the two force switches.
    fn apply_common(&self, source: &mut ApplicationSource) -> Result<()> {
        if !self.kustomize_common_annotations.is_empty() {
            let parsed = parse_labels(&self.kustomize_common_annotations)?;
            edit(source, |k| {
                k.common_annotations = Some(parsed);
                Ok(())
            })?;
        }
        if !self.kustomize_common_labels.is_empty() {
            let parsed = parse_labels(&self.kustomize_common_labels)?;
            edit(source, |k| {
                k.common_labels = Some(parsed);
                Ok(())
            })?;
        }
        if self.kustomize_force_common_annotation {
            edit(source, |k| {
                k.force_common_annotations = Some(true);
                Ok(())
            })?;
        }
        if self.kustomize_force_common_label {
            edit(source, |k| {
                k.force_common_labels = Some(true);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `--kustomize-image`, `--kustomize-label-without-selector`, `--kustomize-namespace` and
    /// `--kustomize-replica`.
    fn apply_overrides(&self, source: &mut ApplicationSource) -> Result<()> {
        if !self.kustomize_images.is_empty() {
            edit(source, |k| {
                for image in &self.kustomize_images {
                    merge_image(k.images.get_or_insert_with(Vec::new), image);
                }
                Ok(())
            })?;
        }
        if self.kustomize_label_without_selector {
            edit(source, |k| {
                k.label_without_selector = Some(true);
                Ok(())
            })?;
        }
        if let Some(ns) = &self.kustomize_namespace {
            edit(source, |k| {
                k.namespace = Some(ns.clone()).filter(|v| !v.is_empty());
                Ok(())
            })?;
        }
        if !self.kustomize_replicas.is_empty() {
            edit(source, |k| {
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
        Ok(())
    }
}

/// Changes the Kustomize block (added when missing) and drops it when left empty, as each of
/// Argo's `setKustomizeOpt` steps does.
fn edit(
    source: &mut ApplicationSource,
    change: impl FnOnce(&mut KustomizeSource) -> Result<()>,
) -> Result<()> {
    let k = source
        .kustomize
        .get_or_insert_with(KustomizeSource::default);
    change(k)?;
    if is_zero(&*k) {
        source.kustomize = None;
    }
    Ok(())
}

/// The Kustomize flags of `app unset`.
#[derive(Debug, Clone, Default, Args)]
pub struct KustomizeUnsetArgs {
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
}

impl KustomizeUnsetArgs {
    fn is_zero(&self) -> bool {
        !self.name_prefix
            && !self.name_suffix
            && !self.kustomize_version
            && !self.kustomize_namespace
            && self.kustomize_images.is_empty()
            && self.kustomize_replicas.is_empty()
    }

    /// Removes what the flags name from the source's Kustomize block (dropped when left empty);
    /// `None` when the source has one but no Kustomize flag was given, else whether anything was
    /// removed.
    pub fn unset(&self, source: &mut ApplicationSource) -> Option<bool> {
        let Some(k) = source.kustomize.as_mut() else {
            return Some(false);
        };
        if self.is_zero() {
            return None;
        }
        let mut updated = false;
        for (flag, field) in [
            (self.name_prefix, &mut k.name_prefix),
            (self.name_suffix, &mut k.name_suffix),
            (self.kustomize_version, &mut k.version),
            (self.kustomize_namespace, &mut k.namespace),
        ] {
            if flag && field.as_deref().is_some_and(|v| !v.is_empty()) {
                *field = None;
                updated = true;
            }
        }
        updated |= self.unset_lists(k);
        if is_zero(&*k) {
            source.kustomize = None;
        }
        Some(updated)
    }

    /// `--kustomize-image` and `--kustomize-replica`; whether any was removed.
    fn unset_lists(&self, k: &mut KustomizeSource) -> bool {
        let mut updated = false;
        if let Some(images) = k.images.as_mut() {
            for image in &self.kustomize_images {
                updated |= remove_image(images, image);
            }
            if images.is_empty() {
                k.images = None;
            }
        }
        if let Some(replicas) = k.replicas.as_mut() {
            for name in &self.kustomize_replicas {
                if let Some(i) = replicas.iter().position(|r| &r.name == name) {
                    replicas.remove(i);
                    updated = true;
                }
            }
            if replicas.is_empty() {
                k.replicas = None;
            }
        }
        updated
    }
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
fn parse_labels(items: &[String]) -> Result<BTreeMap<String, String>> {
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
fn remove_image(images: &mut Vec<String>, image: &str) -> bool {
    let before = images.len();
    images.retain(|i| image_name(i) != image_name(image));
    images.len() != before
}
