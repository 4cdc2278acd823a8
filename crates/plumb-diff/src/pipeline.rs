//! The fixed order every diff goes through, for either strategy:
//! normalize → ignore → strategy → field changes → attribution. Masking comes after, in
//! [`crate::mask::mask`], which is the only way to something renderable.

use plumb_model::annotations::LAST_APPLIED;
use plumb_model::{GroupKind, ResourceKey};
use serde_json::Value;

use crate::attribution;
use crate::changes::field_changes;
use crate::error::{Error, Result};
use crate::ignore::IgnoreRules;
use crate::managed_fields::{ManagedEntry, managed_entries};
use crate::normalize::{NormalizeOptions, align_tracking, normalize, settle_nulls};
use crate::pair::Pair;
use crate::path::FieldPath;
use crate::result::{Action, ChangeOp, DiffResult, DiffStrategy, FieldChange, StrategyUsed};
use crate::strategy::{Strategy, server_side, three_way};

/// Everything a diff needs besides the objects: normalizer options, the compiled ignore rules
/// and whether to attribute drift.
#[derive(Debug, Clone)]
pub struct DiffConfig {
    normalize: NormalizeOptions,
    ignore: IgnoreRules,
    attribution: bool,
}

impl Default for DiffConfig {
    fn default() -> Self {
        Self {
            normalize: NormalizeOptions::default(),
            ignore: IgnoreRules::default(),
            attribution: true,
        }
    }
}

impl DiffConfig {
    /// Sets the normalizer options.
    pub fn normalize(mut self, opts: NormalizeOptions) -> Self {
        self.normalize = opts;
        self
    }

    /// Sets the ignore rules.
    pub fn ignore(mut self, rules: IgnoreRules) -> Self {
        self.ignore = rules;
        self
    }

    /// Turns drift attribution on (default) or off.
    pub fn attribution(mut self, on: bool) -> Self {
        self.attribution = on;
        self
    }
}

/// Diffs one pair with the given strategy.
pub fn diff(pair: &Pair, strategy: Strategy<'_>, config: &DiffConfig) -> Result<DiffResult> {
    let key = pair.key.clone();
    let (desired, live) = match (&pair.desired, &pair.live) {
        (None, None) => return Err(Error::EmptyPair { key }),
        (Some(d), None) => return Ok(create(pair, d, strategy, config)),
        (None, Some(l)) => return Ok(extra(pair, l, config)),
        (Some(d), Some(l)) => (d, l),
    };
    let gk = GroupKind::of(desired);
    // Reading managedFields costs as much as the rest of an in-sync diff: only when needed.
    let ignore_needs_managed = config
        .ignore
        .matching(&key)
        .any(|r| !r.managed_fields_managers.is_empty());
    let mut managed = if ignore_needs_managed {
        managed_entries(live)
    } else {
        Vec::new()
    };
    let mut live_n = live.clone();
    normalize(&mut live_n, &config.normalize);
    let mut desired_n = desired.clone();
    normalize(&mut desired_n, &config.normalize);
    align_tracking(&mut desired_n, live, &config.normalize);

    let (predicted, used, notes) = match strategy {
        Strategy::ThreeWay => predict_three_way(
            &gk,
            &key,
            live,
            &mut desired_n,
            &mut live_n,
            &managed,
            config,
        ),
        Strategy::ServerSide { predicted_live } => predict_server_side(
            &gk,
            &key,
            live,
            predicted_live,
            &mut live_n,
            &managed,
            config,
        ),
    };
    let mut predicted = predicted;
    settle_nulls(&gk, &mut predicted);
    settle_nulls(&gk, &mut live_n);
    let modified = predicted != live_n;
    let mut changes = if modified {
        field_changes(&gk, &live_n, &predicted)
    } else {
        Vec::new()
    };
    if config.attribution && !changes.is_empty() {
        if !ignore_needs_managed {
            managed = managed_entries(live);
        }
        attribution::attribute(&mut changes, &managed);
    }
    Ok(DiffResult {
        key,
        action: if modified {
            Action::Update
        } else {
            Action::None
        },
        modified,
        strategy: used,
        normalized_live: Some(live_n),
        predicted_live: Some(predicted),
        changes,
        notes,
    })
}

