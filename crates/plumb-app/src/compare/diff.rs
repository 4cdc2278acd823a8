//! Diffing the pairs of a comparison. The I/O half (server-side dry runs, or a cached result)
//! runs on the Application's task; the CPU half (normalisers and jq ignore rules, each rule up to
//! its time limit per object) runs in one batch per Application on the blocking pool, never on a
//! runtime worker.

use plumb_diff::{DiffConfig, DiffResult, IgnoreOptions, IgnoreRules, Pair, Strategy};
use plumb_model::application::{Application, SyncStatusCode};
use serde_json::Value;

use super::options::CompareOptions;
use super::outcome::ComparedResource;
use crate::context::{Cluster, Engines};
use crate::diff_cache::{DiffScope, Hit, Probe};
use crate::error::{Error, Result};
use crate::written::Written;

/// How the pairs of one Application are diffed.
pub(super) struct DiffSetup {
    /// The compiled ignore rules (system-level and the Application's `ignoreDifferences`).
    pub(super) ignore: IgnoreRules,
    pub(super) config: DiffConfig,
    /// Identifies the configuration: cached results are only valid under the same one.
    pub(super) scope: DiffScope,
}

/// Compiles the ignore rules and builds the diff configuration. Compiling runs each jq
/// expression on a made-up object (up to its time limit): CPU work, on the blocking pool.
pub(super) async fn setup(
    app: &Application,
    engines: &Engines,
    opts: &CompareOptions,
) -> Result<DiffSetup> {
    let app_json = serde_json::to_value(app).map_err(|e| Error::InvalidApplication {
        name: app.name().to_string(),
        reason: e.to_string(),
    })?;
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
    Ok(DiffSetup {
        ignore,
        config,
        scope: DiffScope {
            config_id,
            status: engines.diff.normalize.status,
        },
    })
}

/// One pair on its way to the diff batch.
pub(super) struct Planned {
    pub(super) pair: Pair,
    /// How to diff it; `None` for hooks.
    pub(super) plan: Option<DiffPlan>,
    pub(super) hook: bool,
    pub(super) version: String,
    pub(super) sync_wave: i64,
    pub(super) shared_with: Option<String>,
}

/// What the I/O half of a diff found: the diff itself is computed later, off the runtime.
pub(super) enum DiffPlan {
    /// The server-side result of an unchanged pair under the same configuration.
    Cached(Box<DiffResult>),
    /// Offline three-way diff; with the reason when a server-side dry run failed.
    Offline { fallback: Option<String> },
    /// Server-side diff against the object the dry run returned.
    ServerSide(Value),
}

/// The I/O half of diffing one pair: the server-side dry run (retried when the live object
/// changed in between, which updates `p.live`), or a cached result.
pub(super) async fn plan(
    cluster: &Cluster,
    p: &mut Pair,
    scope: DiffScope,
    written: Option<&Written>,
) -> Result<DiffPlan> {
    let (Some(desired), Some(live)) = (p.desired.clone(), &p.live) else {
        return Ok(DiffPlan::Offline { fallback: None });
    };
    // The sync that just applied this very object answered what a dry run would.
    let predicted = written
        .and_then(|w| w.prediction(&p.key, &desired, live).cloned())
        .or_else(|| cluster.applied.take_prediction(&p.key, &desired, live));
    // An answer for another version with the same basis is made that version's answer.
    let rebased = |answer: &Value, live: &Value| plumb_diff::rebase_answer(answer, live, &desired);
    if let Some(predicted) = predicted {
        return Ok(DiffPlan::ServerSide(rebased(&predicted, live)));
    }
    // Results depend on the ignore rules and options too: the configuration is in the key.
    if let Some(probe) = Probe::for_pair(scope, p) {
        match cluster.diff_cache.get(&probe) {
            Some(Hit::Result(hit)) => return Ok(DiffPlan::Cached(hit)),
            Some(Hit::Answer(answer)) => return Ok(DiffPlan::ServerSide(rebased(&answer, live))),
            None => {}
        }
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
        // Another writer may change the object between our read and the dry run; an answer
        // for a version that differs from the one read only where the diff takes live's values
        // (a Deployment's revision annotation) stands, any other is asked again.
        let rv = |v: &Value| v.pointer("/metadata/resourceVersion").cloned();
        if attempts >= 3 || p.live.as_ref().map(rv) == Some(rv(&predicted)) {
            return Ok(DiffPlan::ServerSide(predicted));
        }
        if let Some(live) = &p.live
            && plumb_diff::answer_basis(live, &desired)
                == plumb_diff::answer_basis(&predicted, &desired)
        {
            return Ok(DiffPlan::ServerSide(plumb_diff::rebase_answer(
                &predicted, live, &desired,
            )));
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

/// A pair's diff and, for a server-side one, the dry run's answer it came from (kept with the
/// result in the cache).
pub(super) type Diffed = (DiffResult, Option<Value>);

/// The CPU half for every planned pair, in one batch on the blocking pool: each pair with its
/// diff.
pub(super) async fn run(
    planned: Vec<Planned>,
    config: DiffConfig,
) -> Result<Vec<(Planned, Option<Diffed>)>> {
    tokio::task::spawn_blocking(move || {
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
    .map_err(|e| Error::Task(e.to_string()))?
}

/// The diff a plan calls for, with the dry run's answer when the result is to be cached.
fn run_plan(p: &Pair, plan: DiffPlan, config: &DiffConfig) -> Result<Diffed> {
    let diff_err = |source| Error::Diff {
        key: p.key.clone(),
        source: Box::new(source),
    };
    match plan {
        DiffPlan::Cached(hit) => Ok((*hit, None)),
        DiffPlan::Offline { fallback } => {
            let mut r = plumb_diff::diff(p, Strategy::ThreeWay, config).map_err(diff_err)?;
            if fallback.is_some() {
                r.strategy.fallback_reason = fallback;
            }
            Ok((r, None))
        }
        DiffPlan::ServerSide(predicted) => plumb_diff::diff(
            p,
            Strategy::ServerSide {
                predicted_live: &predicted,
            },
            config,
        )
        .map(|r| (r, Some(predicted)))
        .map_err(diff_err),
    }
}

/// The compared resources (without health yet), ordered by key; server-side results are kept
/// for the next comparison of the same pair.
pub(super) fn resources(
    cluster: &Cluster,
    scope: DiffScope,
    diffed: Vec<(Planned, Option<Diffed>)>,
) -> Vec<ComparedResource> {
    let mut resources = Vec::with_capacity(diffed.len());
    for (e, diff) in diffed {
        let p = e.pair;
        let diff = diff.map(|(result, answer)| {
            if let Some(answer) = answer
                && let Some(probe) = Probe::for_pair(scope, &p)
            {
                cluster.diff_cache.insert(probe, result.clone(), &answer);
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
    resources
}
