//! Comparison of one Application: render → prepare desired objects → read live → pair → diff →
//! health. The controller writes the result into `status`; `plumb app diff` and
//! `plumb app manifests` print it. Both use this one function so they cannot disagree.
//!
//! The steps: `desired` (render, prepare), `live` (read from the live cache or the API server),
//! `diff` (server-side dry runs or cached results, then the diffs in one blocking batch), and
//! health here.

use std::collections::BTreeSet;
use std::sync::Arc;

use plumb_diff::{Pair, PairOptions};
use plumb_health::{AppResource, HealthStatus};
use plumb_model::ResourceKey;
use plumb_model::application::{Application, ApplicationSource, SyncStatusCode};
use plumb_source::Renderer;
use serde_json::Value;

use crate::context::{Cluster, Engines};
use crate::error::{Error, Result};

mod desired;
mod diff;
mod live;
mod options;
mod outcome;

pub use options::CompareOptions;
pub use outcome::{ComparedResource, Comparison, SkippedObject};
pub use plumb_source::Refresh;

use crate::written::Written;
use desired::short_version;

/// Compares an Application with its destination cluster: render → prepare the desired objects →
/// read the live ones → pair → diff → health. The caches are the comparison's collaborators: the
/// renderer's manifest cache, the cluster's live cache and its server-side diff results.
pub async fn compare(
    app: &Application,
    engines: &Engines,
    cluster: &Cluster,
    renderer: &Arc<Renderer>,
    opts: &CompareOptions,
) -> Result<Comparison> {
    compare_with(app, engines, cluster, renderer, opts, None).await
}

/// [`compare`], with the desired objects taken from `local_manifests` (an operation's
/// `sync.manifests`, `app sync --local`) instead of rendered, when given: as Argo CD's
/// `CompareAppState` with local manifests, the comparison then has no revision.
pub async fn compare_with(
    app: &Application,
    engines: &Engines,
    cluster: &Cluster,
    renderer: &Arc<Renderer>,
    opts: &CompareOptions,
    local_manifests: Option<&[String]>,
) -> Result<Comparison> {
    compare_in(app, engines, cluster, renderer, opts, local_manifests, None).await
}

/// [`compare`] right after a sync that wrote `written`: the objects it applied are read from its
/// answers (or the live cache once it has caught up), the ones it touched otherwise from the API
/// server, the rest from the live cache; an applied object that did not change since needs no
/// dry run ([`Written`]).
pub async fn compare_after_sync(
    app: &Application,
    engines: &Engines,
    cluster: &Cluster,
    renderer: &Arc<Renderer>,
    opts: &CompareOptions,
    written: &Written,
) -> Result<Comparison> {
    compare_in(app, engines, cluster, renderer, opts, None, Some(written)).await
}

/// An operation's local manifests as a render. As Argo CD: refused while source integrity
/// applies (a ComparisonError, so no sync runs on them).
fn local_rendered(
    manifests: &[String],
    opts: &CompareOptions,
    sources: &[ApplicationSource],
) -> Result<plumb_source::Rendered> {
    if crate::signatures::has_criteria(opts.source_integrity.as_ref(), sources) {
        return Ok(plumb_source::Rendered {
            manifests: Vec::new(),
            sources: Vec::new(),
            integrity: vec![crate::signatures::LOCAL_MANIFESTS_REFUSED.to_string()],
        });
    }
    Ok(plumb_source::Rendered {
        manifests: plumb_source::local_manifests(manifests)?,
        sources: Vec::new(),
        integrity: Vec::new(),
    })
}