/// Three-way strategy: the merge of last-applied, desired and live, as `kubectl apply` would
/// leave the object, after the ignore rules have run on all three.
fn predict_three_way(
    gk: &GroupKind,
    key: &ResourceKey,
    live: &Value,
    desired_n: &mut Value,
    live_n: &mut Value,
    managed: &[ManagedEntry],
    config: &DiffConfig,
) -> (Value, StrategyUsed, Vec<String>) {
    let (mut base, fallback_reason) = last_applied(live);
    if let Some(b) = base.as_mut() {
        normalize(b, &config.normalize);
        align_tracking(b, live, &config.normalize);
    }
    let mut objects: Vec<&mut Value> = vec![&mut *desired_n, &mut *live_n];
    if let Some(b) = base.as_mut() {
        objects.push(b);
    }
    let notes = config.ignore.apply(key, managed, &mut objects);
    let predicted = three_way::predict(gk, base.as_ref(), desired_n, live_n);
    (
        predicted,
        StrategyUsed {
            strategy: DiffStrategy::ThreeWay,
            fallback_reason,
        },
        notes,
    )
}

/// Server-side strategy: the dry-run result, with the fields nobody owns put back as live has
/// them, after the ignore rules have run on it and on live.
fn predict_server_side(
    gk: &GroupKind,
    key: &ResourceKey,
    live: &Value,
    predicted_live: &Value,
    live_n: &mut Value,
    managed: &[ManagedEntry],
    config: &DiffConfig,
) -> (Value, StrategyUsed, Vec<String>) {
    let predicted_managed = managed_entries(predicted_live);
    let mut predicted = predicted_live.clone();
    normalize(&mut predicted, &config.normalize);
    // As Argo's server-side diff: the client-side-apply record is not compared.
    for obj in [&mut predicted, &mut *live_n] {
        remove_annotation(obj, LAST_APPLIED);
    }
    let notes = config
        .ignore
        .apply(key, managed, &mut [&mut predicted, &mut *live_n]);
    server_side::revert_unowned(gk, &predicted_managed, live, live_n, &mut predicted);
    (
        predicted,
        StrategyUsed {
            strategy: DiffStrategy::ServerSide,
            fallback_reason: None,
        },
        notes,
    )
}

fn create(pair: &Pair, desired: &Value, strategy: Strategy<'_>, config: &DiffConfig) -> DiffResult {
    let mut predicted = desired.clone();
    normalize(&mut predicted, &config.normalize);
    let notes = config.ignore.apply(&pair.key, &[], &mut [&mut predicted]);
    settle_nulls(&GroupKind::of(desired), &mut predicted);
    let used = match strategy {
        Strategy::ThreeWay => StrategyUsed {
            strategy: DiffStrategy::ThreeWay,
            fallback_reason: None,
        },
        Strategy::ServerSide { .. } => StrategyUsed {
            strategy: DiffStrategy::ThreeWay,
            fallback_reason: Some(
                "the object does not exist yet: compared without a dry-run".into(),
            ),
        },
    };
    DiffResult {
        key: pair.key.clone(),
        action: Action::Create,
        modified: true,
        strategy: used,
        normalized_live: None,
        changes: vec![FieldChange {
            path: FieldPath::default(),
            op: ChangeOp::Added,
            live: None,
            predicted: Some(predicted.clone()),
            attribution: None,
        }],
        predicted_live: Some(predicted),
        notes,
    }
}

fn extra(pair: &Pair, live: &Value, config: &DiffConfig) -> DiffResult {
    let mut live_n = live.clone();
    normalize(&mut live_n, &config.normalize);
    let managed = managed_entries(live);
    let notes = config.ignore.apply(&pair.key, &managed, &mut [&mut live_n]);
    settle_nulls(&GroupKind::of(live), &mut live_n);
    DiffResult {
        key: pair.key.clone(),
        action: Action::Extra,
        modified: false,
        strategy: StrategyUsed {
            strategy: DiffStrategy::ThreeWay,
            fallback_reason: None,
        },
        // The whole object goes, as the removal of its root (the mirror of a create).
        changes: vec![FieldChange {
            path: FieldPath::default(),
            op: ChangeOp::Removed,
            live: Some(live_n.clone()),
            predicted: None,
            attribution: None,
        }],
        normalized_live: Some(live_n),
        predicted_live: None,
        notes,
    }
}

/// The parsed last-applied annotation, or why there is none.
fn last_applied(live: &Value) -> (Option<Value>, Option<String>) {
    let text = live
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str);
    match text {
        None => (
            None,
            Some(format!(
                "no {LAST_APPLIED} annotation on the live object: two-way diff (fields only live has are kept)"
            )),
        ),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(v) if v.is_object() => (Some(v), None),
            Ok(_) => (
                None,
                Some(format!("{LAST_APPLIED} is not a JSON object: two-way diff")),
            ),
            Err(e) => (
                None,
                Some(format!("{LAST_APPLIED} does not parse ({e}): two-way diff")),
            ),
        },
    }
}

fn remove_annotation(obj: &mut Value, name: &str) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut)
    {
        ann.remove(name);
        if ann.is_empty() {
            meta.remove("annotations");
        }
    }
}
