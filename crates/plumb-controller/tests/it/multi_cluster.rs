//! A destination cluster from an Argo CD cluster Secret: a second, real control plane, reached
//! with the credentials in the Secret, synced to, and kept apart from the controller's own.

use std::process::{Command, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kube::api::{Api, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::git::GitRepo;
use serde_json::json;

use crate::support::{Controlled, plumb_testenv_root, resource};

#[tokio::test]
async fn applications_deploy_to_clusters_named_by_cluster_secrets() {
    let env = TestEnv::shared();
    // The second cluster lives as long as this test process.
    let state = std::env::temp_dir().join(format!("plumb-second-{}", std::process::id()));
    let out = Command::new(plumb_testenv_root().join("scripts/testenv"))
        .arg("up")
        .arg("--state")
        .arg(&state)
        .arg("--owner-pid")
        .arg(std::process::id().to_string())
        .stdin(Stdio::null())
        .output()
        .expect("scripts/testenv");
    assert!(
        out.status.success(),
        "second control plane: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let server = std::fs::read_to_string(state.join("server"))
        .expect("server")
        .trim()
        .to_string();
    let b64 =
        |f: &str| STANDARD.encode(std::fs::read(state.join("pki").join(f)).expect("pki file"));

    let ctl = Controlled::start(env, "ctl-multi").await;
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(ctl.client.clone(), ctl.ns.name());
    let secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "cluster-second", "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {
            "name": "second",
            "server": server,
            "config": json!({"tlsClientConfig": {"caData": b64("ca.crt"), "certData": b64("admin.crt"), "keyData": b64("admin.key")}}).to_string(),
        }
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create cluster secret");

    let repo = GitRepo::new();
    repo.commit(
        &[(
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  region: eu\n",
        )],
        "cm",
    );
    let name = format!("remote-{}", std::process::id());
    let ns = format!("team-{}", std::process::id());
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"name": "second", "namespace": ns},
                 "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}
    }))
    .await;
    let app = ctl
        .wait_app(&name, "compared against the second cluster", |a| {
            a["status"]["sync"]["status"] == "OutOfSync"
        })
        .await;
    assert_eq!(resource(&app, "ConfigMap")["health"]["status"], "Missing");

    let app = ctl.sync(&name, json!({})).await;
    assert_eq!(
        app["status"]["operationState"]["phase"], "Succeeded",
        "{:#}",
        app["status"]["operationState"]
    );
    ctl.wait_app(&name, "Synced", |a| {
        a["status"]["sync"]["status"] == "Synced"
    })
    .await;

    // The ConfigMap is in the second cluster, not in the controller's own.
    let second = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(state.join("kubeconfig"))
        .args([
            "-n",
            &ns,
            "get",
            "configmap",
            "settings",
            "-o",
            "jsonpath={.data.region}",
        ])
        .output()
        .expect("kubectl");
    assert_eq!(
        String::from_utf8_lossy(&second.stdout),
        "eu",
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let first = env
        .kubectl()
        .args(["get", "namespace", &ns])
        .output()
        .expect("kubectl");
    assert!(
        !first.status.success(),
        "nothing was created in the controller's own cluster"
    );
}
