//! What the generator tests share: a Context on the shared control plane and a Git cache.

use std::sync::Arc;

use plumb_appset::{Context, Limits, ParamSet, generate_params};
use plumb_model::applicationset::ApplicationSet;
use plumb_testenv::TestEnv;
use serde_json::Value;

/// A generator context reading `namespace` as the control namespace.
pub async fn context(namespace: &str, cache: &tempfile::TempDir, limits: Limits) -> Context {
    Context {
        client: TestEnv::shared().client().await,
        control_namespace: namespace.to_owned(),
        git: Arc::new(
            plumb_source::GitCache::new(cache.path(), plumb_source::Limits::default())
                .expect("a git cache"),
        ),
        http: reqwest::Client::new(),
        limits,
    }
}

/// An ApplicationSet with `generators` (JSON) in `namespace`.
pub fn appset(namespace: &str, go_template: bool, generators: Value) -> ApplicationSet {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "agen-test", "namespace": namespace},
        "spec": {
            "goTemplate": go_template,
            "generators": generators,
            "template": {"metadata": {"name": "{{name}}"}, "spec": {"project": "default"}}
        }
    }))
    .expect("the test ApplicationSet parses")
}

/// The parameter sets of the set's first generator.
pub async fn params(set: &ApplicationSet, ctx: &Context) -> Result<Vec<Value>, String> {
    generate_params(&set.spec.generators[0], set, ctx)
        .await
        .map(|sets| {
            sets.into_iter()
                .map(|ParamSet { params, .. }| Value::Object(params))
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// Applies `yaml` with kubectl.
pub fn apply(yaml: &str) {
    let mut child = TestEnv::shared()
        .kubectl()
        .args(["apply", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("kubectl runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("kubectl's stdin")
        .write_all(yaml.as_bytes())
        .expect("writing to kubectl");
    assert!(
        child.wait().expect("kubectl finishes").success(),
        "kubectl apply failed:\n{yaml}"
    );
}
