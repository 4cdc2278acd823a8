//! Plumb's health engine: what state is each Kubernetes object in, and the application as a whole.
//!
//! Health is computed from the object, never reported by it. For every object Plumb applies, in
//! order: Argo CD's pending-deletion rule; a Lua health script when one is configured for the kind
//! (argocd-cm settings keys, the legacy `resource.customizations` map, or directories laid out
//! like Argo's `resource_customizations`); Argo CD's built-in rule for the kind; and, for kinds
//! with none of those, Plumb's generic rule reading the standard status signals (which the
//! `plumb.health.unknownKinds: none` setting turns off to get Argo's behaviour). Statuses and
//! messages from the built-in rules and Lua scripts are byte-identical to Argo's.
//!
//! The crate works on plain JSON objects and never talks to a cluster.
//!
//! ```
//! use plumb_health::{HealthCode, assess};
//! let deployment = serde_json::json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "api", "namespace": "shop", "generation": 2},
//!     "spec": {"replicas": 3},
//!     "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 1, "availableReplicas": 1},
//! });
//! let health = assess(&deployment).expect("deployments have health");
//! assert_eq!(health.code, HealthCode::Progressing);
//! assert_eq!(health.message, "Waiting for rollout to finish: 1 out of 3 new replicas have been updated...");
//! ```

#![deny(missing_docs)]

pub mod actions;
mod aggregate;
mod assess;
mod crossplane;
pub mod customizations_dir;
mod error;
mod generic;
mod lua;
mod missing_status;
mod rules;
mod status;

pub use aggregate::{AppHealth, AppResource};
pub use assess::{Assessor, Config, UnknownKindHealth, assess};
pub use error::{Error, Result};
pub use lua::{LuaLimits, LuaScript};
pub use missing_status::{ClusterFacts, DEFAULT_MISSING_STATUS_GRACE, MissingStatus};
pub use status::{HealthCode, HealthStatus, InvalidHealthCode};
