//! The brake's side users touch: which deletions it holds, and confirming them with the
//! `plumb.dev/confirm-deletion` annotation (the controller acts on it and removes it).

use std::collections::BTreeSet;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use plumb_model::applicationset::{ApplicationSet, ApplicationSetCondition, condition};
use serde_json::{Value, json};

use super::objects::name_of;
use super::{ApiError, to_set};

/// The annotation on an ApplicationSet letting held deletions go: comma-separated Application
/// names, or `all`.
pub const CONFIRM_DELETION: &str = "plumb.dev/confirm-deletion";

/// What a confirmation lets go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    /// Every held deletion.
    All,
    /// These Applications (names).
    Apps(Vec<String>),
}

impl Confirm {
    /// The annotation's value once this confirmation is added to `existing` (a confirmation
    /// the controller has not acted on yet is kept: confirmations add up).
    pub fn merged_value(&self, existing: Option<&str>) -> String {
        let existing = existing.unwrap_or_default().trim();
        match self {
            Self::All => "all".into(),
            _ if existing == "all" => "all".into(),
            Self::Apps(apps) => existing
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .chain(apps.iter().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// The brake's `DeletionHeld` condition when it holds deletions back.
pub fn deletion_held(set: &ApplicationSet) -> Option<&ApplicationSetCondition> {
    set.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.r#type == condition::DELETION_HELD && c.status == condition::TRUE)
}

/// The Applications whose deletion the brake holds: while `DeletionHeld` is true, those `set`
/// owns (`owned`, from [`super::owned_applications`]) that its status no longer lists among
/// the generated ones. Sorted.
pub fn pending_deletions(set: &ApplicationSet, owned: &[Value]) -> Vec<String> {
    if deletion_held(set).is_none() {
        return Vec::new();
    }
    let generated: BTreeSet<&str> = set
        .status
        .as_ref()
        .and_then(|s| s.resources.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("name").and_then(Value::as_str))
        .collect();
    let mut pending: Vec<String> = owned
        .iter()
        .map(name_of)
        .filter(|n| !n.is_empty() && !generated.contains(n))
        .map(str::to_string)
        .collect();
    pending.sort();
    pending.dedup();
    pending
}

/// Writes the confirmation on the ApplicationSet `name` and returns it as written. Names are
/// checked as Kubernetes names, so the annotation cannot be used to smuggle separators.
pub async fn confirm_deletion(
    api: &Api<DynamicObject>,
    name: &str,
    confirm: &Confirm,
) -> Result<ApplicationSet, ApiError> {
    if let Confirm::Apps(apps) = confirm {
        if apps.is_empty() {
            return Err(ApiError::Invalid(
                "name the Applications whose deletion to confirm, or all".into(),
            ));
        }
        if let Some(bad) = apps.iter().find(|a| !is_dns_subdomain(a)) {
            return Err(ApiError::Invalid(format!(
                "{bad:?} is not an Application name"
            )));
        }
    }
    let current = super::get(api, name).await?.ok_or_else(|| {
        ApiError::NotFound(format!("applicationsets.argoproj.io \"{name}\" not found"))
    })?;
    let value = confirm.merged_value(current.metadata.annotation(CONFIRM_DELETION));
    let patch = json!({"metadata": {"annotations": {CONFIRM_DELETION: value}}});
    let patched = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| ApiError::kube(format!("confirming deletions of ApplicationSet {name}"), e))?;
    to_set(&patched)
}

/// A Kubernetes object name (RFC 1123 subdomain), as Applications are named.
fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirmations_add_up() {
        let apps = |v: &[&str]| Confirm::Apps(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(apps(&["b", "a"]).merged_value(None), "a,b");
        assert_eq!(apps(&["c"]).merged_value(Some("b, a")), "a,b,c");
        assert_eq!(apps(&["a"]).merged_value(Some("all")), "all");
        assert_eq!(Confirm::All.merged_value(Some("a")), "all");
    }

    #[test]
    fn pending_deletions_are_owned_apps_no_longer_generated_while_held() {
        let mut set: ApplicationSet = serde_json::from_value(json!({
            "metadata": {"name": "s"}, "spec": {},
            "status": {"conditions": [{"type": "DeletionHeld", "status": "True",
                        "message": "m", "reason": "DeletionHeld"}],
                       "resources": [{"name": "keep"}]}
        }))
        .unwrap();
        let owned = [
            json!({"metadata": {"name": "keep"}}),
            json!({"metadata": {"name": "gone-b"}}),
            json!({"metadata": {"name": "gone-a"}}),
        ];
        assert_eq!(pending_deletions(&set, &owned), ["gone-a", "gone-b"]);
        set.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "False".into();
        assert!(pending_deletions(&set, &owned).is_empty());
    }

    #[test]
    fn names_are_checked() {
        assert!(is_dns_subdomain("guestbook-prod.eu"));
        assert!(!is_dns_subdomain("a,b"));
        assert!(!is_dns_subdomain("all|x"));
        assert!(!is_dns_subdomain("-x"));
        assert!(!is_dns_subdomain(""));
    }
}
