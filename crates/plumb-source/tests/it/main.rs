//! Integration tests: real Git repositories made by plumb-testenv, fetched through gix over
//! `file://` and HTTP (`git http-backend`), rendered with the real helm and kustomize binaries.

// Setup helpers outside #[test] functions may unwrap: a failed setup is a failed test.
#![allow(clippy::unwrap_used)]

mod cache;
mod credentials;
mod directory;
mod git;
mod helm;
mod helm_repo;
mod jsonnet;
mod kustomize;
mod lfs;
mod oci;
mod plugin;
mod render_limits;
mod security;
mod sharing;
mod signatures;
mod support;
