//! Plumb's shared vocabulary.
//!
//! Every other crate names objects, annotations and settings through this one: a [`ResourceKey`]
//! prints the same way in errors, logs and CLI output (Argo's `group/Kind/namespace/name` order), and
//! the Argo CD annotation keys Plumb honours are defined once in [`annotations`].
//!
//! ```
//! use plumb_model::ResourceKey;
//! let key = ResourceKey::new("apps", "Deployment", "payments", "payments-api");
//! assert_eq!(key.to_string(), "apps/Deployment/payments/payments-api");
//! ```

pub mod annotations;
pub mod application;
pub mod applicationset;
#[cfg(feature = "schema")]
pub mod crd;
pub mod crd_check;
pub mod duration;
pub mod go;
mod key;
#[cfg(feature = "schema")]
mod schema;
pub mod settings;

pub use key::{GroupKind, ResourceKey, group_of};
pub use settings::Settings;

/// The field manager Plumb applies (and server-side dry-runs) with.
pub const FIELD_MANAGER: &str = "plumb-controller";
