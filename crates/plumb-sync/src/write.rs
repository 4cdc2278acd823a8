//! Writing one object the way its sync options ask: server-side apply (the default), `Replace=true`
//! (kubectl's replace), `Force=true` (delete and recreate when the change cannot be applied in
//! place; never for CRDs and Namespaces), `Validate=false`. Errors name the object and, for
//! immutable fields, the option that would fix them.

use std::time::Duration;

use plumb_kube::{Applier, Deleted, PropagationPolicy, WriteOptions};
use plumb_model::ResourceKey;
use serde_json::Value;

use crate::options::SyncOptions;

/// What a write did.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    /// kubectl's verb: created, configured, unchanged, replaced.
    pub verb: &'static str,
    /// The object as the API server stored it, from a real (not dry-run) server-side apply with
    /// validation: the live object right after the write, which the comparison that records the
    /// sync's result reads instead of asking again.
    pub stored: Option<Value>,
}

impl Written {
    fn verb(verb: &'static str) -> Self {
        Self { verb, stored: None }
    }
}

/// How often a replacement is based anew on the live object after a conflict.
const REPLACE_CONFLICTS: u32 = 3;

/// How long a forced replacement waits for the old object to go.
const DELETE_TIMEOUT: Duration = Duration::from_secs(300);

/// Writes `desired` over `live` following `options`.
pub(crate) async fn write(
    applier: &Applier,
    desired: &Value,
    live: Option<&Value>,
    options: &SyncOptions,
    dry_run: bool,
) -> Result<Written, String> {
    let key = ResourceKey::of(desired);
    // Deleting a CRD deletes every resource of its kind, deleting a Namespace everything in it:
    // whatever the options say, they are changed in place or not at all.
    let force = options.is_true("Force") && recreatable(&key);
    let opts = WriteOptions {
        validate: !options
            .get("Validate")
            .is_some_and(|v| v.eq_ignore_ascii_case("false")),
        dry_run,
    };
    let fail = |e: plumb_kube::Error| describe(&e, &key);
    if options.is_true("Replace") {
        if live.is_none() {
            return applier
                .create(desired, dry_run)
                .await
                .map(|_| Written::verb("created"))
                .map_err(fail);
        }
        if force && !dry_run {
            return recreate(applier, &key, desired).await;
        }
        // As kubectl's replace: based on the object as it is now, not as it was compared, and
        // tried again when a controller wrote it in between (its status, typically).
        let mut conflicts = 0;
        return loop {
            let Some(current) = applier.get(&key).await.map_err(fail)? else {
                break applier
                    .create(desired, dry_run)
                    .await
                    .map(|_| Written::verb("created"))
                    .map_err(fail);
            };
            match applier.replace(desired, &current, dry_run).await {
                Ok(_) => break Ok(Written::verb("replaced")),
                Err(e) if e.status_code() == Some(409) && conflicts < REPLACE_CONFLICTS => {
                    conflicts += 1;
                }
                // A dry run cannot show that deleting first would succeed; the real run will.
                Err(e) if force && is_immutable(&e) => break Ok(Written::verb("replaced")),
                Err(e) => break Err(fail(e)),
            }
        };
    }
    match applier.apply_with(desired, live, opts).await {
        Ok(stored) => {
            let verb = match live {
                None => "created",
                Some(live) if dry_run && same_object(live, &stored) => "unchanged",
                Some(live) if !dry_run && resource_version(live) == resource_version(&stored) => {
                    "unchanged"
                }
                Some(_) => "configured",
            };
            let stored = (!dry_run && opts.validate).then_some(stored);
            Ok(Written { verb, stored })
        }
        Err(e) if force && is_immutable(&e) => match live {
            Some(_) if dry_run => Ok(Written::verb("replaced")),
            _ => recreate(applier, &key, desired).await,
        },
        Err(e) => Err(fail(e)),
    }
}

/// Whether `Force=true` may delete the object to create it again: never a CRD (its resources
/// would go with it) nor a Namespace (its contents would).
fn recreatable(key: &ResourceKey) -> bool {
    !matches!(
        (key.group.as_str(), key.kind.as_str()),
        ("apiextensions.k8s.io", "CustomResourceDefinition") | ("", "Namespace")
    )
}

