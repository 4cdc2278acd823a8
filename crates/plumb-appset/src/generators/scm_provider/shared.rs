//! What the scmProvider and pullRequest generators share: the argocd-cmd-params-cm switches,
//! tokens from Secrets, required fields and the "not supported" error.

use plumb_model::applicationset::{ApplicationSet, SecretRef};

use crate::context::Context;
use crate::error::GeneratorError;

/// `applicationsetcontroller.enable.scm.providers` and `.allowed.scm.providers`, with Argo's
/// messages (shared with the pullRequest generator).
pub(crate) fn check_allowed(ctx: &Context, api: &str) -> Result<(), GeneratorError> {
    if !ctx.scm.enabled {
        return Err(GeneratorError::Invalid(
            "scm providers are disabled".to_owned(),
        ));
    }
    let allowed = &ctx.scm.allowed_providers;
    if api.is_empty() || allowed.is_empty() || allowed.iter().any(|a| a == api) {
        return Ok(());
    }
    Err(GeneratorError::Invalid(format!(
        "scm provider not allowed: scm provider {api:?} not allowed, must use one of the following: {}",
        allowed.join(", ")
    )))
}

/// The token a `tokenRef` names, read from the ApplicationSet's namespace; none without one.
pub(crate) async fn token(
    ctx: &Context,
    set: &ApplicationSet,
    token_ref: Option<&SecretRef>,
    field: &str,
) -> Result<Option<String>, GeneratorError> {
    let Some(r) = token_ref else {
        return Ok(None);
    };
    let name = r.secret_name.as_deref().unwrap_or_default();
    let key = r.key.as_deref().unwrap_or_default();
    if name.is_empty() || key.is_empty() {
        return Err(GeneratorError::Invalid(format!(
            "{field}: secretName and key are required"
        )));
    }
    ctx.secret_value(set.namespace(), name, key).await.map(Some)
}

/// The error for a provider Plumb does not implement.
pub(crate) fn unsupported(generator: &str, provider: &str) -> GeneratorError {
    GeneratorError::Invalid(format!(
        "{generator} {provider} is not supported by Plumb yet (supported: gitea, github)"
    ))
}

/// A required text field.
pub(crate) fn required(value: Option<&str>, field: &str) -> Result<String, GeneratorError> {
    match value.map(str::trim) {
        Some(v) if !v.is_empty() => Ok(v.to_owned()),
        _ => Err(GeneratorError::Invalid(format!("{field}: required"))),
    }
}
