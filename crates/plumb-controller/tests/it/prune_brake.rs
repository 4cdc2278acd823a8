//! The brake on mass deletion end to end: Git drops most of an automated Application, the
//! operation stops before deleting anything with a condition and an operation message that
//! name the count; raising the limit lets the prune through.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::{Controlled, DEADLINE};

fn config_map(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  value: one\n")
}

fn sync_error(app: &Value) -> Option<String> {
    app["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "SyncError")
        .and_then(|c| c["message"].as_str())
        .map(str::to_string)
}

async fn live_names(ctl: &Controlled, ns: &str) -> Vec<String> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        ctl.client.clone(),
        ns,
        &kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    let mut names: Vec<String> = api
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter(|o| o.metadata.deletion_timestamp.is_none())
        .filter_map(|o| o.metadata.name)
        .filter(|n| n != "kube-root-ca.crt")
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn the_brake_stops_an_automated_prune_of_most_of_an_application_until_the_limit_is_raised() {
    let env = TestEnv::shared();
    let ns = env.namespace("ctl-brake");
    // Stricter limits than the defaults, from argocd-cm: more than 3 objects and more than 40%.
    let cms: Api<DynamicObject> = Api::namespaced_with(
        env.client().await,
        ns.name(),
        &kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    let settings: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm"},
        "data": {"plumb.sync.prune.maxDeletions": "3", "plumb.sync.prune.maxFraction": "40%"}
    }))
    .expect("cm");
    cms.create(&PostParams::default(), &settings)
        .await
        .expect("argocd-cm");
    let ctl = Controlled::start_in(env, ns).await;
    let dest = env.namespace("dest-brake");
    let repo = GitRepo::new();
    let files: Vec<(String, String)> = (0..7)
        .map(|i| (format!("app/cm-{i}.yaml"), config_map(&format!("cm-{i}"))))
        .collect();
    let refs: Vec<(&str, String)> = files.iter().map(|(p, c)| (p.as_str(), c.clone())).collect();
    repo.commit(&refs, "seven objects");
    let name = "brake";
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                 "syncPolicy": {"automated": {"prune": true}}}
    }))
    .await;
    ctl.wait_app(name, "auto-synced", |a| {
        a["status"]["sync"]["status"] == "Synced"
            && a["status"]["operationState"]["phase"] == "Succeeded"
    })
    .await;
    assert_eq!(live_names(&ctl, dest.name()).await.len(), 7);

    // Git drops four of the seven (57%).
    let head = repo.remove(
        &[
            "app/cm-0.yaml",
            "app/cm-1.yaml",
            "app/cm-2.yaml",
            "app/cm-3.yaml",
        ],
        "most of it gone",
    );
    ctl.patch_app(
        name,
        json!({"metadata": {"annotations": {"argocd.argoproj.io/refresh": "normal"}}}),
    )
    .await;
    let expected = format!(
        "Mass-deletion brake: pruning 4 of 7 objects (57.1%) exceeds both limits: 3 objects (argocd-cm plumb.sync.prune.maxDeletions) \
         and 40% (argocd-cm plumb.sync.prune.maxFraction). Nothing was applied or deleted. If Git is right, sync once by hand \
         (plumb app sync {name} --prune, which asks for confirmation) or raise the limits for this Application \
         (sync options PruneMaxDeletions=N, PruneMaxFraction=F)"
    );
    let app = ctl
        .wait_app(name, "stopped by the brake", |a| {
            a["status"]["operationState"]["phase"] == "Failed"
                && a["status"]["operationState"]["syncResult"]["revision"] == head.as_str()
                && sync_error(a).is_some()
        })
        .await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["message"], expected.as_str(), "{st:#}");
    assert_eq!(
        sync_error(&app).expect("condition"),
        format!("Skipping automated sync to {head}: {expected}")
    );
    let results = st["syncResult"]["resources"].as_array().expect("results");
    assert_eq!(results.len(), 4, "{results:#?}");
    assert!(
        results.iter().all(|r| r["status"] == "PruneSkipped"),
        "{results:#?}"
    );
    // Nothing deleted, and nothing is retried while the picture stays the same.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(live_names(&ctl, dest.name()).await.len(), 7);
    let again = ctl
        .wait_app(name, "compared", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    assert_eq!(
        again["status"]["operationState"]["startedAt"], st["startedAt"],
        "not retried"
    );

    // Raising the limit for this Application lets the prune through.
    ctl.patch_app(
        name,
        json!({"spec": {"syncPolicy": {"syncOptions": ["PruneMaxDeletions=4"]}}}),
    )
    .await;
    let start = Instant::now();
    while live_names(&ctl, dest.name()).await.len() != 3 {
        assert!(start.elapsed() < DEADLINE, "the raised limit did not prune");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let app = ctl
        .wait_app(name, "synced, condition cleared", |a| {
            a["status"]["operationState"]["phase"] == "Succeeded"
                && a["status"]["sync"]["status"] == "Synced"
                && sync_error(a).is_none()
        })
        .await;
    assert_eq!(
        app["status"]["operationState"]["syncResult"]["revision"],
        head.as_str()
    );
    assert_eq!(
        live_names(&ctl, dest.name()).await,
        ["cm-4", "cm-5", "cm-6"]
    );
}
