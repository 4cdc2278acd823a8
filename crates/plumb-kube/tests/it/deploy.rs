//! Plumb's `deploy/` manifests on a real API server: the generated CRDs are accepted, the default
//! AppProject applies, every object of install.yaml, namespace-install.yaml and the StatefulSet
//! component is valid (server-side dry run), install.yaml and namespace-install.yaml are what
//! the pinned kustomize makes of deploy/ now, and Argo CD example Applications are stored and read
//! back unchanged.

use std::path::Path;

use plumb_kube::Applier;
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
    check_install_manifests(&applier, ns.name(), &deploy).await;

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

/// install.yaml's Namespace and deploy/default-appproject.yaml applied for real (in `argocd`);
/// everything else of install.yaml, of namespace-install.yaml (moved to `ns`) and of the
/// StatefulSet component as a server-side dry run. install.yaml holds no AppProject: applied over
/// an Argo CD whose `default` project was narrowed, it must not widen it (`plumb server` creates
/// `default` only where none exists).
async fn check_install_manifests(applier: &Applier, ns: &str, deploy: &Path) {
    let install = read_yaml_docs(&deploy.join("install.yaml"));
    assert!(
        !install.iter().any(|d| kind_in(d, &["AppProject"])),
        "install.yaml must not ship an AppProject"
    );
    let mut default_project = read_yaml_docs(&deploy.join("default-appproject.yaml"));
    for doc in &mut default_project {
        doc["metadata"]["namespace"] = "argocd".into();
    }
    for doc in install
        .iter()
        .filter(|d| kind_in(d, &["Namespace"]))
        .chain(&default_project)
    {
        applier
            .apply(doc, None)
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", ResourceKey::of(doc)));
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

    let skip = ["Namespace", "AppProject", "CustomResourceDefinition"];
    let mut kinds = std::collections::BTreeSet::new();
    for doc in install.iter().filter(|d| !kind_in(d, &skip)) {
        kinds.insert(doc["kind"].as_str().unwrap_or_default().to_string());
        applier
            .dry_run_apply(doc)
            .await
            .unwrap_or_else(|e| panic!("install.yaml: {}: {e:?}", ResourceKey::of(doc)));
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "Deployment",
            "NetworkPolicy",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount"
        ]
    );
    let namespaced = [
        "namespace-install.yaml",
        "components/controller-statefulset/statefulset.yaml",
    ];
    for file in namespaced {
        for mut doc in read_yaml_docs(&deploy.join(file)) {
            if kind_in(&doc, &["AppProject"]) {
                continue;
            }
            assert!(
                doc["metadata"]["namespace"].is_null(),
                "{file}: {} names a namespace",
                ResourceKey::of(&doc)
            );
            doc["metadata"]["namespace"] = Value::String(ns.to_string());
            applier
                .dry_run_apply(&doc)
                .await
                .unwrap_or_else(|e| panic!("{file}: {}: {e:?}", ResourceKey::of(&doc)));
        }
    }
}

fn kind_in(doc: &Value, kinds: &[&str]) -> bool {
    doc["kind"].as_str().is_some_and(|k| kinds.contains(&k))
}

/// install.yaml and namespace-install.yaml are what the pinned kustomize makes of deploy/ and
/// deploy/namespace-install now (`scripts/install-manifests` regenerates them).
#[test]
fn install_manifests_are_up_to_date() {
    let deploy = repo().join("deploy");
    for (dir, file) in [
        (".", "install.yaml"),
        ("namespace-install", "namespace-install.yaml"),
    ] {
        let out = std::process::Command::new(plumb_testenv::tools::kustomize())
            .arg("build")
            .arg(deploy.join(dir))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "kustomize build deploy/{dir}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let committed = std::fs::read_to_string(deploy.join(file)).unwrap();
        // The two header lines scripts/install-manifests writes.
        let body = committed.splitn(3, '\n').nth(2).unwrap_or_default();
        assert!(
            body == String::from_utf8_lossy(&out.stdout),
            "deploy/{file} is stale: run scripts/install-manifests"
        );
    }
}
