//! Comparison of one Application: render → prepare desired objects → read live → pair → diff →
//! health. The controller writes the result into `status`; `plumb app diff` and
//! `plumb app manifests` print it. Both use this one function so they cannot disagree.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use plumb_diff::{
    DiffConfig, DiffResult, IgnoreOptions, IgnoreRules, Pair, PairOptions, SourcedObject, Strategy,
};
use plumb_health::{AppResource, HealthStatus};
use plumb_model::annotations::TRACKING_ID;
use plumb_model::application::{Application, ApplicationSource, SyncStatusCode};
use plumb_model::{GroupKind, ResourceKey};
use plumb_source::{RenderRequest, Rendered, Renderer};
use serde_json::{Value, json};

use crate::context::{Cluster, Engines};
use crate::error::{Error, Result};

pub use plumb_source::Refresh;

/// Options of one comparison.
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    /// Compare against this revision instead of the Application's target (a sync's `revision`).
    pub revision: Option<String>,
    /// Cache use for the render.
    pub refresh: Refresh,
    /// Name managers of drifted fields (diff attribution).
    pub attribution: bool,
    /// Read every live object from the API server instead of the live cache (right after a
    /// sync, when the cache may not have seen the writes yet).
    pub fresh_reads: bool,
    /// Compare against these sources instead of the Application's (an operation's
    /// `sync.source`, or `sync.sources` of a multi-source rollback, with its revisions applied).
    pub sources: Option<Vec<ApplicationSource>>,
    /// The project's `sourceRepos`, which kustomize remote bases must match. Not optional: every
    /// caller (controller, `plumb app diff/manifests`, the API server) loads the Application's
    /// AppProject first and refuses to render without it.
    pub source_repos: Vec<String>,
}

/// One compared object.
#[derive(Debug, Clone)]
pub struct ComparedResource {
    /// Identity (namespace defaulted).
    pub key: ResourceKey,
    /// API version of the desired object, else of the live one.
    pub version: String,
    /// What Git declares, prepared for apply (namespace, tracking annotation).
    pub desired: Option<Value>,
    /// The file (and document) it came from.
    pub source: Option<String>,
    /// What the cluster holds.
    pub live: Option<Value>,
    /// The diff; `None` for hooks.
    pub diff: Option<DiffResult>,
    /// Sync status; `None` for hooks.
    pub status: Option<SyncStatusCode>,
    /// Health; `None` when the kind has none (or the object is a hook or ignored).
    pub health: Option<HealthStatus>,
    /// Live object tracked by this Application that Git no longer declares.
    pub requires_pruning: bool,
    /// `argocd.argoproj.io/sync-wave` (else `helm.sh/hook-weight`), default 0.
    pub sync_wave: i64,
    /// Whether the object is a sync hook.
    pub hook: bool,
    /// Another Application (its instance name, as Argo CD names it in messages) whose tracking
    /// annotation the live object carries.
    pub shared_with: Option<String>,
}

/// An object Git declares with `argocd.argoproj.io/hook: Skip`: never applied or compared, but
/// listed in `status.resources` (without status or health), as Argo CD lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedObject {
    /// Identity (namespace defaulted).
    pub key: ResourceKey,
    /// API version.
    pub version: String,
    /// `argocd.argoproj.io/sync-wave`, default 0.
    pub sync_wave: i64,
}

/// The result of comparing one Application.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The commit compared against (first source), and every source's commit.
    pub revision: String,
    /// Commits of all sources, in `spec.sources` order.
    pub revisions: Vec<String>,
    /// The sources compared (with the revision override applied).
    pub sources: Vec<ApplicationSource>,
    /// Detected source type of each source (`Helm`, `Kustomize`, `Directory`, ...).
    pub source_types: Vec<String>,
    /// Every compared object, ordered by key.
    pub resources: Vec<ComparedResource>,
    /// Objects Git marks `Skip`, ordered by key.
    pub skipped: Vec<SkippedObject>,
    /// Application sync status.
    pub sync: SyncStatusCode,
    /// Application health.
    pub health: HealthStatus,
    /// Warnings found while comparing (`SharedResourceWarning`, ...): (type, message).
    pub warnings: Vec<(String, String)>,
    /// Images of the live workloads.
    pub images: Vec<String>,
    /// The ignore rules compared with (a sync with `RespectIgnoreDifferences=true` uses them).
    pub ignore: IgnoreRules,
}

