//! The `argoproj.io/v1alpha1` Application API types.

pub mod source;

pub use source::{
    ApplicationSource, DirectorySource, HelmFileParameter, HelmParameter, HelmSource,
    JsonnetSource, JsonnetVar, KustomizePatch, KustomizeReplica, KustomizeSelector,
    KustomizeSource,
};
