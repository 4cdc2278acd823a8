//! Runs every `health_test.yaml` of the test customizations library through the Assessor's
//! lookup (so the directory layout and wildcards are exercised, as Argo's runner does).

use std::path::Path;

use plumb_health::{Assessor, Config, HealthCode};
use serde_json::Value;

use crate::support::testdata;

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.file_name().is_some_and(|n| n == "health_test.yaml") {
            out.push(path);
        }
    }
}

#[test]
fn every_library_test_case_passes() {
    let root = testdata("customizations");
    let assessor = Assessor::new(Config::default().customizations_dir(&root)).unwrap();
    let mut files = Vec::new();
    walk(&root, &mut files);
    assert!(files.len() >= 4, "found {files:?}");
    let (mut cases, mut failures) = (0, Vec::new());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let spec: Value = serde_saphyr::from_str(&text).unwrap();
        for test in spec["tests"].as_array().unwrap() {
            cases += 1;
            let input = file
                .parent()
                .unwrap()
                .join(test["inputPath"].as_str().unwrap());
            let docs: Vec<Value> =
                serde_saphyr::from_multiple(&std::fs::read_to_string(&input).unwrap()).unwrap();
            let got = assessor.assess(&docs[0]).unwrap();
            let want_code: HealthCode = test["healthStatus"]["status"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            let want_message = test["healthStatus"]["message"].as_str().unwrap_or_default();
            if got.code != want_code || got.message != want_message {
                failures.push(format!(
                    "{}: want {want_code} {want_message:?}, got {got:?}",
                    input.display()
                ));
            }
        }
    }
    assert!(cases >= 12, "{cases} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
