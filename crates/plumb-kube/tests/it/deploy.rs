//! Plumb's `deploy/` manifests on a real API server: the generated CRDs are accepted, the default
//! AppProject applies, and Argo CD example Applications are stored and read back unchanged.

use plumb_kube::strip_nulls;
use plumb_model::ResourceKey;
use plumb_model::application::{AppProject, Application};
use plumb_testenv::TestEnv;
use serde_json::Value;

use crate::{read_yaml_docs, repo, setup, wait_established};

#[tokio::test]
async fn crds_default_project_and_argo_examples_are_accepted() {
    let ns = TestEnv::shared().namespace("deploy");
    let (_, _, applier) = setup().await;
    let deploy = repo().join("deploy");

    for (file, name) in [
        ("crds/application-crd.yaml", "applications.argoproj.io"),
        ("crds/appproject-crd.yaml", "appprojects.argoproj.io"),
    ] {
        for doc in read_yaml_docs(&deploy.join(file)) {
            applier
                .apply(&doc, None)
                .await
                .unwrap_or_else(|e| panic!("{file}: {e:?}"));
        }
        wait_established(&applier, name).await;
    }
    for file in ["namespace.yaml", "default-appproject.yaml"] {
        for doc in read_yaml_docs(&deploy.join(file)) {
            applier
                .apply(&doc, None)
                .await
                .unwrap_or_else(|e| panic!("{file}: {e:?}"));
        }
    }
    let project = applier
        .get(&ResourceKey::new(
            "argoproj.io",
            "AppProject",
            "argocd",
            "default",
        ))
        .await
        .unwrap()
        .unwrap();
    let project: AppProject = serde_json::from_value(project).unwrap();
    assert_eq!(project.spec.source_repos, Some(vec!["*".to_string()]));

    // RBAC, the controller (Deployment and StatefulSet variant) and the server are valid objects
    // (server-side dry run).
    for file in [
        "rbac.yaml",
        "controller-deployment.yaml",
        "controller-statefulset.yaml",
        "server.yaml",
    ] {
        for doc in read_yaml_docs(&deploy.join(file)) {
            applier
                .dry_run_apply(&doc)
                .await
                .unwrap_or_else(|e| panic!("{file}: {e:?}"));
        }
    }

    // Every Argo example fixture, moved into the test namespace, is stored as written.
    let testdata = repo().join("crates/plumb-model/testdata");
    let mut files: Vec<_> = std::fs::read_dir(&testdata)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut doc = read_yaml_docs(&path).remove(0);
        doc["metadata"]["namespace"] = Value::String(ns.name().to_string());
        let stored = applier
            .apply(&doc, None)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let key = ResourceKey::of(&stored);
        let read = applier.get(&key).await.unwrap().unwrap();
        // Nulls are not sent with server-side apply (they would delete rather than set).
        let mut expected = doc.clone();
        strip_nulls(&mut expected);
        for field in ["spec", "operation"] {
            assert_eq!(
                read.get(field),
                expected.get(field),
                "{name}: {field} changed by the API server"
            );
        }
        match doc["kind"].as_str() {
            Some("Application") => drop(serde_json::from_value::<Application>(read).unwrap()),
            _ => drop(serde_json::from_value::<AppProject>(read).unwrap()),
        }
    }

    // The printer columns work: `kubectl get app` prints Sync Status and Health Status.
    let out = TestEnv::shared()
        .kubectl()
        .args(["get", "app", "-n", ns.name()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("SYNC STATUS   HEALTH STATUS"),
        "{text}"
    );
}
