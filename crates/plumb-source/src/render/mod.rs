//! The renderers, one per source type (directory, Jsonnet, Helm, Kustomize), the context they
//! are given and the one dispatch over them.

mod context;
mod directory;
mod dispatch;
mod helm;
mod helm_deps;
pub(crate) mod jsonnet;
mod kustomize;
pub(crate) mod kustomize_options;
pub(crate) mod kustomize_paths;
pub(crate) mod kustomize_remote;
mod kustomize_scratch;
mod source_repos;
mod tool;

pub(crate) use context::Context;
pub(crate) use dispatch::{render, tool_version};
pub use tool::Tools;
