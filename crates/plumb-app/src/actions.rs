//! Writing what a resource action returned, as Argo CD's API server does (`RunResourceActionV2`):
//! every object is checked against the project first (and creates are dry-run), then patched (a
//! merge patch of the difference; `status` through the status subresource when the kind has one)
//! or created. Shared by `plumb app actions run` (core mode) and `plumb server`'s action route,
//! so both write the same way. Stricter than Argo: a create must stay in the namespace of the
//! object the action ran on (the engine already refuses patches of any other object).

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use plumb_health::actions::{ImpactedResource, Operation, merge_patch};
use plumb_kube::{ApiDiscovery, ApiKind};
use plumb_model::application::AppProject;
use plumb_model::{GroupKind, ResourceKey};
use plumb_policy::project::Destination;
use serde_json::Value;

/// Why an action's result was not written.
#[derive(Debug, thiserror::Error)]
pub enum ActionWriteError {
    /// The result breaks a rule (project, namespace, a nameless create).
    #[error("{0}")]
    Refused(String),
    /// The kind is not served by the destination.
    #[error("looking up kind {kind}: {source}")]
    Discovery {
        /// The group/kind.
        kind: String,
        /// What discovery said.
        #[source]
        source: plumb_kube::Error,
    },
    /// The object is not a Kubernetes object.
    #[error("the action's {key} is not a Kubernetes object: {source}")]
    Encoding {
        /// The object.
        key: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// The API server refused a write.
    #[error("{context}: {source}")]
    Kube {
        /// What was being written.
        context: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
}

/// The dynamic API of `key`'s kind at `version` (discovery's preferred one when `None`),
/// reached through `client` (the cluster's own, or one impersonating the project's
/// ServiceAccount: [`crate::impersonation::api_client`]).
pub async fn api_for(
    discovery: &ApiDiscovery,
    client: &kube::Client,
    key: &ResourceKey,
    version: Option<&str>,
) -> Result<(ApiKind, Api<DynamicObject>), ActionWriteError> {
    let kind = discovery
        .resolve(
            &GroupKind::new(key.group.clone(), key.kind.clone()),
            version.filter(|v| !v.is_empty()),
        )
        .await
        .map_err(|source| ActionWriteError::Discovery {
            kind: key.group_kind().to_string(),
            source,
        })?;
    let client = client.clone();
    let api = if kind.namespaced {
        Api::namespaced_with(client, &key.namespace, &kind.resource)
    } else {
        Api::all_with(client, &kind.resource)
    };
    Ok((kind, api))
}

fn version_of(obj: &Value) -> Option<&str> {
    obj.get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.rsplit('/').next())
}

/// Checks every object of `impacted` (what the action returned for `source`, the live object
/// `source_key`), then writes them through `client` (kinds are resolved with `discovery`).
pub async fn write_action_result(
    discovery: &ApiDiscovery,
    client: &kube::Client,
    project: &AppProject,
    target: &Destination<'_>,
    source_key: &ResourceKey,
    source: &Value,
    impacted: &[ImpactedResource],
) -> Result<(), ActionWriteError> {
    for item in impacted {
        check(discovery, client, project, target, source_key, item).await?;
    }
    for item in impacted {
        write(discovery, client, source, item).await?;
    }
    Ok(())
}

/// Refuses an object the project does not permit, or a create that is nameless or outside the
/// namespace of the object the action ran on; dry-runs a create.
async fn check(
    discovery: &ApiDiscovery,
    client: &kube::Client,
    project: &AppProject,
    target: &Destination<'_>,
    source_key: &ResourceKey,
    item: &ImpactedResource,
) -> Result<(), ActionWriteError> {
    let key = ResourceKey::of(&item.resource);
    if item.operation == Operation::Create
        && let Some(refusal) = create_refusal(&key, source_key)
    {
        return Err(ActionWriteError::Refused(refusal));
    }
    let (kind, api) = api_for(discovery, client, &key, version_of(&item.resource)).await?;
    plumb_policy::project::check_resource(
        project,
        &key.group,
        &key.kind,
        &key.name,
        kind.namespaced,
        &key.namespace,
        target,
    )
    .map_err(|v| ActionWriteError::Refused(v.to_string()))?;
    if item.operation == Operation::Create {
        let obj = decode(item).map_err(not_an_object(&key))?;
        let dry = PostParams {
            dry_run: true,
            ..Default::default()
        };
        api.create(&dry, &obj)
            .await
            .map_err(|source| ActionWriteError::Kube {
                context: format!("creating {key} (dry run)"),
                source,
            })?;
    }
    Ok(())
}

/// Why a create is refused: it must name its object and stay in the namespace of the object
/// the action ran on.
fn create_refusal(key: &ResourceKey, source_key: &ResourceKey) -> Option<String> {
    if key.name.is_empty() {
        return Some(format!(
            "the action creates a {} without metadata.name",
            key.group_kind()
        ));
    }
    if key.namespace != source_key.namespace {
        return Some(format!(
            "the action creates {key} outside the namespace '{}' of the object it ran on; refused",
            source_key.namespace
        ));
    }
    None
}

/// The object to create, as the API takes it.
fn decode(item: &ImpactedResource) -> serde_json::Result<DynamicObject> {
    serde_json::from_value(item.resource.clone())
}

/// An object the action returned that does not decode.
fn not_an_object(key: &ResourceKey) -> impl FnOnce(serde_json::Error) -> ActionWriteError + '_ {
    |source| ActionWriteError::Encoding {
        key: key.to_string(),
        source,
    }
}

/// Creates or patches one object the action returned.
async fn write(
    discovery: &ApiDiscovery,
    client: &kube::Client,
    source: &Value,
    item: &ImpactedResource,
) -> Result<(), ActionWriteError> {
    let key = ResourceKey::of(&item.resource);
    let (kind, api) = api_for(discovery, client, &key, version_of(&item.resource)).await?;
    match item.operation {
        Operation::Create => {
            let obj = decode(item).map_err(not_an_object(&key))?;
            api.create(&PostParams::default(), &obj)
                .await
                .map_err(|source| ActionWriteError::Kube {
                    context: format!("creating {key}"),
                    source,
                })?;
        }
        Operation::Patch => {
            let Some(patch) = merge_patch(source, &item.resource) else {
                return Ok(());
            };
            patch_object(&kind, &api, &key, patch).await?;
        }
    }
    Ok(())
}

/// Applies a merge patch; its `status` goes through the status subresource when the kind has
/// one.
async fn patch_object(
    kind: &ApiKind,
    api: &Api<DynamicObject>,
    key: &ResourceKey,
    mut patch: Value,
) -> Result<(), ActionWriteError> {
    let status = patch.as_object_mut().and_then(|m| m.remove("status"));
    if let Some(status) = status {
        if kind.status_subresource {
            api.patch_status(
                &key.name,
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"status": status})),
            )
            .await
            .map_err(|source| ActionWriteError::Kube {
                context: format!("patching the status of {key}"),
                source,
            })?;
        } else {
            patch["status"] = status;
        }
    }
    if patch.as_object().is_some_and(|m| !m.is_empty()) {
        api.patch(&key.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| ActionWriteError::Kube {
                context: format!("patching {key}"),
                source,
            })?;
    }
    Ok(())
}