/// Deletes the object, waits until it is gone, and creates it again (`kubectl replace --force`).
async fn recreate(
    applier: &Applier,
    key: &ResourceKey,
    desired: &Value,
) -> Result<Written, String> {
    delete_and_wait(applier, key, PropagationPolicy::Foreground).await?;
    applier
        .create(desired, false)
        .await
        .map(|_| Written::verb("replaced"))
        .map_err(|e| error_text(&e))
}

/// Deletes an object and waits until the API server no longer has it.
pub(crate) async fn delete_and_wait(
    applier: &Applier,
    key: &ResourceKey,
    policy: PropagationPolicy,
) -> Result<(), String> {
    match applier.delete(key, policy).await {
        Ok(Deleted::Gone | Deleted::NotFound) => return Ok(()),
        Ok(Deleted::Pending(_)) => {}
        Err(e) => return Err(error_text(&e)),
    }
    let deadline = tokio::time::Instant::now() + DELETE_TIMEOUT;
    loop {
        match applier.get(key).await {
            Ok(None) => return Ok(()),
            Ok(Some(_)) if tokio::time::Instant::now() >= deadline => {
                return Err(format!(
                    "{} was still being deleted after {}s",
                    kubectl_name(key),
                    DELETE_TIMEOUT.as_secs()
                ));
            }
            Ok(Some(_)) => tokio::time::sleep(Duration::from_millis(250)).await,
            Err(e) => return Err(error_text(&e)),
        }
    }
}

fn is_immutable(e: &plumb_kube::Error) -> bool {
    e.status_code() == Some(422) && chain(e).contains("immutable")
}

fn resource_version(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
}

/// Whether a dry-run result would store nothing new (same spec, labels, annotations, data).
fn same_object(live: &Value, predicted: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for f in ["managedFields", "resourceVersion", "generation"] {
                meta.remove(f);
            }
        }
        v
    };
    strip(live) == strip(predicted)
}

/// kubectl's way of naming an object in apply messages: `deployment.apps/api`, `service/api`.
pub fn kubectl_name(key: &ResourceKey) -> String {
    let kind = key.kind.to_ascii_lowercase();
    if key.group.is_empty() {
        format!("{kind}/{}", key.name)
    } else {
        format!("{kind}.{}/{}", key.group, key.name)
    }
}

fn chain(e: &plumb_kube::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

/// The API server's message (else the full error chain on one line), with the way out when a
/// field cannot be changed in place.
pub(crate) fn error_text(e: &plumb_kube::Error) -> String {
    // The API server's message is what kubectl, and so Argo CD, shows; the request context
    // around it would repeat it (and the object is named by the result already).
    let msg = e.api_message().map_or_else(|| chain(e), str::to_string);
    if is_immutable(e) {
        format!("{msg} ({FORCE_HINT})")
    } else {
        msg
    }
}

const FORCE_HINT: &str = "the field is immutable: the sync option Force=true, with Replace=true or alone, deletes and recreates the object; set it in the object's argocd.argoproj.io/sync-options annotation";

/// [`error_text`] for a write of `key`: an object Plumb never recreates gets no advice to force.
fn describe(e: &plumb_kube::Error, key: &ResourceKey) -> String {
    if recreatable(key) || !is_immutable(e) {
        return error_text(e);
    }
    let msg = e.api_message().map_or_else(|| chain(e), str::to_string);
    let lost = if key.kind == "Namespace" {
        "everything in it"
    } else {
        "every resource of its kind"
    };
    format!(
        "{msg} (the field is immutable, and Plumb never deletes a {} to recreate it: that would delete {lost})",
        key.kind
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_names() {
        assert_eq!(
            kubectl_name(&ResourceKey::new("apps", "Deployment", "n", "api")),
            "deployment.apps/api"
        );
        assert_eq!(
            kubectl_name(&ResourceKey::new("", "Service", "n", "api")),
            "service/api"
        );
    }

    #[test]
    fn crds_and_namespaces_are_never_recreated() {
        assert!(recreatable(&ResourceKey::new(
            "batch", "Job", "n", "migrate"
        )));
        assert!(!recreatable(&ResourceKey::new(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "",
            "widgets.example.com"
        )));
        assert!(!recreatable(&ResourceKey::new("", "Namespace", "", "shop")));
    }
}
