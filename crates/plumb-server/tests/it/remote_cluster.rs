//! An Application on another cluster, named by an Argo CD cluster Secret: the server compares it,
//! shows its tree and its live objects, and describes the cluster, reaching a second, real
//! control plane with the Secret's credentials (as the controller does).

use std::process::{Command, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use kube::api::{Api, PostParams};
use plumb_testenv::git::GitRepo;
use serde_json::{Value, json};

use crate::support::Stack;

fn item<'a>(managed: &'a Value, kind: &str) -> &'a Value {
    managed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {managed:#}"))
}

#[tokio::test]
async fn applications_on_a_cluster_secrets_cluster_are_served_from_that_cluster() {
    // The second cluster lives as long as this test process.
    let state = std::env::temp_dir().join(format!("plumb-srv-second-{}", std::process::id()));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(root.join("scripts/testenv"))
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
    let second = |args: &[&str]| {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(state.join("kubeconfig"))
            .args(args)
            .output()
            .expect("kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    second(&["create", "namespace", "srv-remote-dest"]);
    second(&[
        "-n",
        "srv-remote-dest",
        "create",
        "configmap",
        "srv-remote-cm",
        "--from-literal=color=red",
    ]);

    let stack = Stack::start("srv-remote").await;
    let b64 =
        |f: &str| STANDARD.encode(std::fs::read(state.join("pki").join(f)).expect("pki file"));
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(crate::support::env().client().await, stack.ns.name());
    let secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "cluster-srv-second", "labels": {"argocd.argoproj.io/secret-type": "cluster"},
                     // As `kubectl apply` leaves it: the whole Secret again, credentials included
                     // (the annotation GHSA-fwr2-64vr-xv9m leaked).
                     "annotations": {"kubectl.kubernetes.io/last-applied-configuration": json!({
                         "stringData": {"config": {"tlsClientConfig": {"keyData": b64("admin.key")}}}
                     }).to_string()}},
        "stringData": {
            "name": "srv-second",
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
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: srv-remote-cm\ndata:\n  color: blue\n",
        )],
        "one ConfigMap",
    );
    let app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "srv-remote"},
        "spec": {"project": "default",
                 "source": {"repoURL": repo.url(), "path": "app"},
                 "destination": {"name": "srv-second", "namespace": "srv-remote-dest"}}
    });
    let (code, body) = stack
        .send(
            reqwest::Method::POST,
            "/api/v1/applications?validate=false",
            Some(&app),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    stack
        .wait_app("srv-remote", "compared", |a| {
            a["status"]["resources"]
                .as_array()
                .is_some_and(|r| !r.is_empty())
        })
        .await;

    // The comparison reads the second cluster's object (red there, blue in Git).
    let (code, managed) = stack
        .get("/api/v1/applications/srv-remote/managed-resources")
        .await;
    assert_eq!(code, 200, "{managed}");
    let cm = item(&managed, "ConfigMap");
    let live: Value =
        serde_json::from_str(cm["liveState"].as_str().expect("live state")).expect("JSON");
    assert_eq!(live["data"]["color"], "red", "{cm:#}");
    assert_eq!(cm["modified"], true, "{cm:#}");

    // Its tree and its live object come from there too.
    let (code, tree) = stack
        .get("/api/v1/applications/srv-remote/resource-tree")
        .await;
    assert_eq!(code, 200, "{tree}");
    assert!(
        tree["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|n| n["kind"] == "ConfigMap" && n["name"] == "srv-remote-cm"),
        "{tree:#}"
    );
    let (code, resource) = stack
        .get("/api/v1/applications/srv-remote/resource?namespace=srv-remote-dest&group=&version=v1&kind=ConfigMap&resourceName=srv-remote-cm")
        .await;
    assert_eq!(code, 200, "{resource}");
    let manifest: Value =
        serde_json::from_str(resource["manifest"].as_str().expect("manifest")).expect("JSON");
    assert_eq!(manifest["data"]["color"], "red");

    // The cluster itself, by name and by URL; a URL no Secret describes is refused as Argo
    // refuses it.
    let (code, cluster) = stack.get("/api/v1/clusters/srv-second?id.type=name").await;
    assert_eq!(code, 200, "{cluster}");
    assert_eq!(cluster["server"], server.as_str());
    assert!(
        cluster["info"]["apiVersions"]
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x == "v1")),
        "{cluster:#}"
    );
    let encoded: String = server
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (code, by_url) = stack.get(&format!("/api/v1/clusters/{encoded}")).await;
    assert_eq!(code, 200, "{by_url}");
    assert_eq!(by_url["name"], "srv-second");
    // The cluster's credentials never come back (the class of GHSA-fwr2-64vr-xv9m): neither the
    // Secret's `config` nor any of its keys, raw or base64.
    let key = std::fs::read_to_string(state.join("pki").join("admin.key")).expect("key");
    let key_line = key
        .lines()
        .find(|l| !l.starts_with("-----") && l.len() > 20)
        .expect("a key line");
    for answer in [&cluster, &by_url] {
        let text = answer.to_string();
        // Argo's `Cluster.Sanitized`: of `config`, only what is not a credential.
        assert_eq!(
            answer["config"],
            json!({"tlsClientConfig": {"insecure": false}}),
            "{answer:#}"
        );
        assert!(!text.contains("last-applied"), "{answer:#}");
        for secret in [b64("admin.key"), b64("admin.crt"), key_line.to_string()] {
            assert!(
                !text.contains(&secret),
                "a credential in the answer: {answer:#}"
            );
        }
    }
    let (code, _) = stack
        .get("/api/v1/clusters/https%3A%2F%2F127.0.0.1%3A1")
        .await;
    assert_eq!(code, 403);
}
