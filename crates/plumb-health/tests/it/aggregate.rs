//! Application health aggregation.

use plumb_health::{AppResource, Assessor, HealthCode, HealthStatus};
use plumb_model::ResourceKey;
use serde_json::Value;

use crate::support::fixture;

fn app() -> ResourceKey {
    ResourceKey::new("argoproj.io", "Application", "argocd", "shop")
}

fn aggregate(
    items: &[(Option<Value>, Option<Value>)],
) -> (HealthStatus, Vec<Option<HealthStatus>>) {
    let keys: Vec<ResourceKey> = items
        .iter()
        .map(|(t, l)| ResourceKey::of(l.as_ref().or(t.as_ref()).unwrap()))
        .collect();
    let resources: Vec<AppResource<'_>> = items
        .iter()
        .zip(&keys)
        .map(|((t, l), key)| AppResource {
            key,
            target: t.as_ref(),
            live: l.as_ref(),
        })
        .collect();
    let out = Assessor::default().app_health(&app(), &resources);
    (out.status, out.resources)
}

fn live(file: &str) -> (Option<Value>, Option<Value>) {
    let obj = fixture(file);
    (Some(obj.clone()), Some(obj))
}

#[test]
fn worst_child_wins_and_is_named() {
    let (status, per) = aggregate(&[
        live("deployment-healthy.yaml"),
        live("svc-loadbalancer-pending.yaml"),
        live("configmap.yaml"),
        live("pod-crashloop.yaml"),
    ]);
    assert_eq!(
        status,
        HealthStatus::new(
            HealthCode::Degraded,
            "Caused by Pod:shop/checkout-6f9c7d8b5d-x7k2p"
        )
    );
    assert_eq!(per[0].as_ref().unwrap().code, HealthCode::Healthy);
    assert_eq!(per[1].as_ref().unwrap().code, HealthCode::Progressing);
    assert_eq!(per[2], None);
}

#[test]
fn all_healthy_has_no_message() {
    let (status, _) = aggregate(&[live("deployment-healthy.yaml"), live("svc-clusterip.yaml")]);
    assert_eq!(status, HealthStatus::new(HealthCode::Healthy, ""));
}

#[test]
fn at_most_three_causes_then_and_n_more() {
    let mut items = Vec::new();
    for name in ["a", "b", "c", "d", "e"] {
        let mut obj = fixture("deployment-progressing.yaml");
        obj["metadata"]["name"] = name.into();
        items.push((Some(obj.clone()), Some(obj)));
    }
    let (status, _) = aggregate(&items);
    assert_eq!(
        status,
        HealthStatus::new(
            HealthCode::Progressing,
            "Caused by apps/Deployment:shop/a, apps/Deployment:shop/b, apps/Deployment:shop/c and 2 more"
        )
    );
}

#[test]
fn hooks_ignored_and_self_are_skipped() {
    let mut ignored = fixture("pod-crashloop.yaml");
    ignored["metadata"]["annotations"] =
        serde_json::json!({"argocd.argoproj.io/ignore-healthcheck": "true"});
    let hook = fixture("job-failed.yaml"); // carries argocd.argoproj.io/hook: PreSync
    let mut own = serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "shop", "namespace": "argocd"},
        "status": {"health": {"status": "Degraded"}}
    });
    own["metadata"]["generation"] = 1.into();
    let (status, per) = aggregate(&[
        live("deployment-healthy.yaml"),
        (Some(ignored.clone()), Some(ignored)),
        (Some(hook.clone()), Some(hook)),
        (Some(own.clone()), Some(own)),
    ]);
    assert_eq!(status, HealthStatus::new(HealthCode::Healthy, ""));
    assert_eq!(per[1], None);
    assert_eq!(per[2], None);
}

#[test]
fn missing_resources_do_not_degrade_the_app_unless_nothing_is_live() {
    let target = fixture("deployment-healthy.yaml");
    let (status, per) = aggregate(&[(Some(target.clone()), None), live("svc-clusterip.yaml")]);
    assert_eq!(status.code, HealthCode::Healthy);
    assert_eq!(per[0], Some(HealthStatus::new(HealthCode::Missing, "")));

    let (status, _) = aggregate(&[
        (Some(target), None),
        (Some(fixture("svc-clusterip.yaml")), None),
    ]);
    assert_eq!(
        status,
        HealthStatus::new(
            HealthCode::Missing,
            "Caused by Service:shop/checkout, apps/Deployment:shop/checkout"
        )
    );
}

#[test]
fn skip_hook_targets_are_not_counted() {
    let mut skip = fixture("deployment-healthy.yaml");
    skip["metadata"]["annotations"]["argocd.argoproj.io/hook"] = "Skip".into();
    let (status, per) = aggregate(&[(Some(skip), None)]);
    assert_eq!(status.code, HealthCode::Healthy);
    assert_eq!(per[0], None);
}

#[test]
fn hook_targets_without_live_objects_are_not_missing() {
    // A PreSync Job before its first sync (or deleted after it succeeded): Argo CD splits hooks
    // off the managed objects, so the Application is judged by the others alone (issue #32).
    let hook = fixture("job-failed.yaml"); // carries argocd.argoproj.io/hook: PreSync
    let (status, per) = aggregate(&[
        (Some(hook.clone()), None),
        (Some(fixture("svc-clusterip.yaml")), None),
    ]);
    assert_eq!(
        status,
        HealthStatus::new(HealthCode::Missing, "Caused by Service:shop/checkout")
    );
    assert_eq!(per[0], None);

    let (status, _) = aggregate(&[(Some(hook), None), live("svc-clusterip.yaml")]);
    assert_eq!(status, HealthStatus::new(HealthCode::Healthy, ""));
}
