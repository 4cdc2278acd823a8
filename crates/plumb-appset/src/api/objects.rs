//! ApplicationSets and the Applications they own, as objects of the Kubernetes API.

use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use plumb_model::application::{API_VERSION, GROUP, VERSION};
use plumb_model::applicationset::{ApplicationSet, KIND};
use serde_json::Value;

use super::ApiError;

/// `argoproj.io/v1alpha1` ApplicationSets.
pub fn applicationset_resource() -> ApiResource {
    resource(KIND, "applicationsets")
}

/// `argoproj.io/v1alpha1` Applications.
pub fn application_resource() -> ApiResource {
    resource("Application", "applications")
}

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: GROUP.into(),
        version: VERSION.into(),
        api_version: API_VERSION.into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The typed ApplicationSet of an API object (with its type, which list items may lack).
pub fn to_set(obj: &DynamicObject) -> Result<ApplicationSet, ApiError> {
    let mut value = serde_json::to_value(obj).map_err(|e| {
        ApiError::Invalid(format!(
            "encoding ApplicationSet {:?}: {e}",
            obj.metadata.name
        ))
    })?;
    if let Some(map) = value.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| API_VERSION.into());
        map.entry("kind").or_insert_with(|| KIND.into());
    }
    serde_json::from_value(value).map_err(|e| {
        ApiError::Invalid(format!(
            "reading ApplicationSet {}/{}: {e}",
            obj.metadata.namespace.as_deref().unwrap_or_default(),
            obj.metadata.name.as_deref().unwrap_or_default()
        ))
    })
}

/// The project of the Applications `set` generates (Argo's `Spec.Template.Spec.GetProject()`:
/// empty is `default`).
pub fn project(set: &ApplicationSet) -> &str {
    set.spec
        .template
        .spec
        .get("project")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .unwrap_or("default")
}

/// The RBAC object of `set` (Argo's `ApplicationSet.RBACName`): `<project>/<name>` in the
/// control namespace, `<project>/<namespace>/<name>` elsewhere.
pub fn rbac_object(set: &ApplicationSet, control_namespace: &str) -> String {
    let ns = set.namespace();
    if !ns.is_empty() && ns != control_namespace {
        format!("{}/{ns}/{}", project(set), set.name())
    } else {
        format!("{}/{}", project(set), set.name())
    }
}

/// Whether `app` (an Application as JSON) has an ownerReference to `set`: by kind and name, and
/// by uid when both know one (a set deleted and created again owns nothing of the old one).
fn owned_by(app: &Value, set: &ApplicationSet) -> bool {
    let uid = set.metadata.other.get("uid").and_then(Value::as_str);
    app.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|r| {
                r.get("kind").and_then(Value::as_str) == Some(KIND)
                    && r.get("name").and_then(Value::as_str) == Some(set.name())
                    && match (uid, r.get("uid").and_then(Value::as_str)) {
                        (Some(a), Some(b)) => a == b,
                        _ => true,
                    }
            })
        })
}

/// The Applications of `set`'s namespace that `set` owns, sorted by name.
pub async fn owned_applications(
    client: &kube::Client,
    set: &ApplicationSet,
) -> Result<Vec<Value>, ApiError> {
    let ns = set.namespace();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &application_resource());
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|e| ApiError::kube(format!("listing Applications in namespace {ns}"), e))?;
    let mut owned = Vec::new();
    for obj in &list.items {
        let mut value = serde_json::to_value(obj)
            .map_err(|e| ApiError::Invalid(format!("encoding an Application: {e}")))?;
        if !owned_by(&value, set) {
            continue;
        }
        if let Some(map) = value.as_object_mut() {
            map.entry("apiVersion")
                .or_insert_with(|| API_VERSION.into());
            map.entry("kind").or_insert_with(|| "Application".into());
        }
        owned.push(value);
    }
    owned.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    Ok(owned)
}

pub(super) fn name_of(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(ns: &str, project: &str) -> ApplicationSet {
        serde_json::from_value(json!({
            "metadata": {"name": "fleet", "namespace": ns, "uid": "u1"},
            "spec": {"generators": [], "template": {"metadata": {}, "spec": {"project": project}}}
        }))
        .unwrap()
    }

    #[test]
    fn rbac_objects_as_argo_names_them() {
        assert_eq!(rbac_object(&set("argocd", "team"), "argocd"), "team/fleet");
        assert_eq!(rbac_object(&set("argocd", ""), "argocd"), "default/fleet");
        assert_eq!(
            rbac_object(&set("apps", "team"), "argocd"),
            "team/apps/fleet"
        );
    }

    #[test]
    fn ownership_by_kind_name_and_uid() {
        let s = set("argocd", "team");
        let app = |kind: &str, name: &str, uid: &str| json!({"metadata": {"ownerReferences": [{"kind": kind, "name": name, "uid": uid}]}});
        assert!(owned_by(&app("ApplicationSet", "fleet", "u1"), &s));
        assert!(!owned_by(&app("ApplicationSet", "fleet", "u2"), &s));
        assert!(!owned_by(&app("ApplicationSet", "other", "u1"), &s));
        assert!(!owned_by(&app("Deployment", "fleet", "u1"), &s));
        assert!(!owned_by(&json!({"metadata": {}}), &s));
    }
}
