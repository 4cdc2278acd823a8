//! Reading Argo CD's objects as both backends receive them: the `argoproj.io` API resources,
//! the Application from what the API returned, the argocd-cm keys the CLI reads, and the API
//! errors the core backend tells apart.

use anyhow::{Context, Result};
use kube::api::DynamicObject;
use kube::discovery::ApiResource;
use plumb_model::application::Application;
use serde_json::Value;

/// The name of the settings ConfigMap in the control namespace.
pub const SETTINGS_CONFIGMAP: &str = "argocd-cm";

/// The argocd-cm key with the UI's base URL (`url`); Plumb has no UI, so the `URL:` header line
/// only appears when an operator set it (for links to an Argo CD UI reading the same objects).
pub const URL_KEY: &str = "url";

/// The API resource of an `argoproj.io/v1alpha1` kind (`Application`/`applications`,
/// `AppProject`/`appprojects`).
pub(crate) fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: plumb_model::application::GROUP.to_string(),
        version: plumb_model::application::VERSION.to_string(),
        api_version: plumb_model::application::API_VERSION.to_string(),
        kind: kind.to_string(),
        plural: plural.to_string(),
    }
}

/// Converts what the API server returned into the typed Application.
pub fn to_application(obj: DynamicObject) -> Result<Application> {
    let name = obj.metadata.name.clone().unwrap_or_default();
    let namespace = obj.metadata.namespace.clone().unwrap_or_default();
    let value = serde_json::to_value(obj).context("encoding the Application")?;
    serde_json::from_value(value).with_context(|| format!("reading Application {namespace}/{name}"))
}

/// The Application of a `plumb server` answer.
pub(crate) fn application(v: Value) -> Result<Application> {
    let name = v
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    serde_json::from_value(v).with_context(|| format!("reading Application {name}"))
}

pub(crate) fn is_not_found(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 404)
}

pub(crate) fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}
