//! Argo CD Application and AppProject manifests deserialize and re-serialize to exactly the same
//! JSON: nothing lost, nothing added.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use plumb_model::application::{
    AppProject, Application, HookType, OperationPhase, ResultCode, SyncStatusCode,
};

use crate::{deploy, read_yaml, testdata};

fn round_trip<T: DeserializeOwned + Serialize>(original: &Value, name: &str) -> T {
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{name}: does not deserialize: {e}"));
    let back = serde_json::to_value(&typed).unwrap();
    if &back != original {
        panic!(
            "{name}: round trip changed the object\n--- original\n{}\n--- re-serialized\n{}",
            serde_json::to_string_pretty(original).unwrap(),
            serde_json::to_string_pretty(&back).unwrap()
        );
    }
    typed
}

#[test]
fn every_fixture_round_trips_without_loss() {
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let value = read_yaml(&path);
        match value["kind"].as_str() {
            Some("Application") => drop(round_trip::<Application>(&value, &name)),
            Some("AppProject") => drop(round_trip::<AppProject>(&value, &name)),
            other => panic!("{name}: unexpected kind {other:?}"),
        }
        seen += 1;
    }
    assert!(
        seen >= 10,
        "expected the Argo example fixtures, found {seen}"
    );
}

#[test]
fn default_project_in_deploy_round_trips() {
    let value = read_yaml(&deploy().join("default-appproject.yaml"));
    let project: AppProject = round_trip(&value, "default-appproject.yaml");
    let spec = &project.spec;
    assert_eq!(spec.source_repos.as_deref(), Some(&["*".to_string()][..]));
    let whitelist = spec.cluster_resource_whitelist.as_ref().unwrap();
    assert_eq!(whitelist[0].to_string(), "*/*");
}

#[test]
fn live_application_exposes_status_in_argo_vocabulary() {
    let value = read_yaml(&testdata().join("application-synced-live.yaml"));
    let app: Application = round_trip(&value, "application-synced-live.yaml");
    assert_eq!(app.instance_name("argocd"), "payments-api");
    let status = app.status.unwrap();
    assert_eq!(status.sync.unwrap().status, SyncStatusCode::Synced);
    let op = status.operation_state.unwrap();
    assert_eq!(op.phase, OperationPhase::Succeeded);
    let results = op.sync_result.unwrap().resources.unwrap();
    let hook = results.iter().find(|r| r.kind == "Job").unwrap();
    assert_eq!(hook.hook_type, Some(HookType::PostSync));
    assert_eq!(
        results.last().unwrap().status,
        Some(ResultCode::PruneSkipped)
    );
    // Server-set metadata is kept as it came.
    assert_eq!(app.metadata.other["resourceVersion"], "48213");
    assert!(app.metadata.other["managedFields"].is_array());
    let pruning: Vec<_> = status
        .resources
        .unwrap()
        .into_iter()
        .filter(|r| r.requires_pruning == Some(true))
        .collect();
    assert_eq!(pruning.len(), 1);
}

#[test]
fn explicit_false_and_empty_values_survive() {
    let value = read_yaml(&testdata().join("application-helm.yaml"));
    let app: Application = round_trip(&value, "application-helm.yaml");
    let helm = app.spec.source.unwrap().helm.unwrap();
    assert_eq!(helm.skip_crds, Some(false));
    assert_eq!(
        helm.values_object.unwrap()["tolerations"],
        serde_json::json!([])
    );
}

#[test]
fn multi_source_and_automation_helpers() {
    let multi: Application = round_trip(
        &read_yaml(&testdata().join("application-multi-source.yaml")),
        "multi",
    );
    let sources = multi.sources();
    assert_eq!(sources.len(), 2);
    assert_eq!(sources[1].reference.as_deref(), Some("values"));
    assert!(sources[0].is_helm_chart());
    let auto: Application = round_trip(
        &read_yaml(&testdata().join("application-automated.yaml")),
        "automated",
    );
    let policy = auto.spec.sync_policy.clone().unwrap();
    assert!(policy.is_automated());
    assert!(policy.has_option("CreateNamespace=true"));
    assert!(!policy.has_option("Replace=true"));
    let mut other = auto.metadata.clone();
    other.namespace = Some("team-a".into());
    let elsewhere = Application::new(other, auto.spec.clone());
    assert_eq!(elsewhere.instance_name("argocd"), "team-a_guestbook");
}

#[test]
fn unknown_sync_status_is_rejected_with_the_field() {
    let value = serde_json::json!({
        "metadata": {"name": "x"},
        "spec": {"project": "default", "destination": {}},
        "status": {"sync": {"status": "Drifted"}}
    });
    let err = serde_json::from_value::<Application>(value)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Drifted"), "{err}");
}