/// Compares an Application with its destination cluster.
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
    let dest_ns = app.spec.destination.namespace.clone().unwrap_or_default();
    let instance = app.instance_name(&engines.control_namespace);
    let mut sources: Vec<ApplicationSource> = match &opts.sources {
        Some(s) if !s.is_empty() => s.clone(),
        _ => app.sources().into_iter().cloned().collect(),
    };
    if let (Some(rev), Some(first)) = (&opts.revision, sources.first_mut()) {
        first.target_revision = Some(rev.clone());
    }
    let catalog = cluster.discovery.catalog();
    let request = RenderRequest {
        sources: sources.clone(),
        app_name: app.name().to_string(),
        namespace: dest_ns.clone(),
        project: app.spec.project.clone(),
        kube_version: String::new(),
        api_versions: catalog
            .preferred()
            .map(|k| {
                let r = &k.resource;
                if r.group.is_empty() {
                    r.version.clone()
                } else {
                    format!("{}/{}", r.group, r.version)
                }
            })
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        refresh: opts.refresh,
        source_repos: Some(opts.source_repos.clone()),
        generate_paths: app
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(plumb_model::annotations::MANIFEST_GENERATE_PATHS))
            .cloned(),
        owner: Some(format!("{}/{}", app.namespace(), app.name())),
    };
    let rendered: Rendered = if let Some(manifests) = local_manifests {
        Rendered {
            manifests: plumb_source::local_manifests(manifests)?,
            sources: Vec::new(),
        }
    } else {
        let renderer = renderer.clone();
        tokio::task::spawn_blocking(move || renderer.render(&request))
            .await
            .map_err(|e| Error::Task(e.to_string()))??
    };

    // Desired objects: namespace defaulted for namespaced kinds, tracking annotation added.
    let mut desired = Vec::new();
    let mut skipped = Vec::new();
    let mut cluster_scoped = BTreeSet::new();
    for m in &rendered.manifests {
        let mut obj = m.object.clone();
        let skip = plumb_sync::hook::is_skipped(&obj);
        let gk = GroupKind::of(&obj);
        let namespaced = catalog.is_namespaced(&gk);
        if namespaced == Some(false) {
            cluster_scoped.insert(gk.clone());
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("namespace");
            }
        } else if ResourceKey::of(&obj).namespace.is_empty()
            && !dest_ns.is_empty()
            && let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.insert("namespace".into(), Value::String(dest_ns.clone()));
        }
        if skip {
            skipped.push(SkippedObject {
                key: ResourceKey::of(&obj),
                version: obj
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .map(|v| v.rsplit('/').next().unwrap_or(v).to_string())
                    .unwrap_or_default(),
                sync_wave: plumb_sync::hook::sync_wave(&obj),
            });
            continue;
        }
        // A `generateName` object (usually a hook) has no name until the sync names it; it is
        // known by its prefix meanwhile, so two such hooks of one kind stay apart.
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
        let key = ResourceKey::of(&obj);
        // What `application.resourceTrackingMethod` says to write, as Argo CD writes it: the
        // tracking annotation, the instance label, or both (found by the conformance harness:
        // Plumb wrote the annotation whatever the method).
        let method = engines.tracking.method;
        if method != plumb_kube::TrackingMethod::Label {
            set_annotation(
                &mut obj,
                TRACKING_ID,
                &plumb_kube::tracking_id(&instance, &key),
            );
        }
        if method != plumb_kube::TrackingMethod::Annotation {
            set_label(&mut obj, &engines.tracking.instance_label, &instance);
        }
        desired.push(SourcedObject {
            value: obj,
            source: m.origin(),
        });
    }

    // Live objects: the desired ones (wherever they are) and those tracked by this Application.
    let desired_keys: BTreeSet<ResourceKey> =
        desired.iter().map(|d| ResourceKey::of(&d.value)).collect();
    let tracked = tracked_keys(app, cluster, &instance);
    check_available(cluster, desired_keys.iter().chain(&tracked)).await?;
    let mut live = Vec::new();
    let mut seen = BTreeSet::new();
    for key in &desired_keys {
        if let Some(obj) = read_live(cluster, key, opts.fresh_reads).await? {
            seen.insert(key.clone());
            live.push(obj);
        }
    }
    for key in tracked {
        if seen.contains(&key) || desired_keys.contains(&key) {
            continue;
        }
        if let Some(obj) = read_live(cluster, &key, opts.fresh_reads).await? {
            let tracked = tracked_by(engines, &key, &obj);
            if tracked
                .as_ref()
                .is_some_and(|t| t.app == instance && t.self_referencing)
            {
                live.push(obj);
            }
        }
    }

    let pair_opts = PairOptions {
        default_namespace: dest_ns.clone(),
        cluster_scoped,
    };
    let pairs =
        plumb_diff::pair(desired, live, &pair_opts).map_err(|e| Error::Pair(Box::new(e)))?;

    let app_json = serde_json::to_value(app).map_err(|e| Error::InvalidApplication {
        name: app.name().to_string(),
        reason: e.to_string(),
    })?;
    // Compiling the rules runs each jq expression on a made-up object (up to its time limit):
    // CPU work, on the blocking pool like the diffs below.
    let mut rules = engines.diff.rules.clone();
    rules.extend(
        plumb_diff::application_rules(&app_json, &format!("Application {}", app.name()))
            .map_err(|e| Error::Pair(Box::new(e)))?,
    );
    let allow_sensitive = engines.diff.allow_sensitive;
    let ignore = tokio::task::spawn_blocking(move || {
        IgnoreRules::compile(
            rules,
            IgnoreOptions {
                allow_sensitive,
                ..IgnoreOptions::default()
            },
        )
    })
    .await
    .map_err(|e| Error::Task(e.to_string()))?
    .map_err(|e| Error::Pair(Box::new(e)))?;
    let config_id = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!(
            "{ignore:?}|{:?}|{}",
            engines.diff.normalize, opts.attribution
        )
        .hash(&mut h);
        h.finish()
    };
    let config = DiffConfig::default()
        .normalize(engines.diff.normalize.clone())
        .ignore(ignore.clone())
        .attribution(opts.attribution);

    // Server-side dry runs are I/O and stay on this task. The diffs themselves (normalisers and
    // jq ignore rules, each rule up to its time limit per object) are CPU work: they run in one
    // batch per Application on the blocking pool, never on a runtime worker.
    let mut planned = Vec::with_capacity(pairs.len());
    let mut warnings = Vec::new();
    for mut p in pairs {
        let obj = p.desired.as_ref().or(p.live.as_ref());
        let hook = obj.is_some_and(plumb_sync::hook::is_hook);
        let version = obj
            .and_then(|o| o.get("apiVersion"))
            .and_then(Value::as_str)
            .map(|v| v.rsplit('/').next().unwrap_or(v).to_string())
            .unwrap_or_default();
        let sync_wave = p
            .desired
            .as_ref()
            .map(plumb_sync::hook::sync_wave)
            .unwrap_or(0);
        let mut shared_with = None;
        if let (Some(_), Some(l)) = (&p.desired, &p.live)
            && let Some(t) = tracked_by(engines, &p.key, l)
            && t.app != instance
            && t.self_referencing
        {
            // Argo CD's wording: this Application by its qualified name (`namespace/name`,
            // `QualifiedName()`), then the other by its instance name (`ns_name` for an
            // Application outside the control namespace reads `ns/name`).
            let other = t.app.replace('_', "/");
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
            shared_with = Some(other);
        }
        let plan = if hook {
            None
        } else {
            Some(plan_diff(cluster, &mut p, config_id).await?)
        };
        planned.push(Planned {
            pair: p,
            plan,
            hook,
            version,
            sync_wave,
            shared_with,
        });
    }
    let diffed = tokio::task::spawn_blocking(move || {
        planned
            .into_iter()
            .map(|mut e| {
                let diff = e
                    .plan
                    .take()
                    .map(|plan| run_plan(&e.pair, plan, &config))
                    .transpose()?;
                Ok((e, diff))
            })
            .collect::<Result<Vec<_>>>()
    })
    .await
    .map_err(|e| Error::Task(e.to_string()))??;

    let mut resources = Vec::with_capacity(diffed.len());
    for (e, diff) in diffed {
        let p = e.pair;
        let diff = diff.map(|(result, cacheable)| {
            if cacheable && let Some(k) = plumb_diff::CacheKey::for_pair(&p) {
                cache(cluster)
                    .entry(config_id)
                    .or_default()
                    .insert(k, result.clone());
            }
            result
        });
        let hook = e.hook;
        let requires_pruning = p.desired.is_none() && p.live.is_some() && !hook;
        let status = if hook {
            None
        } else if p.desired.is_none()
            || p.live.is_none()
            || diff.as_ref().is_some_and(|d| d.modified)
        {
            Some(SyncStatusCode::OutOfSync)
        } else {
            Some(SyncStatusCode::Synced)
        };
        resources.push(ComparedResource {
            key: p.key.clone(),
            version: e.version,
            source: p.desired_source.clone(),
            desired: p.desired,
            live: p.live,
            diff,
            status,
            health: None,
            requires_pruning,
            sync_wave: e.sync_wave,
            hook,
            shared_with: e.shared_with,
        });
    }
    resources.sort_by(|a, b| a.key.cmp(&b.key));

    // Health, per object and for the Application (hooks and ignored objects skipped inside).
    let app_key = ResourceKey::new("argoproj.io", "Application", app.namespace(), app.name());
    // Health scripts are CPU work (bounded by their limits, but up to a second each): they run
    // on the blocking pool, never on a runtime worker.
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

    let sync = app_sync(&resources);
    let images = images(resources.iter().filter_map(|r| r.live.as_ref()));
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
        resources,
        skipped: {
            skipped.sort_by(|a, b| a.key.cmp(&b.key));
            skipped
        },
        sync,
        health: app_health.status,
        warnings,
        images,
        ignore,
    })
}

