//! The clusters generator on real cluster Secrets.

use plumb_appset::Limits;
use plumb_testenv::TestEnv;
use serde_json::{Value, json};

use crate::agen_support::{apply, appset, context, params};

fn cluster_secret(ns: &str, secret: &str, name: &str, server: &str, env: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {secret}\n  namespace: {ns}\n  labels:\n    argocd.argoproj.io/secret-type: cluster\n    env: {env}\n  annotations:\n    team: platform\nstringData:\n  name: {name}\n  server: {server}\n  config: '{{\"bearerToken\":\"agen-s3cr3t\"}}'\n"
    )
}

#[tokio::test]
async fn clusters_from_secrets_with_the_implicit_local_cluster() {
    let ns = TestEnv::shared().namespace("agen-clusters");
    let ns = ns.name();
    apply(&cluster_secret(
        ns,
        "b-secret",
        "staging",
        "https://10.0.0.2",
        "staging",
    ));
    apply(&cluster_secret(
        ns,
        "a-secret",
        "Prod_EU",
        "https://10.0.0.1",
        "prod",
    ));
    let cache = tempfile::tempdir().unwrap();
    let ctx = context(ns, &cache, Limits::default()).await;

    let set = appset(
        ns,
        false,
        json!([{"clusters": {"values": {"app": "{{name}}-guestbook"}}}]),
    );
    let out = params(&set, &ctx).await.unwrap();
    let names: Vec<&Value> = out.iter().map(|p| &p["name"]).collect();
    assert_eq!(
        names,
        [&json!("Prod_EU"), &json!("staging"), &json!("in-cluster")]
    );
    assert_eq!(out[0]["nameNormalized"], "prod-eu");
    assert_eq!(out[0]["server"], "https://10.0.0.1");
    assert_eq!(out[0]["metadata.labels.env"], "prod");
    assert_eq!(out[0]["metadata.annotations.team"], "platform");
    assert_eq!(out[0]["values.app"], "Prod_EU-guestbook");
    assert_eq!(out[2]["server"], "https://kubernetes.default.svc");
    assert_eq!(out[2]["values.app"], "in-cluster-guestbook");
    assert!(
        !serde_json::to_string(&out).unwrap().contains("agen-s3cr3t"),
        "credentials leaked into params"
    );

    // A selector leaves the implicit local cluster out, as in Argo.
    let set = appset(
        ns,
        true,
        json!([{"clusters": {"selector": {"matchLabels": {"env": "prod"}}}}]),
    );
    let out = params(&set, &ctx).await.unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["metadata"]["labels"]["env"], "prod");

    // A Secret for the local server replaces the implicit entry.
    apply(&cluster_secret(
        ns,
        "c-secret",
        "local",
        "https://kubernetes.default.svc",
        "dev",
    ));
    let set = appset(ns, false, json!([{"clusters": {"flatList": true}}]));
    let out = params(&set, &ctx).await.unwrap();
    assert_eq!(out.len(), 1);
    let all: Vec<&Value> = out[0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(all, [&json!("Prod_EU"), &json!("local"), &json!("staging")]);
}

#[tokio::test]
async fn generator_selector_filters_cluster_params() {
    let ns = TestEnv::shared().namespace("agen-clusel");
    let ns = ns.name();
    apply(&cluster_secret(
        ns,
        "secret-one",
        "one",
        "https://10.0.1.1",
        "prod",
    ));
    apply(&cluster_secret(
        ns,
        "secret-two",
        "two",
        "https://10.0.1.2",
        "dev",
    ));
    let cache = tempfile::tempdir().unwrap();
    let ctx = context(ns, &cache, Limits::default()).await;
    let set = appset(
        ns,
        false,
        json!([{"clusters": {}, "selector": {"matchExpressions": [{"key": "metadata.labels.env", "operator": "In", "values": ["dev"]}]}}]),
    );
    let out = params(&set, &ctx).await.unwrap();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["name"], "two");
}
