//! What makes the controller look at a set again besides the set itself: the cluster Secrets
//! (a clusters generator has no requeue interval, so only the watch can notice them) and
//! `requeueAfterSeconds` (a Git repository gets a commit, no webhook, nothing watched changes).

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use super::support::{Running, eventually};

fn cluster_secret(name: &str, server: &str, fleet: bool) -> Secret {
    let mut labels = json!({"argocd.argoproj.io/secret-type": "cluster"});
    if fleet {
        labels["actlt-fleet"] = json!("yes");
    }
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "stringData": {"name": name, "server": server, "config": "{\"bearerToken\":\"actlt-s3cr3t\"}"}
    }))
    .expect("cluster Secret")
}

fn clusters_set() -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": "per-cluster"},
        "spec": {
            "generators": [{"clusters": {"selector": {"matchLabels": {"actlt-fleet": "yes"}}}}],
            "template": {
                "metadata": {"name": "{{name}}"},
                "spec": {"project": "default",
                         "source": {"repoURL": "https://example.com/apps.git", "path": "guestbook"},
                         "destination": {"server": "{{server}}", "namespace": "guestbook"}}
            }
        }
    })
}

/// Whether Application `name` exists and is not being deleted.
async fn alive(r: &Running, name: &str) -> bool {
    r.app_list()
        .await
        .iter()
        .any(|a| a["metadata"]["name"] == name && a["metadata"]["deletionTimestamp"].is_null())
}

/// Adding, labelling, unlabelling and deleting cluster Secrets each re-reconcile the set.
#[tokio::test]
async fn cluster_secrets_trigger_a_reconcile() {
    let r = Running::start("actlt-clusters", |_| {}).await;
    let secrets: Api<Secret> = Api::namespaced(r.client.clone(), r.ns.name());
    r.create_set(clusters_set()).await;
    eventually("the first reconcile", || async {
        r.condition("per-cluster", "ResourcesUpToDate")
            .await
            .filter(|c| c["status"] == "True")
    })
    .await;
    assert!(r.app_names().await.is_empty());

    // A labelled cluster is added.
    let pp = PostParams::default();
    secrets
        .create(&pp, &cluster_secret("actlt-one", "https://10.9.0.1", true))
        .await
        .expect("create");
    eventually("actlt-one generated", || async {
        alive(&r, "actlt-one").await.then_some(())
    })
    .await;
    // An unlabelled cluster is added, then labelled.
    secrets
        .create(&pp, &cluster_secret("actlt-two", "https://10.9.0.2", false))
        .await
        .expect("create");
    let label = |v: Value| json!({"metadata": {"labels": {"actlt-fleet": v}}});
    secrets
        .patch(
            "actlt-two",
            &PatchParams::default(),
            &Patch::Merge(&label(json!("yes"))),
        )
        .await
        .expect("label");
    eventually("actlt-two generated once labelled", || async {
        alive(&r, "actlt-two").await.then_some(())
    })
    .await;
    // The first loses its label: its Application goes (the resources finalizer keeps it, marked).
    secrets
        .patch(
            "actlt-one",
            &PatchParams::default(),
            &Patch::Merge(&label(Value::Null)),
        )
        .await
        .expect("unlabel");
    eventually("actlt-one deleted once unlabelled", || async {
        (!alive(&r, "actlt-one").await).then_some(())
    })
    .await;
    // The second cluster is deleted: its Application goes entirely (a destination that no
    // longer exists loses the resources finalizer first, as in Argo).
    secrets
        .delete("actlt-two", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("actlt-two gone with its cluster", || async {
        (!r.app_names().await.contains(&"actlt-two".to_string())).then_some(())
    })
    .await;
    let text = serde_json::to_string(&r.set("per-cluster").await).expect("json");
    assert!(!text.contains("actlt-s3cr3t"), "{text}");
}

/// A git generator re-reads its repository every `requeueAfterSeconds`: a commit shows without
/// any watched object changing.
#[tokio::test]
async fn requeue_after_seconds_rereads_git() {
    let r = Running::start("actlt-requeue", |_| {}).await;
    let repo = GitRepo::new();
    repo.commit(&[("apps/one/cm.yaml", "kind: ConfigMap\n")], "one");
    r.create_set(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
        "metadata": {"name": "dirs"},
        "spec": {
            "generators": [{"git": {"repoURL": repo.url(), "revision": "HEAD",
                                    "directories": [{"path": "apps/*"}], "requeueAfterSeconds": 2}}],
            "template": {
                "metadata": {"name": "{{path.basename}}"},
                "spec": {"project": "default",
                         "source": {"repoURL": repo.url(), "path": "{{path}}"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "{{path.basename}}"}}
            }
        }
    }))
    .await;
    eventually("one", || async {
        (r.app_names().await == ["one"]).then_some(())
    })
    .await;
    repo.commit(&[("apps/two/cm.yaml", "kind: ConfigMap\n")], "two");
    eventually("two, after the requeue interval", || async {
        (r.app_names().await == ["one", "two"]).then_some(())
    })
    .await;
}
