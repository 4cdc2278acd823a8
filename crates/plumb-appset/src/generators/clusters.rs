//! `clusters`: one parameter set per cluster Secret (Argo's `ClusterGenerator`), plus the
//! implicit `in-cluster` entry when no Secret names `https://kubernetes.default.svc` and the
//! generator has no selector.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::api::ListParams;
use plumb_model::applicationset::{ClusterGenerator, LabelSelector};
use serde_json::Value;

use super::values::{Mode, append_values, sanitize_name};
use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;

/// The label marking a Secret as a cluster.
pub const SECRET_TYPE_CLUSTER: &str = "argocd.argoproj.io/secret-type=cluster";
/// The implicit local cluster's name.
pub const IN_CLUSTER_NAME: &str = "in-cluster";
/// The implicit local cluster's server.
pub const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";

/// Annotations Argo leaves out of `metadata.annotations.*` (its own bookkeeping).
const EXCLUDED_ANNOTATIONS: &[&str] = &[
    "argocd.argoproj.io/application-set-refresh",
    "argocd.argoproj.io/refresh",
    "argocd.argoproj.io/hydrate",
    "argocd.argoproj.io/hydrate-timestamp",
    "argocd.argoproj.io/tracking-id",
    "argocd.argoproj.io/installation-id",
    "kubectl.kubernetes.io/last-applied-configuration",
];

/// The parameter sets of `spec`, ordered by cluster name (Argo's order is a Go map's: random),
/// the implicit `in-cluster` last as Argo appends it.
pub async fn generate(
    spec: &ClusterGenerator,
    mode: Mode<'_>,
    ctx: &Context,
) -> Result<Vec<Params>, GeneratorError> {
    let selector = spec.selector.as_ref();
    let ignore_local = selector.is_some_and(|s| {
        s.match_labels.as_ref().is_some_and(|m| !m.is_empty())
            || s.match_expressions.as_ref().is_some_and(|m| !m.is_empty())
    });
    let secrets = list_cluster_secrets(ctx, selector).await?;
    let has_local = secrets
        .values()
        .any(|s| data(s, "server") == IN_CLUSTER_SERVER);
    let mut out = Vec::with_capacity(secrets.len() + 1);
    for secret in secrets.values() {
        let mut params = cluster_params(secret, mode.go_template);
        append_values(spec.values.as_ref(), &mut params, mode)?;
        out.push(params);
    }
    if !ignore_local && !has_local {
        let mut params = Params::new();
        params.insert("name".into(), IN_CLUSTER_NAME.into());
        params.insert("nameNormalized".into(), IN_CLUSTER_NAME.into());
        params.insert("server".into(), IN_CLUSTER_SERVER.into());
        params.insert("project".into(), "".into());
        append_values(spec.values.as_ref(), &mut params, mode)?;
        out.push(params);
    }
    if out.len() > ctx.limits.max_params {
        return Err(GeneratorError::Limit(format!(
            "clusters generator: {} clusters, more than the limit of {}",
            out.len(),
            ctx.limits.max_params
        )));
    }
    if spec.flat_list.unwrap_or(false) {
        let all = out.into_iter().map(Value::Object).collect();
        return Ok(vec![
            [("clusters".to_owned(), Value::Array(all))]
                .into_iter()
                .collect(),
        ]);
    }
    Ok(out)
}

/// The cluster Secrets of the control namespace matching `selector`, by cluster name (the last
/// of two Secrets naming the same cluster wins, as in Argo).
pub async fn list_cluster_secrets(
    ctx: &Context,
    selector: Option<&LabelSelector>,
) -> Result<BTreeMap<String, Secret>, GeneratorError> {
    let mut labels = vec![SECRET_TYPE_CLUSTER.to_owned()];
    if let Some(sel) = selector {
        labels.extend(selector_terms(sel)?);
    }
    let list = Api::<Secret>::namespaced(ctx.client.clone(), &ctx.control_namespace)
        .list(&ListParams::default().labels(&labels.join(",")))
        .await
        .map_err(|e| GeneratorError::Source(format!("error getting cluster secrets: {e}")))?;
    Ok(list
        .items
        .into_iter()
        .map(|s| (data(&s, "name"), s))
        .collect())
}

