//! The first steps of a comparison: render the sources, then prepare what they declare for the
//! destination (namespaces defaulted from discovery, generated names, tracking written as the
//! tracking method says).

use std::collections::BTreeSet;
use std::sync::Arc;

use plumb_diff::SourcedObject;
use plumb_kube::ApiCatalog;
use plumb_model::annotations::TRACKING_ID;
use plumb_model::application::{Application, ApplicationSource};
use plumb_model::{GroupKind, ResourceKey};
use plumb_source::{RenderRequest, Rendered, Renderer};
use serde_json::{Value, json};

use super::options::CompareOptions;
use super::outcome::SkippedObject;
use crate::context::Engines;
use crate::error::{Error, Result};

/// The sources a comparison renders: the operation's or the Application's, with the revision
/// override applied to the first.
pub(super) fn sources(app: &Application, opts: &CompareOptions) -> Vec<ApplicationSource> {
    let mut sources: Vec<ApplicationSource> = match &opts.sources {
        Some(s) if !s.is_empty() => s.clone(),
        _ => app.sources().into_iter().cloned().collect(),
    };
    if let (Some(rev), Some(first)) = (&opts.revision, sources.first_mut()) {
        first.target_revision = Some(rev.clone());
    }
    sources
}

/// Renders `sources` on a blocking thread (Git, templating tools and file reads are blocking).
pub(super) async fn render(
    app: &Application,
    sources: &[ApplicationSource],
    catalog: &ApiCatalog,
    renderer: &Arc<Renderer>,
    opts: &CompareOptions,
) -> Result<Rendered> {
    let request = RenderRequest {
        sources: sources.to_vec(),
        app_name: app.name().to_string(),
        namespace: app.spec.destination.namespace.clone().unwrap_or_default(),
        project: app.spec.project.clone(),
        kube_version: String::new(),
        api_versions: catalog.preferred_api_versions(),
        refresh: opts.refresh,
        refs_asked_at: opts.refs_asked_at,
        source_repos: Some(opts.source_repos.clone()),
        generate_paths: app
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(plumb_model::annotations::MANIFEST_GENERATE_PATHS))
            .cloned(),
        owner: Some(format!("{}/{}", app.namespace(), app.name())),
        source_integrity: opts.source_integrity.clone(),
    };
    let renderer = renderer.clone();
    tokio::task::spawn_blocking(move || renderer.render(&request))
        .await
        .map_err(|e| Error::Task(e.to_string()))?
        .map_err(Error::from)
}

/// What Git declares, ready to pair with the live objects.
pub(super) struct Desired {
    /// Objects to compare (and apply), prepared.
    pub(super) objects: Vec<SourcedObject>,
    /// Objects marked `Skip`: listed, never compared.
    pub(super) skipped: Vec<SkippedObject>,
    /// Kinds discovery says are cluster-scoped (pairing ignores their namespace).
    pub(super) cluster_scoped: BTreeSet<GroupKind>,
}

/// Desired objects: namespace defaulted for namespaced kinds (removed for cluster-scoped ones),
/// a `generateName` object named by its prefix, tracking annotation and/or label added.
pub(super) fn prepare(
    rendered: &Rendered,
    catalog: &ApiCatalog,
    engines: &Engines,
    dest_ns: &str,
    instance: &str,
) -> Desired {
    let mut desired = Desired {
        objects: Vec::new(),
        skipped: Vec::new(),
        cluster_scoped: BTreeSet::new(),
    };
    for m in &rendered.manifests {
        let mut obj = m.object.clone();
        let skip = plumb_sync::hook::is_skipped(&obj);
        let gk = GroupKind::of(&obj);
        let namespaced = catalog.is_namespaced(&gk);
        if namespaced == Some(false) {
            desired.cluster_scoped.insert(gk.clone());
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("namespace");
            }
        } else if ResourceKey::of(&obj).namespace.is_empty()
            && !dest_ns.is_empty()
            && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.insert("namespace".into(), Value::String(dest_ns.to_string()));
        }
        if skip {
            desired.skipped.push(SkippedObject {
                key: ResourceKey::of(&obj),
                version: short_version(&obj),
                sync_wave: plumb_sync::hook::sync_wave(&obj),
            });
            continue;
        }
        name_by_prefix(&mut obj);
        let key = ResourceKey::of(&obj);
        // What `application.resourceTrackingMethod` says to write, as Argo CD writes it: the
        // tracking annotation, the instance label, or both (found by the conformance harness:
        // Plumb wrote the annotation whatever the method).
        let method = engines.tracking.method;
        if method != plumb_kube::TrackingMethod::Label {
            set_annotation(
                &mut obj,
                TRACKING_ID,
                &plumb_kube::tracking_id(instance, &key, dest_ns),
            );
        }
        if method != plumb_kube::TrackingMethod::Annotation {
            set_label(&mut obj, &engines.tracking.instance_label, instance);
        }
        desired.objects.push(SourcedObject {
            value: obj,
            source: m.origin(),
        });
    }
    desired.skipped.sort_by(|a, b| a.key.cmp(&b.key));
    desired
}

/// A `generateName` object (usually a hook) has no name until the sync names it; it is known by
/// its prefix meanwhile, so two such hooks of one kind stay apart.
fn name_by_prefix(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        && let Some(prefix) = meta
            .get("generateName")
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
            .map(str::to_string)
    {
        meta.insert("name".into(), Value::String(prefix));
    }
}

fn set_label(obj: &mut Value, key: &str, value: &str) {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    let meta = &mut obj["metadata"];
    if !meta.get("labels").is_some_and(Value::is_object) {
        meta["labels"] = json!({});
    }
    meta["labels"][key] = Value::String(value.to_string());
}

fn set_annotation(obj: &mut Value, key: &str, value: &str) {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    let meta = &mut obj["metadata"];
    if !meta.get("annotations").is_some_and(Value::is_object) {
        meta["annotations"] = json!({});
    }
    meta["annotations"][key] = Value::String(value.to_string());
}

/// The version part of an object's `apiVersion` (`apps/v1` → `v1`).
pub(super) fn short_version(obj: &Value) -> String {
    obj.get("apiVersion")
        .and_then(Value::as_str)
        .map(|v| v.rsplit('/').next().unwrap_or(v).to_string())
        .unwrap_or_default()
}
