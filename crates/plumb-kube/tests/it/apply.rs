//! Server-side apply with Plumb's field manager, dry-run, client-side-apply migration, delete.

use plumb_kube::{Deleted, Error, PropagationPolicy};
use plumb_model::{FIELD_MANAGER, ResourceKey};
use plumb_testenv::TestEnv;
use serde_json::{Value, json};

use crate::{eventually, setup};

fn config_map(ns: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "settings", "namespace": ns, "labels": {"app": "payments-api"}},
           "data": data})
}

fn managers(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["operation"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn dry_run_predicts_without_storing_and_apply_owns_fields() {
    let ns = TestEnv::shared().namespace("ssa");
    let (_, _, applier) = setup().await;
    let key = ResourceKey::new("", "ConfigMap", ns.name(), "settings");

    let desired = config_map(ns.name(), json!({"a": "1", "b": "2"}));
    let predicted = applier.dry_run_apply(&desired).await.unwrap();
    assert_eq!(predicted["data"], json!({"a": "1", "b": "2"}));
    assert!(
        managers(&predicted).contains(&(FIELD_MANAGER.into(), "Apply".into())),
        "{predicted:#}"
    );
    assert_eq!(
        applier.get(&key).await.unwrap(),
        None,
        "dry run must not store"
    );

    let stored = applier.apply(&desired, None).await.unwrap();
    assert_eq!(stored["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(
        managers(&stored),
        [(FIELD_MANAGER.to_string(), "Apply".to_string())]
    );

    // A field dropped from the desired object is removed: the manager owned it.
    let stored = applier
        .apply(&config_map(ns.name(), json!({"a": "1"})), None)
        .await
        .unwrap();
    assert_eq!(stored["data"], json!({"a": "1"}));

    // The dry run of a removal predicts the removal.
    let predicted = applier
        .dry_run_apply(&config_map(ns.name(), json!({})))
        .await
        .unwrap();
    assert_eq!(predicted.get("data"), None, "{predicted:#}");
}

#[tokio::test]
async fn dry_run_returns_server_defaults() {
    let ns = TestEnv::shared().namespace("ssa-defaults");
    let (_, _, applier) = setup().await;
    let desired = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "payments-api", "namespace": ns.name(), "creationTimestamp": null},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "payments-api"}},
            "template": {"metadata": {"labels": {"app": "payments-api"}},
                         "spec": {"containers": [{"name": "api", "image": "registry.example.com/payments-api:v1.3.2",
                                                  "resources": null,
                                                  "securityContext": {"runAsNonRoot": true}}]}}
        },
        "status": {}
    });
    let predicted = applier.dry_run_apply(&desired).await.unwrap();
    assert_eq!(predicted["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(
        predicted["spec"]["template"]["spec"]["restartPolicy"],
        "Always"
    );
    assert_eq!(
        predicted["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsNonRoot"],
        true
    );
}

