//! An Application of a Helm chart from an OCI registry, end to end: the real CNCF distribution
//! registry on 127.0.0.1 over HTTPS with htpasswd authentication (plumb-testenv's `OciRegistry`,
//! charts pushed by the real `helm push`), the credentials in an Argo CD repository Secret and the
//! CA in `argocd-tls-certs-cm`, read by the controller from the control namespace.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, PostParams};
use plumb_testenv::TestEnv;
use plumb_testenv::chart_repo::chart;
use plumb_testenv::oci_registry::{OciRegistry, Options};
use serde_json::json;

use crate::support::{Controlled, resource};

fn api(version: &str) -> std::path::PathBuf {
    chart(
        "api",
        version,
        &[(
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\ndata:\n  version: {{ .Chart.Version | quote }}\n",
        )],
    )
}

#[tokio::test]
async fn an_oci_chart_from_a_private_registry_syncs_and_an_unreachable_one_prunes_nothing() {
    let env = TestEnv::shared();
    let reg = OciRegistry::start(Options {
        auth: Some(("bot", "oci-pass-42")),
        ..Default::default()
    });
    reg.push_chart(&api("1.0.0"), "charts");
    reg.push_chart(&api("1.1.0"), "charts");
    let url = reg.url("charts");
    let ctl = Controlled::start_with(env, "ctl-oci", |c| {
        c.source.tools.worker =
            plumb_source::Worker::program(env!("CARGO_BIN_EXE_plumb-controller-render-worker"));
    })
    .await;
    let dest = env.namespace("dest-oci");
    let app_name = format!("api-oci-{}", std::process::id());
    ctl.create_app(json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": app_name},
        "spec": {"project": "default",
                 "source": {"repoURL": url, "chart": "api", "targetRevision": "1.*"},
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": dest.name()},
                 "syncPolicy": {"automated": {"prune": true}}}
    }))
    .await;

    // No credentials and no CA yet: the registry cannot be read.
    let app = ctl
        .wait_app(&app_name, "Unknown without credentials", |a| {
            a["status"]["sync"]["status"] == "Unknown"
        })
        .await;
    assert_eq!(app["status"]["conditions"][0]["type"], "ComparisonError");

    // The repository Secret and the CA, as an Argo CD installation has them.
    let secrets: Api<Secret> = Api::namespaced(ctl.client.clone(), ctl.ns.name());
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "oci-repo",
                     "labels": {"argocd.argoproj.io/secret-type": "repository"}},
        "stringData": {"type": "helm", "enableOCI": "true", "name": "registry", "url": url,
                       "username": "bot", "password": "oci-pass-42"}
    }))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("create repository secret");
    let cms: Api<ConfigMap> = Api::namespaced(ctl.client.clone(), ctl.ns.name());
    let cm: ConfigMap = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "argocd-tls-certs-cm"},
        "data": {"127.0.0.1": reg.ca_pem()}
    }))
    .expect("configmap");
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create argocd-tls-certs-cm");

    // Automated sync deploys the highest 1.x tag; the revision is the chart version.
    let app = ctl
        .wait_app(&app_name, "Synced at 1.1.0", |a| {
            a["status"]["sync"]["status"] == "Synced"
                && a["status"]["sync"]["revision"] == "1.1.0"
                && a["status"]["history"]
                    .as_array()
                    .is_some_and(|h| !h.is_empty())
        })
        .await;
    assert_eq!(app["status"]["sourceType"], "Helm");
    assert_eq!(app["status"]["history"][0]["revision"], "1.1.0");
    assert_eq!(resource(&app, "ConfigMap")["name"], "api");
    let out = env
        .kubectl()
        .args([
            "-n",
            dest.name(),
            "get",
            "configmap",
            "api",
            "-o",
            "jsonpath={.data.version}",
        ])
        .output()
        .expect("kubectl");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1.1.0");

    // The registry goes away and the Application asks for a version not yet downloaded:
    // Unknown with a clear condition, and nothing pruned although automated prune is on.
    drop(reg);
    ctl.patch_app(
        &app_name,
        json!({"spec": {"source": {"targetRevision": "1.0.*"}}}),
    )
    .await;
    let app = ctl
        .wait_app(&app_name, "Unknown with the registry down", |a| {
            a["status"]["sync"]["status"] == "Unknown"
        })
        .await;
    let cond = &app["status"]["conditions"][0];
    assert_eq!(cond["type"], "ComparisonError");
    let message = cond["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("{url}/api")) && message.contains("unreachable"),
        "{cond}"
    );
    assert!(!message.contains("oci-pass-42"), "{cond}");
    let out = env
        .kubectl()
        .args(["-n", dest.name(), "get", "configmap", "api", "-o", "name"])
        .output()
        .expect("kubectl");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "configmap/api",
        "nothing is pruned while the source cannot be read"
    );
}
