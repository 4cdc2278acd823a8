//! Kustomizations, rendered by the real `kustomize build`.
//!
//! Source options are applied as Argo CD applies them (`util/kustomize/kustomize.go: Build`): with
//! `kustomize edit set nameprefix|namesuffix|image|replicas|namespace`, `edit add
//! label|annotation|component`, and `patches` appended to the kustomization file. Argo edits its
//! checkout; Plumb's trees are read-only and shared, so the edits happen in a scratch copy made of
//! hard links, where only the edited kustomization file is a real copy.
//!
//! Before running kustomize, every local path a kustomization names (resources, components,
//! patches, generators' files, ...) is checked to stay inside the repository, following
//! kustomizations it reaches (kustomize's own load restrictor does not cover directories), and
//! every symlink of the checkout is resolved physically and refused if it leaves the root.
//! Remote bases are refused unless they are `https://` or `ssh://` (or `user@host:`) Git URLs that
//! the request's `sourceRepos` allow, with a ref that is a plain ref name; `file://` and any other
//! scheme are always refused. Plumb fetches the allowed ones itself ([`super::kustomize_scratch`]),
//! and kustomize runs in the render sandbox: no network, no view of the cache beyond its inputs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use plumb_model::application::KustomizeSource;
use serde_json::Value;

use super::context::Context;
use super::kustomize_paths::{check_paths, first_document};
use super::kustomize_scratch::{Fetched, link_tree, localise};
use super::tool;
use crate::detect::KUSTOMIZATION_FILES;
use crate::error::{Error, Result};
use crate::git::normalize_within;
use crate::manifest::{self, Manifest};
use crate::spec::{b, s as text, v};

/// Renders the kustomization at `ctx.app`.
pub(crate) fn render(ctx: &Context<'_>, opts: Option<&KustomizeSource>) -> Result<Vec<Manifest>> {
    let mut remotes = Vec::new();
    check_paths(
        ctx,
        ctx.repo,
        "",
        ctx.app,
        &mut BTreeSet::new(),
        &mut remotes,
    )?;
    ctx.repo.check_links(Path::new(""))?;
    if !remotes.is_empty() && crate::worker::sandbox::unshare_prefix(false).is_none() {
        let f = &remotes[0];
        return Err(Error::RemoteBaseRefused {
            field: f.field.clone(),
            url: crate::redact::strip_url_credentials(&f.entry),
            reason: "this machine cannot create mount and network namespaces (unshare), so \
                     kustomize cannot be confined: remote bases are refused"
                .into(),
        });
    }
    let label = format!("kustomize build {}", ctx.app.display());
    let scratch = ctx.scratch("kustomize-")?;
    let edit = opts.filter(|o| needs_edit(o));
    let mut fetched = Fetched::default();
    let dir = if edit.is_none() && remotes.is_empty() {
        ctx.root.join(ctx.app)
    } else {
        // Plumb's trees are read-only and shared: edits happen in a copy made of hard links.
        let copy = scratch.path().join("repo");
        link_tree(ctx.root, &copy)?;
        fetched.roots.push((copy.clone(), String::new()));
        localise(ctx, &remotes, &copy, scratch.path(), 0, &mut fetched)?;
        let dir = copy.join(ctx.app);
        if let Some(opts) = edit {
            let file = own_kustomization(ctx, &dir)?;
            apply_options(ctx, scratch.path(), &dir, &file, opts)?;
        }
        dir
    };
    let mut cmd = Command::new(&ctx.tools.kustomize);
    cmd.arg("build").arg(&dir);
    cmd.args(super::kustomize_options::parse_build_options(
        ctx.kustomize_build_options,
    )?);
    let view = ctx.view().keeping(scratch.path());
    let redactor = ctx.path_redactor(fetched.roots);
    let place = tool::Place {
        worker: &ctx.tools.worker,
        limits: ctx.limits,
        redactor: &redactor,
        view: Some(&view),
    };
    let out = tool::run(
        "kustomize",
        &label,
        cmd,
        &place,
        ctx.limits.max_render_bytes,
    )?;
    manifest::from_stream(&out.stdout, &label, |_| None)
}

/// The kustomization file of `dir` in a scratch copy, made a file of its own (the hard link to
/// the shared tree broken) so that edits do not reach the tree.
fn own_kustomization(ctx: &Context<'_>, dir: &Path) -> Result<PathBuf> {
    let file = KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::PathNotFound {
            field: "spec.source.path".into(),
            path: ctx.app.join("kustomization.yaml").display().to_string(),
        })?;
    let text = std::fs::read(&file).map_err(Error::io("reading", &file))?;
    std::fs::remove_file(&file).map_err(Error::io("writing", &file))?;
    std::fs::write(&file, text).map_err(Error::io("writing", &file))?;
    Ok(file)
}

fn needs_edit(o: &KustomizeSource) -> bool {
    !(text(&o.name_prefix).is_empty()
        && text(&o.name_suffix).is_empty()
        && v(&o.images).is_empty()
        && o.common_labels.as_ref().is_none_or(|m| m.is_empty())
        && o.common_annotations.as_ref().is_none_or(|m| m.is_empty())
        && text(&o.namespace).is_empty()
        && v(&o.replicas).is_empty()
        && v(&o.patches).is_empty()
        && v(&o.components).is_empty())
}

