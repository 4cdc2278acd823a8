//! plumb-model integration tests: Argo CD manifests round-trip through the Rust types, and the
//! committed CRDs match the types.

// Helpers outside #[test] functions panic on purpose: a failed setup fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod argo_examples;
mod crd_check;
mod crds;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The crate's `testdata/` folder.
fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// The repository's `deploy/` folder.
fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// Reads one YAML document into JSON.
fn read_yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
