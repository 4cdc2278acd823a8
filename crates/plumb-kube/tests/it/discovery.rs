//! Discovery sees a CRD installed after it first ran, with the CRD's own (irregular) plural.

use plumb_model::GroupKind;
use plumb_testenv::TestEnv;
use serde_json::json;

use crate::setup;

#[tokio::test]
async fn a_new_crd_is_resolved_after_refresh() {
    let ns = TestEnv::shared().namespace("discovery");
    let (client, discovery, applier) = setup().await;
    // CRDs are cluster-wide: a group per test process keeps processes sharing a cluster apart.
    let group = format!("p{}.plumb-test.example.com", std::process::id());
    let crd_name = format!("octopodes.{group}");
    let gk = GroupKind::new(group.clone(), "Octopus");
    assert!(discovery.catalog().resolve(&gk, None).is_none());

    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"kind": "Octopus", "plural": "octopodes", "singular": "octopus", "listKind": "OctopusList"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v1beta1", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
            ]
        }
    });
    applier.apply(&crd, None).await.unwrap();
    crate::wait_established(&applier, &crd_name).await;

    let kind = discovery
        .catalog()
        .resolve(&gk, None)
        .cloned()
        .expect("resolved after refresh");
    assert_eq!(kind.resource.plural, "octopodes");
    assert_eq!(
        kind.resource.version, "v1",
        "the storage version is preferred"
    );
    assert!(kind.namespaced);
    assert!(kind.is_listable());
    assert!(discovery.catalog().resolve(&gk, Some("v1beta1")).is_some());
    assert!(discovery.catalog().listable().any(|k| k.group_kind() == gk));

    // Objects of the new kind can be applied right away.
    let octopus = json!({"apiVersion": format!("{group}/v1"), "kind": "Octopus",
                         "metadata": {"name": "paul", "namespace": ns.name()}, "spec": {"arms": 8}});
    let stored = applier.apply(&octopus, None).await.unwrap();
    assert_eq!(stored["spec"]["arms"], 8);

    crate::delete_crd(&applier, &client, &crd_name).await;
}

#[tokio::test]
async fn builtin_kinds_have_server_scope_and_preferred_versions() {
    let (_, discovery, _) = setup().await;
    let catalog = discovery.catalog();
    assert_eq!(
        catalog.is_namespaced(&GroupKind::new("", "Namespace")),
        Some(false)
    );
    assert_eq!(
        catalog.is_namespaced(&GroupKind::new("apps", "Deployment")),
        Some(true)
    );
    let hpa = catalog
        .resolve(
            &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
            None,
        )
        .unwrap();
    assert_eq!(hpa.resource.version, "v2");
    assert!(
        catalog
            .resolve(
                &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
                Some("v1")
            )
            .is_some()
    );
    // Create-only kinds cannot be watched.
    assert!(
        !catalog
            .listable()
            .any(|k| k.resource.kind == "SubjectAccessReview")
    );
    assert!(catalog.listable().any(|k| k.resource.kind == "Pod"));
}