fn apply_options(
    ctx: &Context<'_>,
    scratch: &Path,
    dir: &Path,
    file: &Path,
    o: &KustomizeSource,
) -> Result<()> {
    // `kustomize edit` writes the kustomization file of the copy: the scratch space is writable.
    let view = ctx.view().keeping_rw(scratch);
    let redactor = ctx.path_redactor(vec![(scratch.join("repo"), String::new())]);
    let place = tool::Place {
        worker: &ctx.tools.worker,
        limits: ctx.limits,
        redactor: &redactor,
        view: Some(&view),
    };
    let edit = |args: Vec<String>| -> Result<()> {
        let mut cmd = Command::new(&ctx.tools.kustomize);
        cmd.current_dir(dir).arg("edit").args(&args);
        let label = format!(
            "kustomize edit {}",
            args.iter().take(2).cloned().collect::<Vec<_>>().join(" ")
        );
        tool::run("kustomize", &label, cmd, &place, 1 << 20).map(|_| ())
    };
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    name_image_replica_edits(o, &edit)?;
    label_edits(o, &edit)?;
    if !text(&o.namespace).is_empty() {
        edit(s(&["set", "namespace", "--", text(&o.namespace)]))?;
    }
    let components = components(ctx, o)?;
    if !components.is_empty() {
        let mut args = s(&["add", "component", "--"]);
        args.extend(components);
        edit(args)?;
    }
    if !v(&o.patches).is_empty() {
        add_patches(ctx, file, o)?;
    }
    Ok(())
}

/// A `kustomize edit` run on the scratch copy's kustomization.
type Edit<'a> = dyn Fn(Vec<String>) -> Result<()> + 'a;

/// Name prefix and suffix, images and replicas, in that order.
fn name_image_replica_edits(o: &KustomizeSource, edit: &Edit<'_>) -> Result<()> {
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    if !text(&o.name_prefix).is_empty() {
        edit(s(&["set", "nameprefix", "--", text(&o.name_prefix)]))?;
    }
    if !text(&o.name_suffix).is_empty() {
        edit(s(&["set", "namesuffix", "--", text(&o.name_suffix)]))?;
    }
    if !v(&o.images).is_empty() {
        // After `--`: a value starting with `-` is an image, never a flag of kustomize.
        let mut args = s(&["set", "image", "--"]);
        args.extend(v(&o.images).iter().cloned());
        edit(args)?;
    }
    for r in v(&o.replicas) {
        let count = match &r.count {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        edit(s(&[
            "set",
            "replicas",
            "--",
            &format!("{}={count}", r.name),
        ]))?;
    }
    Ok(())
}

/// Common labels and annotations (`--force`, `--without-selector` as the source asks).
fn label_edits(o: &KustomizeSource, edit: &Edit<'_>) -> Result<()> {
    let s = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    for (what, map, force) in [
        ("label", &o.common_labels, b(o.force_common_labels)),
        (
            "annotation",
            &o.common_annotations,
            b(o.force_common_annotations),
        ),
    ] {
        let Some(map) = map.as_ref().filter(|m| !m.is_empty()) else {
            continue;
        };
        let mut args = s(&["add", what]);
        if force {
            args.push("--force".into());
        }
        if what == "label" && b(o.label_without_selector) {
            args.push("--without-selector".into());
        }
        args.push("--".into());
        args.push(
            map.iter()
                .map(|(k, v)| format!("{k}:{v}"))
                .collect::<Vec<_>>()
                .join(","),
        );
        edit(args)?;
    }
    Ok(())
}

/// `spec.source.kustomize.components` as `kustomize edit add component` takes them: each
/// beneath the repository and local (its own kustomization checked), a missing one skipped with
/// `ignoreMissingComponents` and refused otherwise.
fn components(ctx: &Context<'_>, o: &KustomizeSource) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for c in v(&o.components) {
        let rel =
            normalize_within(&ctx.app.join(c)).ok_or_else(|| Error::PathOutsideRepository {
                field: "spec.source.kustomize.components".into(),
                path: c.clone(),
            })?;
        if !ctx.repo.exists(&rel) {
            if b(o.ignore_missing_components) {
                continue;
            }
            return Err(Error::PathNotFound {
                field: "spec.source.kustomize.components".into(),
                path: c.clone(),
            });
        }
        let mut remotes = Vec::new();
        check_paths(ctx, ctx.repo, "", &rel, &mut BTreeSet::new(), &mut remotes)?;
        if let Some(f) = remotes.first() {
            return Err(Error::RemoteBaseRefused {
                field: f.field.clone(),
                url: crate::redact::strip_url_credentials(&f.entry),
                reason: "remote bases of spec.source.kustomize.components are not supported".into(),
            });
        }
        out.push(c.clone());
    }
    Ok(out)
}

/// Appends `spec.source.kustomize.patches` to the kustomization `file` of the copy (each
/// patch's `path` beneath the repository).
fn add_patches(ctx: &Context<'_>, file: &Path, o: &KustomizeSource) -> Result<()> {
    let contents = std::fs::read_to_string(file).map_err(Error::io("reading", file))?;
    let display = file.display().to_string();
    let mut doc = first_document(&contents, &display)?;
    let patches = doc.as_object_mut().map(|m| {
        m.entry("patches")
            .or_insert_with(|| Value::Array(Vec::new()))
    });
    if let Some(Value::Array(list)) = patches {
        for p in v(&o.patches) {
            if !text(&p.path).is_empty() {
                normalize_within(&ctx.app.join(text(&p.path))).ok_or_else(|| {
                    Error::PathOutsideRepository {
                        field: "spec.source.kustomize.patches".into(),
                        path: text(&p.path).to_owned(),
                    }
                })?;
            }
            list.push(serde_json::to_value(p).unwrap_or(Value::Null));
        }
    }
    // JSON is YAML, and kustomize reads it as such.
    std::fs::write(file, doc.to_string()).map_err(Error::io("writing", file))
}
