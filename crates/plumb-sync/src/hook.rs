//! What makes an object a hook, and how it is run: Argo CD's `argocd.argoproj.io/hook` and
//! `hook-delete-policy` annotations, Helm's hook annotations mapped onto them, sync waves, and
//! the names given to `generateName` hooks.

use plumb_model::annotations::{
    HELM_HOOK, HELM_HOOK_DELETE_POLICY, HELM_HOOK_WEIGHT, HOOK, HOOK_DELETE_POLICY, SYNC_WAVE,
    TRACKING_ID,
};
use plumb_model::application::HookType;
use serde_json::Value;

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

fn parse_hook_type(s: &str) -> Option<HookType> {
    Some(match s {
        "PreSync" => HookType::PreSync,
        "Sync" => HookType::Sync,
        "PostSync" => HookType::PostSync,
        "SyncFail" => HookType::SyncFail,
        "Skip" => HookType::Skip,
        "PreDelete" => HookType::PreDelete,
        "PostDelete" => HookType::PostDelete,
        _ => return None,
    })
}

/// The hook types of an object: `argocd.argoproj.io/hook` (comma list), else Helm's `helm.sh/hook`
/// mapped as Argo CD maps it (`pre-install`/`pre-upgrade` to PreSync, `post-install`/
/// `post-upgrade` to PostSync; other Helm hooks such as `crd-install` or `test` are ignored).
/// Unknown names are ignored. Empty for an ordinary object.
pub fn hook_types(obj: &Value) -> Vec<HookType> {
    let mut out = Vec::new();
    if let Some(h) = annotation(obj, HOOK) {
        for t in h.split(',').map(str::trim).filter_map(parse_hook_type) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        return out;
    }
    if let Some(h) = annotation(obj, HELM_HOOK) {
        for part in h.split(',').map(str::trim) {
            let mapped = match part {
                "pre-install" | "pre-upgrade" => HookType::PreSync,
                "post-install" | "post-upgrade" => HookType::PostSync,
                _ => continue,
            };
            if !out.contains(&mapped) {
                out.push(mapped);
            }
        }
    }
    out
}

/// Whether the object carries `argocd.argoproj.io/hook: Skip`: it is never applied.
pub fn is_skipped(obj: &Value) -> bool {
    hook_types(obj).contains(&HookType::Skip)
}

/// Whether the object is a hook (of any type but `Skip`): it does not count for sync status or
/// health, and only runs in its phase.
pub fn is_hook(obj: &Value) -> bool {
    hook_types(obj).iter().any(|t| *t != HookType::Skip)
}

/// The sync wave: `argocd.argoproj.io/sync-wave`, else `helm.sh/hook-weight`, else 0.
pub fn sync_wave(obj: &Value) -> i64 {
    annotation(obj, SYNC_WAVE)
        .or_else(|| annotation(obj, HELM_HOOK_WEIGHT))
        .and_then(|w| w.trim().parse().ok())
        .unwrap_or(0)
}

/// When a hook object is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletePolicy {
    /// Delete the previous object of the same name before creating the hook (the default).
    BeforeHookCreation,
    /// Delete the hook once it succeeded.
    HookSucceeded,
    /// Delete the hook once it failed.
    HookFailed,
}

/// The delete policies of a hook: `argocd.argoproj.io/hook-delete-policy`, else Helm's
/// `helm.sh/hook-delete-policy` mapped; `BeforeHookCreation` when none is given.
pub fn delete_policies(obj: &Value) -> Vec<DeletePolicy> {
    let mut out = Vec::new();
    if let Some(p) = annotation(obj, HOOK_DELETE_POLICY) {
        for part in p.split(',').map(str::trim) {
            let policy = match part {
                "BeforeHookCreation" => DeletePolicy::BeforeHookCreation,
                "HookSucceeded" => DeletePolicy::HookSucceeded,
                "HookFailed" => DeletePolicy::HookFailed,
                _ => continue,
            };
            if !out.contains(&policy) {
                out.push(policy);
            }
        }
    } else if let Some(p) = annotation(obj, HELM_HOOK_DELETE_POLICY) {
        for part in p.split(',').map(str::trim) {
            let policy = match part {
                "before-hook-creation" => DeletePolicy::BeforeHookCreation,
                "hook-succeeded" => DeletePolicy::HookSucceeded,
                "hook-failed" => DeletePolicy::HookFailed,
                _ => continue,
            };
            if !out.contains(&policy) {
                out.push(policy);
            }
        }
    }
    if out.is_empty() {
        out.push(DeletePolicy::BeforeHookCreation);
    }
    out
}