/// One pair on its way to the diff batch.
struct Planned {
    pair: Pair,
    /// How to diff it; `None` for hooks.
    plan: Option<DiffPlan>,
    hook: bool,
    version: String,
    sync_wave: i64,
    shared_with: Option<String>,
}

/// What the I/O half of a diff found: the diff itself is computed later, off the runtime.
enum DiffPlan {
    /// The server-side result of an unchanged pair under the same configuration.
    Cached(Box<DiffResult>),
    /// Offline three-way diff; with the reason when a server-side dry run failed.
    Offline { fallback: Option<String> },
    /// Server-side diff against the object the dry run returned.
    ServerSide(Value),
}

/// The I/O half of diffing one pair: the server-side dry run (retried when the live object
/// changed in between, which updates `p.live`), or a cached result.
async fn plan_diff(cluster: &Cluster, p: &mut Pair, config_id: u64) -> Result<DiffPlan> {
    let (Some(desired), Some(_)) = (p.desired.clone(), &p.live) else {
        return Ok(DiffPlan::Offline { fallback: None });
    };
    // Results depend on the ignore rules and options too: one cache per configuration.
    let cache_key = plumb_diff::CacheKey::for_pair(p);
    if let Some(k) = &cache_key
        && let Some(hit) = cache(cluster).entry(config_id).or_default().get(k)
    {
        return Ok(DiffPlan::Cached(Box::new(hit.clone())));
    }
    let mut attempts = 0;
    loop {
        attempts += 1;
        let predicted = match cluster.applier.dry_run_apply(&desired).await {
            Ok(v) => v,
            Err(e) => {
                // The dry run can fail for reasons the sync will report (an invalid field, a
                // denied admission): compare offline and say why.
                return Ok(DiffPlan::Offline {
                    fallback: Some(format!(
                        "server-side dry run failed: {}",
                        crate::error::chain(&e)
                    )),
                });
            }
        };
        // A controller may write the object between our read and the dry run (a Deployment's
        // revision annotation, say); comparing across two versions would show its write as drift.
        let rv = |v: &Value| v.pointer("/metadata/resourceVersion").cloned();
        if attempts >= 3 || p.live.as_ref().map(rv) == Some(rv(&predicted)) {
            return Ok(DiffPlan::ServerSide(predicted));
        }
        match cluster.applier.get(&p.key).await? {
            Some(fresh) => p.live = Some(fresh),
            None => {
                p.live = None;
                return Ok(DiffPlan::Offline { fallback: None });
            }
        }
    }
}

