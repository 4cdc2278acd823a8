//! Fixture loading.

use std::path::PathBuf;

use serde_json::Value;

pub fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// The first YAML document of a fixture, as JSON.
pub fn fixture(name: &str) -> Value {
    let path = testdata(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    docs.into_iter()
        .next()
        .unwrap_or_else(|| panic!("{}: no document", path.display()))
}