/// `selector` as Kubernetes label-selector text terms.
pub fn selector_terms(sel: &LabelSelector) -> Result<Vec<String>, GeneratorError> {
    let mut terms: Vec<String> = sel
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for req in sel.match_expressions.iter().flatten() {
        let key = req.key.as_deref().unwrap_or_default();
        let values = req.values.as_deref().unwrap_or_default().join(",");
        terms.push(match req.operator.as_deref().unwrap_or_default() {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.to_owned(),
            "DoesNotExist" => format!("!{key}"),
            other => {
                return Err(GeneratorError::Invalid(format!(
                    "error converting label selector: {other:?} is not a valid label selector operator"
                )));
            }
        });
    }
    Ok(terms)
}

fn data(secret: &Secret, key: &str) -> String {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .unwrap_or_default()
}

/// Argo's `getClusterParameters` (never the Secret's credentials).
fn cluster_params(secret: &Secret, go_template: bool) -> Params {
    let mut params = Params::new();
    let name = data(secret, "name");
    params.insert("nameNormalized".into(), sanitize_name(&name).into());
    params.insert("name".into(), name.into());
    params.insert("server".into(), data(secret, "server").into());
    params.insert("project".into(), data(secret, "project").into());
    let annotations: BTreeMap<&String, &String> = secret
        .metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| !EXCLUDED_ANNOTATIONS.contains(&k.as_str()))
        .collect();
    let labels = secret.metadata.labels.clone().unwrap_or_default();
    if go_template {
        let mut meta = Params::new();
        if secret
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| !a.is_empty())
        {
            let map = annotations
                .iter()
                .map(|(k, v)| ((*k).clone(), Value::String((*v).clone())))
                .collect();
            meta.insert("annotations".into(), Value::Object(map));
        }
        if !labels.is_empty() {
            let map = labels
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            meta.insert("labels".into(), Value::Object(map));
        }
        params.insert("metadata".into(), Value::Object(meta));
    } else {
        for (k, v) in annotations {
            params.insert(format!("metadata.annotations.{k}"), v.clone().into());
        }
        for (k, v) in labels {
            params.insert(format!("metadata.labels.{k}"), v.into());
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;
    use kube::api::ObjectMeta;

    use super::*;

    fn secret(name: &str, server: &str) -> Secret {
        Secret {
            metadata: ObjectMeta {
                labels: Some(
                    [
                        (
                            "argocd.argoproj.io/secret-type".to_owned(),
                            "cluster".to_owned(),
                        ),
                        ("env".to_owned(), "prod".to_owned()),
                    ]
                    .into(),
                ),
                annotations: Some(
                    [
                        ("team".to_owned(), "a".to_owned()),
                        (
                            "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
                            "{}".to_owned(),
                        ),
                    ]
                    .into(),
                ),
                ..Default::default()
            },
            data: Some(
                [
                    ("name".to_owned(), ByteString(name.as_bytes().to_vec())),
                    ("server".to_owned(), ByteString(server.as_bytes().to_vec())),
                    (
                        "config".to_owned(),
                        ByteString(b"{\"bearerToken\":\"s3cr3t\"}".to_vec()),
                    ),
                ]
                .into(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn flat_params_as_argo() {
        let p = cluster_params(&secret("Prod_EU", "https://10.0.0.1"), false);
        assert_eq!(p["name"], "Prod_EU");
        assert_eq!(p["nameNormalized"], "prod-eu");
        assert_eq!(p["server"], "https://10.0.0.1");
        assert_eq!(p["project"], "");
        assert_eq!(p["metadata.labels.env"], "prod");
        assert_eq!(p["metadata.annotations.team"], "a");
        assert!(
            !p.contains_key(
                "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"
            )
        );
        assert!(!serde_json::to_string(&p).unwrap().contains("s3cr3t"));
    }

    #[test]
    fn nested_params_in_go_mode() {
        let p = cluster_params(&secret("a", "https://x"), true);
        assert_eq!(p["metadata"]["labels"]["env"], "prod");
        assert_eq!(p["metadata"]["annotations"]["team"], "a");
    }

    #[test]
    fn selector_text() {
        let sel: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"env": "prod"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a", "b"]},
                                  {"key": "gone", "operator": "DoesNotExist"}]
        }))
        .unwrap();
        assert_eq!(
            selector_terms(&sel).unwrap(),
            ["env=prod", "tier notin (a,b)", "!gone"]
        );
    }
}