/// The CPU half: the diff a plan calls for, and whether its result may be cached. Runs on the
/// blocking pool.
fn run_plan(p: &Pair, plan: DiffPlan, config: &DiffConfig) -> Result<(DiffResult, bool)> {
    let diff_err = |source| Error::Diff {
        key: p.key.clone(),
        source: Box::new(source),
    };
    match plan {
        DiffPlan::Cached(hit) => Ok((*hit, false)),
        DiffPlan::Offline { fallback } => {
            let mut r = plumb_diff::diff(p, Strategy::ThreeWay, config).map_err(diff_err)?;
            if fallback.is_some() {
                r.strategy.fallback_reason = fallback;
            }
            Ok((r, false))
        }
        DiffPlan::ServerSide(predicted) => plumb_diff::diff(
            p,
            Strategy::ServerSide {
                predicted_live: &predicted,
            },
            config,
        )
        .map(|r| (r, true))
        .map_err(diff_err),
    }
}

fn cache(
    cluster: &Cluster,
) -> std::sync::MutexGuard<'_, std::collections::HashMap<u64, plumb_diff::ServerSideCache>> {
    cluster.diff_cache.lock().unwrap_or_else(|e| e.into_inner())
}

async fn read_live(cluster: &Cluster, key: &ResourceKey, fresh: bool) -> Result<Option<Value>> {
    if let Some(reader) = cluster.live.as_ref().filter(|_| !fresh) {
        match reader.get(key) {
            Some(obj) => {
                if let Some(full) = obj.object() {
                    return Ok(Some(full));
                }
            }
            // The cache watches every listable kind: absence there means absence in the cluster
            // once the kind's list is complete; not for a kind new since the cache started (a
            // CRD just applied) or one whose list has not succeeded (yet): ask the API server.
            None => {
                if cluster
                    .discovery
                    .catalog()
                    .resolve(&key.group_kind(), None)
                    .is_some()
                    && reader.is_synced(&key.group_kind())
                {
                    return Ok(None);
                }
            }
        }
    }
    match cluster.applier.get(key).await {
        Ok(v) => Ok(v),
        // A kind the cluster does not serve (yet): the object is missing.
        Err(plumb_kube::Error::UnknownKind { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Fails when an object's kind belongs to an API group version the server lists but cannot serve
/// (an aggregated API whose backend is down): such an object can be neither read nor written, and
/// taking it for missing would have automation apply and prune on a false picture.
async fn check_available<'a>(
    cluster: &Cluster,
    keys: impl Iterator<Item = &'a ResourceKey>,
) -> Result<()> {
    let catalog = cluster.discovery.catalog();
    let unknown: Vec<&ResourceKey> = keys
        .filter(|k| catalog.resolve(&k.group_kind(), None).is_none())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    // Unknown to the catalog: new since the last discovery (a CRD just applied), gone, or in a
    // group version that stopped answering. Discovery again tells which.
    let catalog = cluster.discovery.refresh().await?;
    let mut group_versions = BTreeSet::new();
    let mut objects = BTreeSet::new();
    for key in unknown {
        if catalog.resolve(&key.group_kind(), None).is_some() {
            continue;
        }
        let gvs = catalog.unavailable_in(&key.group);
        if !gvs.is_empty() {
            group_versions.extend(gvs.into_iter().map(str::to_string));
            objects.insert(key.to_string());
        }
    }
    if objects.is_empty() {
        return Ok(());
    }
    Err(Error::Unavailable {
        group_versions: group_versions.into_iter().collect::<Vec<_>>().join(", "),
        objects: objects.into_iter().collect::<Vec<_>>().join(", "),
    })
}

/// Keys of live objects that may belong to this Application: from the live cache's index, or
/// (without a cache) from the resources the last status listed.
fn tracked_keys(app: &Application, cluster: &Cluster, instance: &str) -> Vec<ResourceKey> {
    if let Some(reader) = &cluster.live {
        return reader
            .app_objects(instance)
            .iter()
            .map(|o| o.key.clone())
            .collect();
    }
    app.status
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    ResourceKey::new(
                        r.group.clone().unwrap_or_default(),
                        r.kind.clone().unwrap_or_default(),
                        r.namespace.clone().unwrap_or_default(),
                        r.name.clone().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn tracked_by(engines: &Engines, key: &ResourceKey, obj: &Value) -> Option<plumb_kube::TrackedBy> {
    let map = |field: &str| -> Option<BTreeMap<String, String>> {
        obj.pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                    .collect()
            })
    };
    engines
        .tracking
        .tracked_by(key, map("annotations").as_ref(), map("labels").as_ref())
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

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The Application's sync status from its resources: OutOfSync when any is, except extraneous
/// objects marked `IgnoreExtraneous`.
pub(crate) fn app_sync(resources: &[ComparedResource]) -> SyncStatusCode {
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

    #[test]
    fn images_from_templates_pods_and_cronjobs() {
        let d = json!({"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"image": "b:1"}], "initContainers": [{"image": "a:1"}]}}}});
        let p =
            json!({"kind": "Pod", "spec": {"containers": [{"image": "b:1"}, {"image": "c:2"}]}});
        let c = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"image": "d:3"}]}}}}}});
        assert_eq!(images([d, p, c].iter()), ["a:1", "b:1", "c:2", "d:3"]);
    }
}
