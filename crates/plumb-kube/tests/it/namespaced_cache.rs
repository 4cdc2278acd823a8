//! The live cache of a namespaced cluster (Argo's `namespaces`), reached as a ServiceAccount
//! whose RBAC grants namespaces a and b only: any cluster-wide list, of a namespaced kind or a
//! cluster-scoped one, is refused by the API server (403), so a cache that becomes Ready
//! without a single watch error listed nothing cluster-wide.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use plumb_kube::{ApiDiscovery, ClusterScope, LiveCacheConfig, LiveEvent, live_cache};
use plumb_model::{GroupKind, ResourceKey};
use plumb_testenv::TestEnv;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::{DEADLINE, eventually, setup};

/// Runs kubectl against the test control plane as its administrator.
fn kubectl(env: &TestEnv, args: &[&str]) -> String {
    let out = env.kubectl().args(args).output().expect("kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A client authenticated as ServiceAccount `sa` of `home`, with every right in `namespaces`
/// (a Role and RoleBinding in each, as `argocd-manager` of a namespaced cluster) and none
/// elsewhere; its token from the TokenRequest API.
async fn scoped_client_config(
    env: &TestEnv,
    admin: &plumb_kube::Applier,
    home: &str,
    sa: &str,
    namespaces: &[&str],
) -> Value {
    kubectl(env, &["-n", home, "create", "serviceaccount", sa]);
    for ns in namespaces {
        let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": sa, "namespace": ns},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]});
        let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": sa, "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": sa},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": home}]});
        admin.apply(&role, None).await.unwrap();
        admin.apply(&binding, None).await.unwrap();
    }
    let token = kubectl(env, &["-n", home, "create", "token", sa, "--duration=1h"]);
    let view: Value = serde_json::from_str(&kubectl(
        env,
        &["config", "view", "--raw", "--minify", "-o", "json"],
    ))
    .expect("kubeconfig json");
    json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "scoped", "cluster": view["clusters"][0]["cluster"]}],
        "users": [{"name": "scoped", "user": {"token": token}}],
        "contexts": [{"name": "scoped", "context": {"cluster": "scoped", "user": "scoped"}}],
        "current-context": "scoped",
    })
}

async fn client_of(kubeconfig: Value) -> kube::Client {
    let kubeconfig: kube::config::Kubeconfig =
        serde_json::from_value(kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    plumb_kube::client_from(config).expect("client")
}

fn config_map(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": ns}, "data": {"k": "v"}})
}

#[tokio::test]
async fn a_namespaced_cluster_is_listed_and_watched_in_its_namespaces_only() {
    let env = TestEnv::shared();
    let (a, b, c) = (
        env.namespace("scoped-a"),
        env.namespace("scoped-b"),
        env.namespace("scoped-c"),
    );
    let (_, _, admin) = setup().await;
    for ns in [&a, &b, &c] {
        admin
            .apply(&config_map(ns.name(), "present"), None)
            .await
            .unwrap();
    }
    let kubeconfig =
        scoped_client_config(env, &admin, a.name(), "scoped", &[a.name(), b.name()]).await;
    let client = client_of(kubeconfig).await;
    // The ServiceAccount really cannot list cluster-wide: the test would prove nothing else.
    let all: kube::Api<k8s_openapi::api::core::v1::ConfigMap> = kube::Api::all(client.clone());
    match all.list(&Default::default()).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 403, "{s:?}"),
        other => panic!("a cluster-wide list must be forbidden: {other:?}"),
    }
    let discovery = ApiDiscovery::new(client.clone()).await.expect("discovery");
    let scope = ClusterScope::namespaced(&[a.name().to_string(), b.name().to_string()], false);
    let (reader, events) = live_cache(
        client,
        &discovery.catalog(),
        LiveCacheConfig::default().scope(scope),
    );
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let seen = errors.clone();
    let driver = tokio::spawn(events.for_each(move |event| {
        match event {
            Ok(event) => drop(tx.send(event)),
            Err(e) => seen.lock().unwrap().push(format!(
                "{e}: {:?}",
                std::error::Error::source(&e).map(ToString::to_string)
            )),
        }
        async {}
    }));
    tokio::time::timeout(DEADLINE, async {
        while let Some(event) = rx.recv().await {
            if event == LiveEvent::Ready {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never Ready; watch errors: {:?}", errors.lock().unwrap()));
    assert_eq!(*errors.lock().unwrap(), Vec::<String>::new());

    let cm = |ns: &str, name: &str| ResourceKey::new("", "ConfigMap", ns, name);
    assert!(reader.get(&cm(a.name(), "present")).is_some());
    assert!(reader.get(&cm(b.name(), "present")).is_some());
    assert!(reader.get(&cm(c.name(), "present")).is_none());
    assert!(reader.is_synced(&GroupKind::new("", "ConfigMap")));
    let kinds = reader.watched_kinds();
    assert!(
        !kinds
            .iter()
            .any(|k| k.kind == "Namespace" || k.kind == "ClusterRole"),
        "cluster-scoped kinds are not watched without clusterResources: {kinds:?}"
    );
    assert!(reader.namespace_objects("").is_empty());

    // Both namespaces' watches follow changes and deletions.
    admin
        .apply(&config_map(c.name(), "later"), None)
        .await
        .unwrap();
    admin
        .apply(&config_map(a.name(), "later"), None)
        .await
        .unwrap();
    let gone = ResourceKey::new("", "ConfigMap", b.name(), "present");
    admin
        .delete(&gone, plumb_kube::PropagationPolicy::Background)
        .await
        .unwrap();
    eventually("a's new ConfigMap in the cache", || async {
        reader.get(&cm(a.name(), "later")).map(|_| ())
    })
    .await;
    eventually("b's deleted ConfigMap out of the cache", || async {
        reader.get(&gone).is_none().then_some(())
    })
    .await;
    assert!(reader.get(&cm(c.name(), "later")).is_none());
    assert!(reader.namespace_objects(c.name()).is_empty());
    assert_eq!(*errors.lock().unwrap(), Vec::<String>::new());
    driver.abort();
}