#[tokio::test]
async fn fields_from_kubectl_client_side_apply_are_removed_after_migration() {
    let env = TestEnv::shared();
    let ns = env.namespace("csa-migration");
    let (_, _, applier) = setup().await;
    let key = ResourceKey::new("", "ConfigMap", ns.name(), "settings");

    // The object was first created by `kubectl apply` (client-side).
    let manifest =
        serde_json::to_string(&config_map(ns.name(), json!({"keep": "1", "drop": "2"}))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cm.json");
    std::fs::write(&file, manifest).unwrap();
    let out = env
        .kubectl()
        .args(["apply", "-f"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let live = applier.get(&key).await.unwrap().unwrap();
    assert!(
        managers(&live)
            .iter()
            .any(|(m, _)| m == "kubectl-client-side-apply"),
        "{live:#}"
    );

    let stored = applier
        .apply(&config_map(ns.name(), json!({"keep": "1"})), Some(&live))
        .await
        .unwrap();
    assert_eq!(
        stored["data"],
        json!({"keep": "1"}),
        "a field removed from Git must be removed"
    );
    assert!(
        !managers(&stored)
            .iter()
            .any(|(m, _)| m == "kubectl-client-side-apply"),
        "ownership moved to {FIELD_MANAGER}: {:?}",
        managers(&stored)
    );
}

/// The switch from Argo CD: objects Argo CD applied, client-side (`Update` entries) or with
/// `ServerSideApply=true` (`Apply` entries), under its manager `argocd-controller`. A key removed
/// from Git after the switch must go on Plumb's first sync; it stayed before Plumb took over
/// Argo CD's entries (found by `scripts/conformance adopt`).
#[tokio::test]
async fn fields_argo_cd_applied_are_removed_after_migration() {
    let env = TestEnv::shared();
    let (_, _, applier) = setup().await;
    for (mode, extra) in [
        ("client-side", &[][..]),
        ("server-side", &["--server-side"][..]),
    ] {
        let ns = env.namespace(&format!("argo-{mode}"));
        let key = ResourceKey::new("", "ConfigMap", ns.name(), "settings");
        let manifest = serde_json::to_string(&config_map(
            ns.name(),
            json!({"LEVEL": "debug", "LOG_LEVEL": "info"}),
        ))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cm.json");
        std::fs::write(&file, manifest).unwrap();
        let out = env
            .kubectl()
            .args(["apply", "--field-manager=argocd-controller"])
            .args(extra)
            .arg("-f")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let live = applier.get(&key).await.unwrap().unwrap();
        assert!(
            managers(&live)
                .iter()
                .any(|(m, _)| m == "argocd-controller"),
            "{mode}: {live:#}"
        );

        let stored = applier
            .apply(
                &config_map(ns.name(), json!({"LEVEL": "debug"})),
                Some(&live),
            )
            .await
            .unwrap();
        assert_eq!(
            stored["data"],
            json!({"LEVEL": "debug"}),
            "{mode}: LOG_LEVEL was removed from Git"
        );
        assert!(
            !managers(&stored)
                .iter()
                .any(|(m, _)| m == "argocd-controller"),
            "{mode}: ownership moved to {FIELD_MANAGER}: {:?}",
            managers(&stored)
        );
    }
}

#[tokio::test]
async fn scope_and_kind_mistakes_are_reported_before_sending() {
    let (_, _, applier) = setup().await;
    let no_ns = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    let err = applier.apply(&no_ns, None).await.unwrap_err();
    assert!(matches!(err, Error::Scope { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "/ConfigMap//x: namespaced kind without metadata.namespace"
    );

    let ns_on_cluster = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "namespace": "y"}});
    assert!(matches!(
        applier.dry_run_apply(&ns_on_cluster).await.unwrap_err(),
        Error::Scope { .. }
    ));

    let unknown = json!({"apiVersion": "nope.example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}});
    let err = applier.apply(&unknown, None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "nope.example.com/Widget: kind not served by the API server in version v1"
    );

    let nameless =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default"}});
    assert!(matches!(
        applier.apply(&nameless, None).await.unwrap_err(),
        Error::MissingField {
            field: "metadata.name",
            ..
        }
    ));
}

#[tokio::test]
async fn invalid_objects_fail_with_the_object_named() {
    let ns = TestEnv::shared().namespace("ssa-invalid");
    let (_, _, applier) = setup().await;
    let bad = json!({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "Bad_Name", "namespace": ns.name()}});
    let err = applier.apply(&bad, None).await.unwrap_err();
    assert_eq!(err.status_code(), Some(422));
    assert_eq!(
        err.to_string(),
        format!(
            "/ConfigMap/{}/Bad_Name: server-side apply failed",
            ns.name()
        )
    );
}

#[tokio::test]
async fn delete_propagates_and_reports_not_found() {
    let ns = TestEnv::shared().namespace("delete");
    let (_, _, applier) = setup().await;
    let key = ResourceKey::new("", "ConfigMap", ns.name(), "settings");
    applier
        .apply(&config_map(ns.name(), json!({"a": "1"})), None)
        .await
        .unwrap();
    let deleted = applier
        .delete(&key, PropagationPolicy::Foreground)
        .await
        .unwrap();
    assert!(
        matches!(deleted, Deleted::Gone | Deleted::Pending(_)),
        "{deleted:?}"
    );
    eventually("the ConfigMap to be gone", || async {
        applier.get(&key).await.unwrap().is_none().then_some(())
    })
    .await;
    assert_eq!(
        applier
            .delete(&key, PropagationPolicy::Background)
            .await
            .unwrap(),
        Deleted::NotFound
    );
}

/// Found by the conformance harness: a custom resource whose kind has no status subresource
/// keeps the `status` Git declares under Argo CD (`kubectl apply` writes it); Plumb dropped it.
/// Where the kind has a status subresource (a Deployment), `status` is still never sent.
#[tokio::test]
async fn status_is_written_only_for_kinds_without_a_status_subresource() {
    let ns = TestEnv::shared().namespace("ssa-status");
    let (_, _, applier) = setup().await;
    let group = format!("p{}.status.plumb-test.example.com", std::process::id());
    let crd_name = format!("gauges.{group}");
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"kind": "Gauge", "plural": "gauges", "singular": "gauge", "listKind": "GaugeList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    });
    applier.apply(&crd, None).await.unwrap();
    crate::wait_established(&applier, &crd_name).await;
    let gauge = json!({"apiVersion": format!("{group}/v1"), "kind": "Gauge",
        "metadata": {"name": "g", "namespace": ns.name()}, "spec": {"max": 3},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "note": null}});
    let stored = applier.apply(&gauge, None).await.unwrap();
    assert_eq!(
        stored["status"],
        json!({"conditions": [{"type": "Ready", "status": "True"}]})
    );

    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns.name()},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "registry.example/web:1"}]}}},
        "status": {"replicas": 7}});
    let stored = applier.apply(&deployment, None).await.unwrap();
    assert_ne!(stored["status"]["replicas"], 7, "{:#}", stored["status"]);

    let key = ResourceKey::new(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "",
        &crd_name,
    );
    applier
        .delete(&key, PropagationPolicy::Background)
        .await
        .unwrap();
}