/// Gives a `generateName` hook a name of its own for this operation, as Argo CD does
/// (`<generateName><revision[:7]>-<phase>-<unix start>`): the same operation always finds its
/// hook again, and every new operation creates a new one. The tracking annotation, written
/// before the name was known, is completed.
pub fn name_generated_hook(obj: &mut Value, revision: &str, phase: &str, started_unix: i64) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(prefix) = meta
        .get("generateName")
        .and_then(Value::as_str)
        .filter(|g| !g.is_empty())
        .map(str::to_string)
    else {
        return;
    };
    // The comparison knows such an object by its prefix; any other name is the user's own.
    let old = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if !old.is_empty() && old != prefix {
        return;
    }
    let rev: String = revision.chars().take(7).collect();
    let rev = if rev.is_empty() {
        "sync".to_string()
    } else {
        rev
    };
    let name = format!("{prefix}{rev}-{phase}-{started_unix}").to_ascii_lowercase();
    // `generateName` stays, as Argo CD leaves it (the API server ignores it beside a name): it
    // marks the live object as a hook whose name was generated.
    meta.insert("name".into(), Value::String(name.clone()));
    if let Some(id) = meta
        .get_mut("annotations")
        .and_then(|a| a.get_mut(TRACKING_ID))
        && let Some(s) = id.as_str()
        && let Some(base) = s.strip_suffix(old.as_str())
        && base.ends_with('/')
    {
        *id = Value::String(format!("{base}{name}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn argo_annotation_wins_over_helm_and_lists_are_split() {
        let argo = json!({"metadata": {"annotations": {
            "argocd.argoproj.io/hook": "PreSync, SyncFail", "helm.sh/hook": "post-install",
            "argocd.argoproj.io/sync-wave": "3", "helm.sh/hook-weight": "9"}}});
        assert_eq!(hook_types(&argo), [HookType::PreSync, HookType::SyncFail]);
        assert_eq!(sync_wave(&argo), 3);
        let helm = json!({"metadata": {"annotations": {
            "helm.sh/hook": "pre-install,pre-upgrade,post-install,crd-install,test",
            "helm.sh/hook-weight": "-2",
            "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded"}}});
        assert_eq!(hook_types(&helm), [HookType::PreSync, HookType::PostSync]);
        assert_eq!(sync_wave(&helm), -2);
        assert_eq!(
            delete_policies(&helm),
            [
                DeletePolicy::BeforeHookCreation,
                DeletePolicy::HookSucceeded
            ]
        );
        assert!(is_hook(&helm));
    }

    #[test]
    fn skip_is_not_a_hook_and_default_policy_is_before_hook_creation() {
        let skip = json!({"metadata": {"annotations": {"argocd.argoproj.io/hook": "Skip"}}});
        assert!(is_skipped(&skip));
        assert!(!is_hook(&skip));
        let plain = json!({"metadata": {"name": "x"}});
        assert!(hook_types(&plain).is_empty());
        assert_eq!(sync_wave(&plain), 0);
        assert_eq!(delete_policies(&plain), [DeletePolicy::BeforeHookCreation]);
        let bad_wave =
            json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": "soon"}}});
        assert_eq!(sync_wave(&bad_wave), 0);
    }

    #[test]
    fn generated_names_are_stable_per_operation_and_complete_the_tracking_id() {
        let mut hook = json!({"metadata": {"generateName": "migrate-", "namespace": "shop",
            "annotations": {"argocd.argoproj.io/tracking-id": "shop:batch/Job:shop/"}}});
        name_generated_hook(&mut hook, "4f3c2a1b9e", "PreSync", 1_764_460_800);
        assert_eq!(
            hook["metadata"]["name"],
            "migrate-4f3c2a1-presync-1764460800"
        );
        assert_eq!(hook["metadata"]["generateName"], "migrate-");
        assert_eq!(
            hook["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
            "shop:batch/Job:shop/migrate-4f3c2a1-presync-1764460800"
        );
        let mut named = json!({"metadata": {"name": "fixed", "generateName": "x-"}});
        name_generated_hook(&mut named, "abc", "Sync", 1);
        assert_eq!(named["metadata"]["name"], "fixed");
        // As the comparison hands it over: known by its prefix.
        let mut compared = json!({"metadata": {"name": "seed-", "generateName": "seed-",
            "annotations": {"argocd.argoproj.io/tracking-id": "shop:batch/Job:shop/seed-"}}});
        name_generated_hook(&mut compared, "4f3c2a1b9e", "PostSync", 7);
        assert_eq!(compared["metadata"]["name"], "seed-4f3c2a1-postsync-7");
        assert_eq!(
            compared["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
            "shop:batch/Job:shop/seed-4f3c2a1-postsync-7"
        );
    }
}