async fn compare_in(
    app: &Application,
    engines: &Engines,
    cluster: &Cluster,
    renderer: &Arc<Renderer>,
    opts: &CompareOptions,
    local_manifests: Option<&[String]>,
    written: Option<&Written>,
) -> Result<Comparison> {
    let dest_ns = app.spec.destination.namespace.clone().unwrap_or_default();
    let instance = app.instance_name(&engines.control_namespace);
    let catalog = cluster.discovery.catalog();

    let sources = desired::sources(app, opts);
    let rendered = match local_manifests {
        Some(manifests) => local_rendered(manifests, opts, &sources)?,
        None => desired::render(app, &sources, &catalog, renderer, opts).await?,
    };
    let desired = desired::prepare(&rendered, &catalog, engines, &dest_ns, &instance);

    let desired_keys = managed_keys(cluster, desired.objects.iter().map(|d| &d.value))?;
    let reads = match written {
        Some(w) => live::Reads::AfterSync(w),
        None if opts.fresh_reads => live::Reads::Fresh,
        None => live::Reads::Cache,
    };
    let live = live::read(app, cluster, engines, &instance, &desired_keys, reads).await?;

    let pair_opts = PairOptions {
        default_namespace: dest_ns,
        cluster_scoped: desired.cluster_scoped,
    };
    let pairs = plumb_diff::pair(desired.objects, live, &pair_opts)
        .map_err(|e| Error::Pair(Box::new(e)))?;

    let setup = diff::setup(app, engines, opts).await?;
    let (planned, mut warnings) =
        plan_diffs(app, engines, cluster, &instance, pairs, &setup, written).await?;
    // As Argo CD: a revision that fails the project's signatureKeys is a ComparisonError beside
    // the diff, and no sync runs while it stands.
    warnings.extend(rendered.integrity.iter().map(|m| {
        (
            plumb_model::application::condition::COMPARISON_ERROR.to_string(),
            m.clone(),
        )
    }));
    let diffed = diff::run(planned, setup.config).await?;
    let resources = diff::resources(cluster, setup.scope, diffed);

    let (resources, health) = assess_health(app, engines, cluster, resources).await?;
    Ok(Comparison {
        revision: rendered
            .sources
            .first()
            .map(|s| s.commit.clone())
            .unwrap_or_default(),
        revisions: rendered.sources.iter().map(|s| s.commit.clone()).collect(),
        sources,
        source_types: rendered
            .sources
            .iter()
            .filter_map(|s| s.source_type.map(|t| t.to_string()))
            .collect(),
        sync: app_sync(&resources),
        images: images(resources.iter().filter_map(|r| r.live.as_ref())),
        resources,
        skipped: desired.skipped,
        health,
        warnings,
        ignore: setup.ignore,
    })
}

/// The desired objects' keys. As gitops-engine's `GetManagedLiveObjs`, a namespaced cluster
/// refuses the whole comparison for the first desired object outside its namespaces (or
/// cluster-scoped without `clusterResources`), before anything is read: nothing is then synced
/// or pruned.
fn managed_keys<'a>(
    cluster: &Cluster,
    desired: impl Iterator<Item = &'a Value>,
) -> Result<BTreeSet<ResourceKey>> {
    let mut keys = BTreeSet::new();
    for key in desired.map(ResourceKey::of) {
        if let Some(refusal) = cluster.scope.refusal(&key) {
            return Err(Error::LiveState(refusal));
        }
        keys.insert(key);
    }
    Ok(keys)
}

/// The I/O half of every pair's diff (dry runs stay on this task), with what each pair needs
/// later: hook, version, wave, and the other Application a shared object is tracked by (one
/// `SharedResourceWarning` each).
async fn plan_diffs(
    app: &Application,
    engines: &Engines,
    cluster: &Cluster,
    instance: &str,
    pairs: Vec<Pair>,
    setup: &diff::DiffSetup,
    written: Option<&Written>,
) -> Result<(Vec<diff::Planned>, Vec<(String, String)>)> {
    let mut planned = Vec::with_capacity(pairs.len());
    let mut warnings = Vec::new();
    for mut p in pairs {
        let obj = p.desired.as_ref().or(p.live.as_ref());
        let hook = obj.is_some_and(plumb_sync::hook::is_hook);
        let version = obj.map(short_version).unwrap_or_default();
        let sync_wave = p
            .desired
            .as_ref()
            .map(plumb_sync::hook::sync_wave)
            .unwrap_or(0);
        let shared_with = shared_with(engines, instance, &p);
        if let Some(other) = &shared_with {
            warnings.push((
                "SharedResourceWarning".to_string(),
                format!(
                    "{}/{} is part of applications {}/{} and {other}",
                    p.key.kind,
                    p.key.name,
                    app.namespace(),
                    app.name()
                ),
            ));
        }
        let plan = if hook {
            None
        } else {
            Some(diff::plan(cluster, &mut p, setup.scope, written).await?)
        };
        planned.push(diff::Planned {
            pair: p,
            plan,
            hook,
            version,
            sync_wave,
            shared_with,
        });
    }
    Ok((planned, warnings))
}

