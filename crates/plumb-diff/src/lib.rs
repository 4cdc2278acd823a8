//! Drift between desired and live Kubernetes objects, as Argo CD computes it, plus who caused it.
//!
//! The pipeline ([`diff`]) runs in a fixed order: **normalize** (server-managed metadata,
//! `status`, Secret `stringData`, numbers, tracking annotation) → **ignore** (Argo's
//! `ignoreDifferences`: JSON pointers, jq paths, managedFields managers; guard rails refuse rules
//! that would hide images, privileges, RBAC or webhooks) → **strategy** (server-side: the
//! caller's SSA dry-run result; offline: a three-way merge on the last-applied configuration with
//! merge keys) → **attribution** (the field manager that last wrote each differing field) →
//! **mask** ([`mask`]: Secret values become `+` runs; renderers accept only a [`MaskedDiff`]).
//! Objects in and out are plain `serde_json::Value`s; nothing here talks to a cluster.
//!
//! ```
//! use plumb_diff::{DiffConfig, RenderOptions, Strategy, SourcedObject, PairOptions};
//! use serde_json::json;
//!
//! let desired = json!({"apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "app"}, "data": {"mode": "fast"}});
//! let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "app", "namespace": "prod", "uid": "1", "resourceVersion": "7"},
//!     "data": {"mode": "slow"}});
//! let opts = PairOptions { default_namespace: "prod".into(), ..Default::default() };
//! let pairs = plumb_diff::pair(vec![SourcedObject { value: desired, source: "cm.yaml".into() }],
//!     vec![live], &opts).unwrap();
//! let result = plumb_diff::diff(&pairs[0], Strategy::ThreeWay, &DiffConfig::default()).unwrap();
//! assert!(result.modified);
//! let mut out = Vec::new();
//! plumb_diff::render(&[plumb_diff::mask(&result)], &RenderOptions::default(), &mut out).unwrap();
//! assert_eq!(String::from_utf8(out).unwrap(),
//!     "\n===== /ConfigMap prod/app ======\n3c3\n<   mode: slow\n---\n>   mode: fast\n");
//! ```

mod attribution;
mod cache;
mod changes;
mod error;
mod ignore;
mod managed_fields;
mod mask;
mod merge_keys;
mod normalize;
mod pair;
mod path;
mod pipeline;
mod render;
mod result;
mod settings;
mod strategy;

pub use cache::{CacheKey, ServerSideCache, hash_value};
pub use error::{Error, Result};
pub use ignore::{IgnoreOptions, IgnoreRule, IgnoreRules, SensitiveFinding, sensitive_findings};
pub use managed_fields::{ManagedEntry, last_writer, managed_entries};
pub use mask::{MaskedDiff, mask};
pub use normalize::{NormalizeOptions, StatusField};
pub use pair::{Pair, PairOptions, SourcedObject, pair};
pub use path::{FieldPath, Segment};
pub use pipeline::{DiffConfig, diff};
pub use render::{
    DiffFormat, ExternalDiff, JsonAttribution, JsonChange, JsonDiff, RenderOptions, normal_diff,
    render, render_json, render_wire, unified_diff,
};
pub use result::{
    Action, Attribution, ChangeOp, DiffResult, DiffStrategy, FieldChange, StrategyUsed,
};
pub use settings::{DiffSettings, application_rules};
pub use strategy::Strategy;
pub use strategy::server_side::{answer_basis, rebase_answer};
