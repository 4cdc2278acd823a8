//! Snapshot checks shared by the layout tests: expected text in `tests/snapshots/*`, compared
//! byte for byte (trailing spaces included: Argo's tabwriter pads empty cells), objects in
//! `tests/fixtures/*`. `PLUMB_UPDATE_SNAPSHOTS=1 cargo test -p plumb` rewrites the snapshots;
//! review the diff.

use std::path::PathBuf;

use serde::de::DeserializeOwned;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// A fixture object (`tests/fixtures/<name>`, JSON).
pub fn fixture<T: DeserializeOwned>(name: &str) -> T {
    let path = root().join("fixtures").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compares `actual` with `tests/snapshots/<name>` (or rewrites it).
pub fn check(name: &str, actual: &str) {
    let path = root().join("snapshots").join(name);
    if std::env::var_os("PLUMB_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (PLUMB_UPDATE_SNAPSHOTS=1 writes it)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "snapshot {name} differs\n--- expected ---\n{expected}--- actual ---\n{actual}----------------"
    );
}
