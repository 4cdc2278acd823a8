//! What the scmProvider and pullRequest tests share: a generator context on the real control
//! plane, a Secret holding a forge token, and ApplicationSets and generators from JSON.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::PostParams;
use plumb_appset::{Context, Limits, ScmSettings};
use plumb_model::applicationset::ApplicationSet;
use plumb_testenv::{TestEnv, TestNamespace};
use serde_json::{Value, json};

/// A context whose forge calls are bounded by `limits`.
pub async fn context(limits: Limits) -> (Context, tempfile::TempDir) {
    let env = TestEnv::shared();
    let dir = tempfile::tempdir().expect("temporary directory");
    let git = plumb_source::GitCache::new(dir.path().join("git"), plumb_source::Limits::default())
        .expect("git cache");
    let ctx = Context {
        client: env.client().await,
        control_namespace: "argocd".to_owned(),
        git: Arc::new(git),
        http: reqwest::Client::new(),
        limits,
        scm: ScmSettings::default(),
    };
    (ctx, dir)
}

/// A namespace holding Secret `forge-token` with key `token`.
pub async fn namespace_with_token(ctx: &Context, prefix: &str, token: &str) -> TestNamespace {
    let ns = TestEnv::shared().namespace(prefix);
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "forge-token"},
        "stringData": {"token": token},
    }))
    .expect("secret");
    Api::<Secret>::namespaced(ctx.client.clone(), ns.name())
        .create(&PostParams::default(), &secret)
        .await
        .expect("creating the token Secret");
    ns
}

/// An ApplicationSet in `namespace` (only its namespace and template mode matter here).
pub fn appset(namespace: &str, go_template: bool) -> ApplicationSet {
    serde_json::from_value(json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "fleet", "namespace": namespace},
        "spec": {
            "goTemplate": go_template,
            "generators": [],
            "template": {"metadata": {"name": "x"}, "spec": {}},
        },
    }))
    .expect("ApplicationSet")
}

/// A generator configuration from JSON.
pub fn spec<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("generator configuration")
}

/// Field `key` of every parameter set, as text.
pub fn column(params: &[plumb_appset::Params], key: &str) -> Vec<String> {
    params
        .iter()
        .map(|p| match &p[key] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}
