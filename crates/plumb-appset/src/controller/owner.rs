//! Ownership of generated Applications: the controller reference to their ApplicationSet
//! (Argo's `controllerutil.SetControllerReference` and its `.metadata.controller` index).

use serde_json::{Value, json};

use plumb_model::applicationset::{ApplicationSet, KIND};

/// The API version of ApplicationSets.
pub const API_VERSION: &str = "argoproj.io/v1alpha1";

/// The controller reference of `app` (a JSON Application), if any: `(apiVersion, kind, name)`.
pub fn controller_of(app: &Value) -> Option<(&str, &str, &str)> {
    app.pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .map(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
            (s("apiVersion"), s("kind"), s("name"))
        })
}

/// Whether `app` is controlled by the ApplicationSet `set_name` (of its own namespace).
pub fn owned_by(app: &Value, set_name: &str) -> bool {
    controller_of(app).is_some_and(|(api, kind, name)| {
        group_of(api) == "argoproj.io" && kind == KIND && name == set_name
    })
}

/// The name of the ApplicationSet controlling `app`, if one does.
pub fn owning_set(app: &Value) -> Option<&str> {
    controller_of(app)
        .filter(|(api, kind, _)| group_of(api) == "argoproj.io" && *kind == KIND)
        .map(|(_, _, name)| name)
}

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// The owner reference a generated Application gets (controller, blocking owner deletion).
pub fn reference(set: &ApplicationSet) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": set.name(),
        "uid": set.metadata.other.get("uid").cloned().unwrap_or(Value::Null),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// Sets the set's controller reference on `app`'s metadata, keeping other references.
/// Another controller (a second ApplicationSet generating the same name, or anything else)
/// is refused with Argo's `AlreadyOwnedError` message: the Application is never taken over.
pub fn set_controller(app: &mut Value, set: &ApplicationSet) -> Result<(), String> {
    if let Some((api, kind, name)) = controller_of(app)
        && !(group_of(api) == "argoproj.io" && kind == KIND && name == set.name())
    {
        let ns = app
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let app_name = app
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Err(format!(
            "Object {ns}/{app_name} is already owned by another {kind} controller {name}"
        ));
    }
    let ours = reference(set);
    let Some(meta) = app.get_mut("metadata").and_then(Value::as_object_mut) else {
        return Err("the Application has no metadata".to_string());
    };
    let refs = meta
        .entry("ownerReferences")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(list) = refs.as_array_mut() else {
        return Err("metadata.ownerReferences is not a list".to_string());
    };
    // Argo's upsertOwnerRef: the same object (group, kind, name) is replaced in place.
    match list.iter_mut().find(|r| {
        r.get("kind").and_then(Value::as_str) == Some(KIND)
            && r.get("name").and_then(Value::as_str) == Some(set.name())
            && r.get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|a| group_of(a) == "argoproj.io")
    }) {
        Some(existing) => *existing = ours,
        None => list.push(ours),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str) -> ApplicationSet {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "argocd", "uid": "u-1"},
            "spec": {"generators": [], "template": {"metadata": {}, "spec": {}}}
        }))
        .unwrap()
    }

    #[test]
    fn another_sets_application_is_refused_with_argos_message() {
        let mut app = json!({"metadata": {"name": "a", "namespace": "argocd", "ownerReferences": [
            {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "other", "uid": "u-2", "controller": true}
        ]}});
        let err = set_controller(&mut app, &set("mine")).unwrap_err();
        assert_eq!(
            err,
            "Object argocd/a is already owned by another ApplicationSet controller other"
        );
        assert!(owned_by(&app, "other"));
        assert!(!owned_by(&app, "mine"));
    }

    #[test]
    fn own_reference_is_replaced_and_others_kept() {
        let mut app = json!({"metadata": {"name": "a", "namespace": "argocd", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "c"},
            {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "mine", "uid": "old", "controller": true}
        ]}});
        set_controller(&mut app, &set("mine")).unwrap();
        let refs = app.pointer("/metadata/ownerReferences").unwrap();
        assert_eq!(refs.as_array().unwrap().len(), 2);
        assert_eq!(refs[1]["uid"], "u-1");
        assert_eq!(refs[1]["blockOwnerDeletion"], true);
        let mut bare = json!({"metadata": {"name": "b", "namespace": "argocd"}});
        set_controller(&mut bare, &set("mine")).unwrap();
        assert!(owned_by(&bare, "mine"));
    }
}
