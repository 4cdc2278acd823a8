//! Loading `testdata/` objects.

use plumb_diff::{DiffConfig, DiffResult, Pair, PairOptions, SourcedObject, Strategy};
use serde_json::Value;

pub fn load(name: &str) -> Value {
    let path = format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut docs = plumb_yaml::read_documents(&text, &path).unwrap();
    assert_eq!(docs.len(), 1, "{path}");
    docs.remove(0).value
}

pub fn pair_of(desired: &str, live: &str) -> Pair {
    let opts = PairOptions {
        default_namespace: "payments".into(),
        ..Default::default()
    };
    let desired = SourcedObject {
        value: load(desired),
        source: desired.into(),
    };
    let mut pairs = plumb_diff::pair(vec![desired], vec![load(live)], &opts).unwrap();
    assert_eq!(pairs.len(), 1, "{pairs:?}");
    pairs.remove(0)
}

pub fn three_way(desired: &str, live: &str) -> DiffResult {
    plumb_diff::diff(
        &pair_of(desired, live),
        Strategy::ThreeWay,
        &DiffConfig::default(),
    )
    .unwrap()
}
