//! Plumb's own rules for widely deployed operators (`resource_customizations/`): every fixture
//! of every suite through the default Assessor, i.e. the lookup the controller uses, the safe
//! libraries Plumb's scripts run with, and the built-in Rust rules for kinds without a script.
//! The same suites also run through `plumb admin health test` (crates/plumb/tests/it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use plumb_health::{Assessor, Config, HealthCode, assess};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("resource_customizations")
}

fn suites(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            suites(&path, out);
        } else if path.file_name().is_some_and(|n| n == "health_test.yaml") {
            out.push(path);
        }
    }
}

struct Case {
    input: PathBuf,
    code: HealthCode,
    message: String,
}

fn cases(suite: &Path) -> Vec<Case> {
    let spec: Value = serde_saphyr::from_str(&std::fs::read_to_string(suite).unwrap()).unwrap();
    spec["tests"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no tests", suite.display()))
        .iter()
        .map(|t| Case {
            input: suite
                .parent()
                .unwrap()
                .join(t["inputPath"].as_str().unwrap()),
            code: t["healthStatus"]["status"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap(),
            message: t["healthStatus"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        })
        .collect()
}

fn object(path: &Path) -> Value {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&std::fs::read_to_string(path).unwrap()).unwrap();
    docs.into_iter().next().unwrap()
}

#[test]
fn every_operator_fixture_reads_as_its_suite_expects() {
    let mut files = Vec::new();
    suites(&root(), &mut files);
    files.sort();
    assert!(files.len() >= 30, "{} suites", files.len());
    let assessor = Assessor::default();
    let mut failures = Vec::new();
    let mut total = 0;
    for suite in &files {
        for case in cases(suite) {
            total += 1;
            let obj = object(&case.input);
            let got = assessor.assess(&obj);
            let ok = got
                .as_ref()
                .is_some_and(|h| h.code == case.code && h.message == case.message);
            if !ok {
                failures.push(format!(
                    "{}: want {} {:?}, got {got:?}",
                    case.input.display(),
                    case.code,
                    case.message
                ));
            }
            // The free function is the same default assessor.
            assert_eq!(assess(&obj), got, "{}", case.input.display());
        }
    }
    assert!(total >= 150, "{total} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_suite_covers_healthy_progressing_and_degraded() {
    let mut files = Vec::new();
    suites(&root(), &mut files);
    for suite in files {
        let codes: BTreeSet<HealthCode> = cases(&suite).iter().map(|c| c.code).collect();
        for need in [
            HealthCode::Healthy,
            HealthCode::Progressing,
            HealthCode::Degraded,
        ] {
            assert!(codes.contains(&need), "{}: no {need} case", suite.display());
        }
    }
}

#[test]
fn every_fixture_is_a_whole_object_of_its_suites_kind() {
    let mut files = Vec::new();
    suites(&root(), &mut files);
    for suite in files {
        let dir = suite.parent().unwrap();
        let kind = dir.file_name().unwrap().to_str().unwrap();
        let group = dir.parent().unwrap().file_name().unwrap().to_str().unwrap();
        for case in cases(&suite) {
            let obj = object(&case.input);
            let api_version = obj["apiVersion"].as_str().unwrap();
            assert!(
                api_version.starts_with(&format!("{group}/")),
                "{}: apiVersion {api_version} is not in {group}",
                case.input.display()
            );
            if kind != "_" {
                assert_eq!(obj["kind"], kind, "{}", case.input.display());
            }
            for field in ["name", "uid", "resourceVersion", "creationTimestamp"] {
                assert!(
                    obj["metadata"][field].is_string(),
                    "{}: metadata.{field}",
                    case.input.display()
                );
            }
        }
    }
}

#[test]
fn user_sources_win_over_plumbs_own_scripts() {
    let cert = object(&root().join("cert-manager.io/Certificate/testdata/ready.yaml"));
    // Plumb's own script.
    let own = Assessor::default().assess(&cert).unwrap();
    assert_eq!(own.code, HealthCode::Healthy);
    assert_eq!(
        Assessor::default()
            .script_for("cert-manager.io", "Certificate")
            .unwrap()
            .origin(),
        "plumb built-in cert-manager.io/Certificate"
    );

    // A directory laid out like Argo's resource_customizations wins over it.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cert-manager.io/Certificate");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("health.lua"),
        "return {status = \"Suspended\", message = \"from the directory\"}",
    )
    .unwrap();
    let with_dir = Assessor::new(Config::default().customizations_dir(tmp.path())).unwrap();
    let h = with_dir.assess(&cert).unwrap();
    assert_eq!(
        (h.code, h.message.as_str()),
        (HealthCode::Suspended, "from the directory")
    );

    // A wildcard directory wins too (Argo's `_.crossplane.io/_` style).
    let tmp2 = tempfile::tempdir().unwrap();
    let wild = tmp2.path().join("_.gatekeeper.sh/_");
    std::fs::create_dir_all(&wild).unwrap();
    std::fs::write(
        wild.join("health.lua"),
        "return {status = \"Degraded\", message = \"wildcard\"}",
    )
    .unwrap();
    let constraint = object(&root().join("constraints.gatekeeper.sh/_/testdata/enforced.yaml"));
    assert_eq!(
        Assessor::default().assess(&constraint).unwrap().code,
        HealthCode::Healthy
    );
    let h = Assessor::new(Config::default().customizations_dir(tmp2.path()))
        .unwrap()
        .assess(&constraint)
        .unwrap();
    assert_eq!(h.message, "wildcard");

    // And a settings key wins over both.
    let settings = plumb_model::Settings::from_data(
        [(
            "resource.customizations.health.cert-manager.io_Certificate".to_string(),
            "return {status = \"Unknown\", message = \"from argocd-cm\"}".to_string(),
        )]
        .into(),
    );
    let h = Assessor::new(
        Config::default()
            .settings(settings)
            .customizations_dir(tmp.path()),
    )
    .unwrap()
    .assess(&cert)
    .unwrap();
    assert_eq!(h.message, "from argocd-cm");
}

#[test]
fn plumbs_own_scripts_run_with_the_safe_libraries() {
    let a = Assessor::default();
    let script = a.script_for("velero.io", "Backup").unwrap();
    assert!(!script.open_libs());
}
