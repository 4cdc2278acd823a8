//! Plumb's Kubernetes layer, over kube-rs.
//!
//! - [`connect`]: a client from a kubeconfig file or inferred (kubeconfig, then in-cluster).
//! - [`ApiDiscovery`]: what the API server serves (kind → resource, scope, preferred version),
//!   refreshable after CRDs are applied.
//! - [`Applier`]: server-side apply and server-side dry-run apply with field manager
//!   `plumb-controller` and force, client-side-apply ownership migration, get and delete.
//! - [`live_cache`]: list+watch of a cluster with full objects only for tracked objects and
//!   indexes by Application; a stream the caller drives tells which Applications changed.
//!
//! ```no_run
//! # async fn demo() -> Result<(), plumb_kube::Error> {
//! use std::sync::Arc;
//! let client = plumb_kube::connect(&plumb_kube::KubeconfigSource::Infer).await?;
//! let discovery = Arc::new(plumb_kube::ApiDiscovery::new(client).await?);
//! let applier = plumb_kube::Applier::new(discovery);
//! let desired = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
//!     "metadata": {"name": "settings", "namespace": "payments"}, "data": {"mode": "fast"}});
//! let predicted = applier.dry_run_apply(&desired).await?;
//! let stored = applier.apply(&desired, None).await?;
//! # let _ = (predicted, stored); Ok(()) }
//! ```

mod apply;
mod body;
mod client;
mod delete_options;
mod discovery;
mod error;
mod live;
mod migrate;
mod scope;

pub use apply::{Applier, Deleted, WriteOptions, is_not_found};
pub use body::{apply_body, strip_nulls, strip_server_fields};
pub use client::{KubeconfigSource, client_from, connect, install_crypto_provider, load_config};
pub use delete_options::resource_delete_params;
pub use discovery::{ApiCatalog, ApiDiscovery, ApiKind};
pub use error::{Error, Result};
pub use kube::api::PropagationPolicy;
pub use live::{
    AppChange, ExclusionRule, LiveCacheConfig, LiveCacheReader, LiveEvent, LiveObject, NOISY_KINDS,
    OwnerRef, TrackedBy, Tracking, TrackingMethod, live_cache, tracking_id,
};
pub use migrate::{MIGRATED_APPLY_MANAGERS, MIGRATED_MANAGERS, migrated_managed_fields};
pub use scope::{ClusterScope, WatchTarget, go_quote};

/// Internals exposed for the criterion benches only; not a stable API.
#[doc(hidden)]
pub mod bench_support {
    pub use crate::live::Store;
}
