//! Argo CD's namespace-install: the controller's own ServiceAccount holds a Role in its
//! namespace only (no ClusterRole), and a cluster Secret for `https://kubernetes.default.svc`
//! with `namespaces` narrows the in-cluster destination to it. The controller becomes ready (its
//! in-cluster cache lists that namespace only: a cluster-wide list would be refused), syncs an
//! Application into its namespace, refuses one into another namespace with gitops-engine's
//! message, and `cluster.inClusterEnabled: "false"` refuses in-cluster Applications with
//! Argo's message until it is turned back on.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, Patch, PatchParams, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::exec_cluster::api_server;
use crate::namespaced_cluster::{conditions, kubectl, refused, scoped_token};
use crate::support::{Controlled, DEADLINE};

/// A client that authenticates with `token` only (what the ServiceAccount's RBAC allows).
async fn token_client(server: &str, ca: &str, token: &str) -> kube::Client {
    let kubeconfig: kube::config::Kubeconfig = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x"
    }))
    .expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

/// `GET /readyz` on the metrics address: the status line.
async fn readyz(addr: std::net::SocketAddr) -> String {
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return "not listening".into();
    };
    let asked = stream
        .write_all(b"GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await;
    let mut answer = String::new();
    if asked.is_err() || stream.read_to_string(&mut answer).await.is_err() {
        return "no answer".into();
    }
    answer.lines().next().unwrap_or_default().to_string()
}

/// Waits until `/readyz` answers 200.
async fn wait_ready(addr: std::net::SocketAddr) {
    let start = Instant::now();
    loop {
        let status = readyz(addr).await;
        if status.contains(" 200") {
            return;
        }
        assert!(start.elapsed() < DEADLINE, "never ready: {status}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

fn free_addr() -> std::net::SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

#[tokio::test]
async fn a_namespace_install_is_ready_and_manages_its_namespace_only() {
    let env = TestEnv::shared();
    let ns = env.namespace("nsinstall");
    let other = env.namespace("nsinstall-other");
    let home = ns.name().to_string();
    let admin = env.client().await;
    let token = scoped_token(env, &home, "controller", &[&home]);
    let (server, ca) = api_server(env);
    let (ok, text) = kubectl(
        env,
        &[
            "auth",
            "can-i",
            "list",
            "configmaps",
            "--all-namespaces",
            &format!("--as=system:serviceaccount:{home}:controller"),
        ],
    );
    assert!(!ok, "a cluster-wide list is allowed: {text}");
    // The Secret Argo documents for a namespaced install (`argocd cluster add --in-cluster
    // --namespace`), made before the controller starts.
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), &home);
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "in-cluster-namespaced", "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": "in-cluster", "server": "https://kubernetes.default.svc",
                       "namespaces": home, "config": "{\"tlsClientConfig\":{\"insecure\":false}}"}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create in-cluster secret");
    let addr = free_addr();
    let controller = token_client(&server, &ca, &token).await;
    let ctl = Controlled::start_as(env, ns, admin.clone(), controller, |c| {
        c.metrics_addr = Some(addr);
    })
    .await;
    // Ready: the in-cluster cache has its initial lists (of the one namespace).
    wait_ready(addr).await;

    let cm = |ns: &str, name: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  k: v\n"
        )
    };
    let repo = GitRepo::new();
    repo.commit(
        &[
            ("home/cm.yaml", cm(&home, "settings").as_str()),
            ("other/cm.yaml", cm(other.name(), "elsewhere").as_str()),
        ],
        "apps",
    );
    for (name, path) in [("home", "home"), ("other", "other")] {
        ctl.create_app(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name},
            "spec": {"project": "default",
                     "source": {"repoURL": repo.url(), "path": path},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": home}}
        }))
        .await;
    }
    ctl.wait_app("home", "compared", |a| {
        a["status"]["sync"]["status"] == "OutOfSync"
    })
    .await;
    let app = ctl.sync("home", json!({})).await;
    let st = &app["status"]["operationState"];
    assert_eq!(st["phase"], "Succeeded", "{st:#}");
    ctl.wait_app("home", "Synced and Healthy", |a| {
        a["status"]["sync"]["status"] == "Synced" && a["status"]["health"]["status"] == "Healthy"
    })
    .await;
    let written: Api<ConfigMap> = Api::namespaced(admin.clone(), &home);
    written.get("settings").await.expect("the ConfigMap synced");
    let outside = format!(
        "Failed to load live state: namespace \"{}\" for ConfigMap \"elsewhere\" is not managed",
        other.name()
    );
    ctl.wait_app("other", "refused", |a| refused(a, &outside))
        .await;

    // cluster.inClusterEnabled: "false": Argo's GetCluster error, then back on.
    let cms: Api<ConfigMap> = Api::namespaced(admin.clone(), &home);
    let settings = |enabled: &str| {
        serde_json::from_value::<ConfigMap>(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "argocd-cm"},
            "data": {"cluster.inClusterEnabled": enabled}
        }))
        .expect("configmap")
    };
    let apply = PatchParams::apply("nsinstall-test").force();
    cms.patch("argocd-cm", &apply, &Patch::Apply(settings("false")))
        .await
        .expect("disable in-cluster");
    let disabled = "error getting cluster by server \"https://kubernetes.default.svc\": rpc error: code = NotFound desc = cluster \"https://kubernetes.default.svc\" is disabled";
    ctl.wait_app("home", "refused as disabled", |a| {
        a["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "InvalidSpecError" && c["message"] == disabled)
    })
    .await;
    cms.patch("argocd-cm", &apply, &Patch::Apply(settings("true")))
        .await
        .expect("enable in-cluster");
    ctl.wait_app("home", "compared again", |a| {
        a["status"]["sync"]["status"] == "Synced" && !conditions(a).contains("InvalidSpecError")
    })
    .await;
    drop(other);
}

/// Without the in-cluster Secret the cache's cluster-wide lists are all refused by RBAC: the
/// controller is ready all the same (as Argo's health does not wait on cluster caches), and an
/// Application whose objects its RBAC does not reach gets the refusal as its error.
#[tokio::test]
async fn refused_lists_leave_the_controller_ready_and_fail_the_applications_that_need_them() {
    let env = TestEnv::shared();
    let ns = env.namespace("nsinstall-bare");
    let other = env.namespace("nsinstall-bare-other");
    let home = ns.name().to_string();
    let admin = env.client().await;
    let token = scoped_token(env, &home, "controller", &[&home]);
    let (server, ca) = api_server(env);
    let addr = free_addr();
    let controller = token_client(&server, &ca, &token).await;
    let ctl = Controlled::start_as(env, ns, admin.clone(), controller, |c| {
        c.metrics_addr = Some(addr);
    })
    .await;
    wait_ready(addr).await;
    let repo = GitRepo::new();
    let cm = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: elsewhere\n  namespace: {}\ndata:\n  k: v\n",
        other.name()
    );
    repo.commit(&[("other/cm.yaml", cm.as_str())], "app");
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "other"},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "other"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": home}}
    }))
    .await;
    let app = ctl
        .wait_app("other", "refused by RBAC", |a| {
            conditions(a).contains("ComparisonError") && conditions(a).contains("forbidden")
        })
        .await;
    assert_eq!(
        app["status"]["sync"]["status"], "Unknown",
        "{:#}",
        app["status"]
    );
    drop(other);
}
