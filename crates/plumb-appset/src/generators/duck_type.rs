//! `clusterDecisionResource`: clusters named in a custom resource's status (Argo's
//! `DuckTypeGenerator`). The ConfigMap in the control namespace says which resource
//! (`apiVersion`, `kind` used as the resource's plural name, as Argo does), which status list
//! (`statusListKey`, default `clusters`) and which field of a decision names a cluster
//! (`matchKey`).

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, ListParams};
use plumb_model::applicationset::DuckTypeGenerator;
use serde_json::Value;

use super::clusters::{IN_CLUSTER_NAME, IN_CLUSTER_SERVER, list_cluster_secrets, selector_terms};
use super::values::{Mode, go_format};
use crate::context::Context;
use crate::error::GeneratorError;
use crate::params::Params;

/// One parameter set per decision naming a known cluster.
pub async fn generate(
    spec: &DuckTypeGenerator,
    mode: Mode<'_>,
    ctx: &Context,
) -> Result<Vec<Params>, GeneratorError> {
    let clusters = known_clusters(ctx).await?;
    let cm_name = spec.config_map_ref.as_deref().unwrap_or_default();
    let cm = Api::<ConfigMap>::namespaced(ctx.client.clone(), &ctx.control_namespace)
        .get(cm_name)
        .await
        .map_err(|e| GeneratorError::Reference {
            what: format!(
                "configMapRef {cm_name:?} in namespace {:?}",
                ctx.control_namespace
            ),
            message: format!("error reading configMapRef: {e}"),
        })?;
    let data = cm.data.unwrap_or_default();
    let get = |k: &str| data.get(k).cloned().unwrap_or_default();
    let (api_version, kind) = (get("apiVersion"), get("kind"));
    let slash = api_version.find('/').filter(|i| *i >= 1);
    let (Some(slash), false) = (slash, kind.is_empty()) else {
        return Err(GeneratorError::Invalid(
            "there is a problem with the apiVersion, kind or resourceName provided".to_owned(),
        ));
    };
    let list = list_resources(spec, ctx, &api_version, slash, &kind).await?;
    if list.is_empty() {
        return Err(GeneratorError::Source(
            "no clusterDecisionResources found".to_owned(),
        ));
    }
    let status_key = Some(get("statusListKey"))
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "clusters".to_owned());
    let match_key = get("matchKey");
    if match_key.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for decision in decisions(&list, &status_key)? {
        let Some(wanted) = decision
            .get(&match_key)
            .filter(|v| !v.is_null())
            .map(go_format)
        else {
            continue;
        };
        let Some((name, server)) = clusters
            .iter()
            .find(|(n, _)| !wanted.is_empty() && *n == wanted)
        else {
            continue;
        };
        let mut params = Params::new();
        params.insert("name".into(), name.clone().into());
        params.insert("server".into(), server.clone().into());
        for (k, v) in decision {
            params.insert(k.clone(), Value::String(go_format(v)));
        }
        add_values(spec, &mut params, mode.go_template);
        out.push(params);
        if out.len() > ctx.limits.max_params {
            return Err(GeneratorError::Limit(format!(
                "clusterDecisionResource generator: more than {} decisions",
                ctx.limits.max_params
            )));
        }
    }
    Ok(out)
}

/// Argo's `ListClusters`: every cluster Secret, and `in-cluster` unless one names its server.
async fn known_clusters(ctx: &Context) -> Result<Vec<(String, String)>, GeneratorError> {
    let secrets = list_cluster_secrets(ctx, None).await?;
    let mut out: Vec<(String, String)> = secrets
        .into_iter()
        .map(|(name, s)| {
            let server = s
                .data
                .as_ref()
                .and_then(|d| d.get("server"))
                .map(|b| String::from_utf8_lossy(&b.0).into_owned())
                .unwrap_or_default();
            (name, server)
        })
        .collect();
    if !out.iter().any(|(_, s)| s == IN_CLUSTER_SERVER) {
        out.push((IN_CLUSTER_NAME.to_owned(), IN_CLUSTER_SERVER.to_owned()));
    }
    Ok(out)
}

async fn list_resources(
    spec: &DuckTypeGenerator,
    ctx: &Context,
    api_version: &str,
    slash: usize,
    kind: &str,
) -> Result<Vec<DynamicObject>, GeneratorError> {
    let name = spec.name.as_deref().unwrap_or_default();
    let selector = spec
        .label_selector
        .as_ref()
        .filter(|s| s.match_labels.is_some() || s.match_expressions.is_some());
    let params = match (name.is_empty(), selector) {
        (true, Some(sel)) => ListParams::default().labels(&selector_terms(sel)?.join(",")),
        (false, None) => ListParams::default().fields(&format!("metadata.name={name}")),
        _ => {
            return Err(GeneratorError::Invalid(
                "there is a problem with the definition of the ClusterDecisionResource generator"
                    .to_owned(),
            ));
        }
    };
    let resource = ApiResource {
        group: api_version[..slash].to_owned(),
        version: api_version[slash + 1..].to_owned(),
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        plural: kind.to_owned(),
    };
    let list = Api::<DynamicObject>::namespaced_with(
        ctx.client.clone(),
        &ctx.control_namespace,
        &resource,
    )
    .list(&params)
    .await
    .map_err(|e| GeneratorError::Source(format!("failed to get dynamic resources: {e}")))?;
    Ok(list.items)
}

/// The decisions of every resource with a non-empty status, in list order.
fn decisions<'a>(list: &'a [DynamicObject], key: &str) -> Result<Vec<&'a Params>, GeneratorError> {
    let mut out = Vec::new();
    for obj in list {
        let Some(Value::Object(status)) = obj.data.get("status") else {
            continue;
        };
        if status.is_empty() {
            continue;
        }
        let name = obj.metadata.name.as_deref().unwrap_or_default();
        let Some(Value::Array(items)) = status.get(key) else {
            return Err(GeneratorError::Invalid(format!(
                "clusterDecisionResource {name:?}: status.{key} is not a list"
            )));
        };
        for item in items {
            let Value::Object(decision) = item else {
                return Err(GeneratorError::Invalid(format!(
                    "clusterDecisionResource {name:?}: an item of status.{key} is not an object"
                )));
            };
            out.push(decision);
        }
    }
    Ok(out)
}

fn add_values(spec: &DuckTypeGenerator, params: &mut Params, go: bool) {
    let Some(values) = spec.values.as_ref().filter(|v| !v.is_empty()) else {
        return;
    };
    if go {
        let map = values
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        params.insert("values".into(), Value::Object(map));
    } else {
        for (k, v) in values {
            params.insert(format!("values.{k}"), Value::String(v.clone()));
        }
    }
}