/// The other Application whose tracking the live object of a declared pair carries. Argo CD's
/// wording names the other by its instance name (`ns_name` for an Application outside the
/// control namespace reads `ns/name`).
fn shared_with(engines: &Engines, instance: &str, p: &Pair) -> Option<String> {
    let (Some(_), Some(l)) = (&p.desired, &p.live) else {
        return None;
    };
    let t = live::tracked_by(engines, &p.key, l)?;
    (t.app != instance && t.self_referencing).then(|| t.app.replace('_', "/"))
}

/// Health per object and for the Application (hooks and ignored objects skipped inside). Health
/// scripts are CPU work (bounded by their limits, but up to a second each): they run on the
/// blocking pool, never on a runtime worker.
async fn assess_health(
    app: &Application,
    engines: &Engines,
    cluster: &Cluster,
    resources: Vec<ComparedResource>,
) -> Result<(Vec<ComparedResource>, HealthStatus)> {
    let app_key = ResourceKey::new("argoproj.io", "Application", app.namespace(), app.name());
    let assessor = engines.assessor.clone();
    let facts = cluster.health_facts();
    let (mut resources, app_health) = tokio::task::spawn_blocking(move || {
        let inputs: Vec<AppResource<'_>> = resources
            .iter()
            .map(|r| AppResource {
                key: &r.key,
                target: r.desired.as_ref(),
                live: r.live.as_ref(),
            })
            .collect();
        let app_health = assessor.app_health_in(&app_key, &inputs, &facts);
        (resources, app_health)
    })
    .await
    .map_err(|e| Error::Task(e.to_string()))?;
    for (r, h) in resources.iter_mut().zip(app_health.resources) {
        r.health = if r.hook { None } else { h };
    }
    Ok((resources, app_health.status))
}

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The Application's sync status from its resources: OutOfSync when any is, except extraneous
/// objects marked `IgnoreExtraneous`.
pub fn app_sync(resources: &[ComparedResource]) -> SyncStatusCode {
    if resources.iter().any(|r| {
        r.status == Some(SyncStatusCode::OutOfSync)
            && !(r.requires_pruning && r.live.as_ref().is_some_and(ignores_extraneous))
    }) {
        SyncStatusCode::OutOfSync
    } else {
        SyncStatusCode::Synced
    }
}

fn ignores_extraneous(obj: &Value) -> bool {
    annotation(obj, plumb_model::annotations::COMPARE_OPTIONS)
        .is_some_and(|o| o.split(',').any(|p| p.trim() == "IgnoreExtraneous"))
}

/// Container images of workloads (pod templates, pods, cron jobs), sorted and unique.
pub fn images<'a>(objects: impl Iterator<Item = &'a Value>) -> Vec<String> {
    let mut out = BTreeSet::new();
    for obj in objects {
        for spec in [
            obj.pointer("/spec/template/spec"),
            obj.pointer("/spec/jobTemplate/spec/template/spec"),
            obj.get("spec")
                .filter(|_| obj.get("kind").and_then(Value::as_str) == Some("Pod")),
        ]
        .into_iter()
        .flatten()
        {
            for list in ["initContainers", "containers"] {
                for c in spec
                    .get(list)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(image) = c.get("image").and_then(Value::as_str) {
                        out.insert(image.to_string());
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    #[test]
    fn images_from_templates_pods_and_cronjobs() {
        let d = json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"image": "b:1"}], "initContainers": [{"image": "a:1"}]}}}});
        let p =
            json!({"kind": "Pod", "spec": {"containers": [{"image": "b:1"}, {"image": "c:2"}]}});
        let c = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"image": "d:3"}]}}}}}});
        assert_eq!(images([d, p, c].iter()), ["a:1", "b:1", "c:2", "d:3"]);
    }
}
