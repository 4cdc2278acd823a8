//! The front door: an Application's sources in, desired objects out, through the Git cache, the
//! per-tool renderers of [`crate::render`] and the manifest cache. [`Renderer`]'s methods are
//! split by concern: its state and settings, the sources of one render, the manifest cache, the
//! render itself, plugins, and local directories.

mod cache;
mod config;
mod key;
mod local;
mod manifest_cache;
mod pins;
mod plugins;
mod request;
mod run;
mod signatures;
mod sources;
mod state;

pub use config::Config;
pub use request::{LocalSource, Refresh, RenderRequest, Rendered, SourceOutcome};
pub use state::Renderer;
