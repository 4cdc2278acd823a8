//! `plumb proj allow-cluster-resource`, `deny-cluster-resource`, `allow-namespace-resource`,
//! `deny-namespace-resource` (Argo's `modifyResourceListCmd`) and `add-orphaned-ignore`,
//! `remove-orphaned-ignore`. A change is reported on standard error as Argo's cobra
//! `Println` does; asking for what is already so changes nothing and prints nothing.

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use super::update::{Change, spec_list, text};

/// `plumb proj allow-namespace-resource PROJECT GROUP KIND` (and `deny-`).
#[derive(Debug, Args)]
pub struct NamespacedArgs {
    /// Project name.
    pub project: String,
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Use deny list or allow list. This can only be 'allow' or 'deny'.
    #[arg(short = 'l', long = "list", default_value = "deny")]
    pub list: String,
}

/// `plumb proj allow-cluster-resource PROJECT GROUP KIND [NAME]` (and `deny-`).
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Project name.
    pub project: String,
    /// API group (`""` for the core group).
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Resource name pattern (Go's filepath.Match glob; none: every object of the kind).
    pub name: Option<String>,
    /// Use deny list or allow list. This can only be 'allow' or 'deny'.
    #[arg(short = 'l', long = "list", default_value = "allow")]
    pub list: String,
}

/// `plumb proj add-orphaned-ignore PROJECT GROUP KIND` (and `remove-`).
#[derive(Debug, Args)]
pub struct OrphanedArgs {
    /// Project name.
    pub project: String,
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Resource name pattern.
    #[arg(long, default_value = "")]
    pub name: String,
}

/// Which list a verb edits, and whether it adds to it.
struct Target {
    field: &'static str,
    action: &'static str,
    add: bool,
}

fn target(list: &str, allow: bool, namespaced: bool) -> Target {
    let allow_list = list == "allow" || list == "white";
    let field = match (namespaced, allow_list) {
        (true, true) => "namespaceResourceWhitelist",
        (true, false) => "namespaceResourceBlacklist",
        (false, true) => "clusterResourceWhitelist",
        (false, false) => "clusterResourceBlacklist",
    };
    Target {
        field,
        action: if allow_list { "allowed" } else { "denied" },
        add: if allow_list { allow } else { !allow },
    }
}

/// Adds to or removes from a namespaced resource list; the message when it changed.
pub fn namespaced(
    project: &mut Value,
    args: &NamespacedArgs,
    allow: bool,
    note: &mut Option<String>,
) -> Result<Change> {
    let t = target(&args.list, allow, true);
    let (group, kind, action) = (&args.group, &args.kind, t.action);
    let list = spec_list(project, t.field);
    let found = list
        .iter()
        .position(|i| text(i, "group") == group && text(i, "kind") == kind);
    match (t.add, found) {
        (true, Some(_)) | (false, None) => return Ok(Change::Keep),
        (true, None) => {
            list.push(json!({"group": group, "kind": kind}));
            *note = Some(format!(
                "Group '{group}' and kind '{kind}' is added to {action} namespaced resources"
            ));
        }
        (false, Some(i)) => {
            list.remove(i);
            *note = Some(format!(
                "Group '{group}' and kind '{kind}' is removed from {action} namespaced resources"
            ));
        }
    }
    Ok(Change::Write)
}

/// Adds to or removes from a cluster resource list (Argo's `modifyClusterResourcesList`: an
/// entry is the same when its group, kind and name are); the message when it changed.
pub fn cluster(
    project: &mut Value,
    args: &ClusterArgs,
    allow: bool,
    note: &mut Option<String>,
) -> Result<Change> {
    let t = target(&args.list, allow, false);
    let (group, kind, action) = (&args.group, &args.kind, t.action);
    let name = args.name.as_deref().unwrap_or_default();
    let list = spec_list(project, t.field);
    let found = list.iter().position(|i| {
        text(i, "group") == group && text(i, "kind") == kind && text(i, "name") == name
    });
    match (t.add, found) {
        (true, Some(_)) | (false, None) => return Ok(Change::Keep),
        (true, None) => {
            let mut item = json!({"group": group, "kind": kind});
            if !name.is_empty() {
                item["name"] = json!(name);
            }
            list.push(item);
            *note = Some(format!(
                "Group '{group}', kind '{kind}', and name '{name}' is added to {action} cluster resources"
            ));
        }
        (false, Some(i)) => {
            list.remove(i);
            *note = Some(format!(
                "Group '{group}', kind '{kind}', and name '{name}' is removed from {action} cluster resources"
            ));
        }
    }
    Ok(Change::Write)
}

fn same_key(i: &Value, args: &OrphanedArgs) -> bool {
    text(i, "group") == args.group && text(i, "kind") == args.kind && text(i, "name") == args.name
}

fn orphaned_key(args: &OrphanedArgs) -> Value {
    let mut key = json!({"group": args.group, "kind": args.kind});
    if !args.name.is_empty() {
        key["name"] = json!(args.name);
    }
    key
}

/// Adds a resource to `spec.orphanedResources.ignore`.
pub fn add_orphaned_ignore(project: &mut Value, args: &OrphanedArgs) -> Result<Change> {
    let settings = &mut project["spec"]["orphanedResources"];
    if !settings.is_object() {
        *settings = json!({"ignore": [orphaned_key(args)]});
        return Ok(Change::Write);
    }
    let ignore = &mut settings["ignore"];
    if !ignore.is_array() {
        *ignore = json!([]);
    }
    if let Some(list) = ignore.as_array_mut() {
        if list.iter().any(|i| same_key(i, args)) {
            bail!("Specified resource is already defined in the orphaned ignore list of project");
        }
        list.push(orphaned_key(args));
    }
    Ok(Change::Write)
}

/// Removes a resource from `spec.orphanedResources.ignore`.
pub fn remove_orphaned_ignore(project: &mut Value, args: &OrphanedArgs) -> Result<Change> {
    let Some(settings) = project
        .pointer_mut("/spec/orphanedResources")
        .filter(|s| s.is_object())
    else {
        bail!("Specified resource does not exist in the orphaned ignore list of project");
    };
    let list = settings.get_mut("ignore").and_then(Value::as_array_mut);
    let Some((list, i)) =
        list.and_then(|l| l.iter().position(|i| same_key(i, args)).map(|i| (l, i)))
    else {
        bail!("Specified resource does not exist in the orphaned ignore of project");
    };
    list.remove(i);
    if list.is_empty()
        && let Some(s) = settings.as_object_mut()
    {
        s.remove("ignore");
    }
    Ok(Change::Write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_lists() {
        let mut p = json!({"spec": {}});
        let mut note = None;
        let a = NamespacedArgs {
            project: "p".into(),
            group: "".into(),
            kind: "Secret".into(),
            list: "deny".into(),
        };
        // deny-namespace-resource on the deny list adds.
        assert_eq!(
            namespaced(&mut p, &a, false, &mut note).unwrap(),
            Change::Write
        );
        assert_eq!(
            note.take().unwrap(),
            "Group '' and kind 'Secret' is added to denied namespaced resources"
        );
        assert_eq!(
            namespaced(&mut p, &a, false, &mut note).unwrap(),
            Change::Keep
        );
        // allow-namespace-resource on the deny list removes.
        assert_eq!(
            namespaced(&mut p, &a, true, &mut note).unwrap(),
            Change::Write
        );
        assert_eq!(p["spec"]["namespaceResourceBlacklist"], json!([]));
    }

    #[test]
    fn cluster_lists_take_a_name_pattern() {
        let mut p = json!({"spec": {}});
        let mut note = None;
        let mut a = ClusterArgs {
            project: "p".into(),
            group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: None,
            list: "allow".into(),
        };
        cluster(&mut p, &a, true, &mut note).unwrap();
        a.name = Some("app-*".into());
        assert_eq!(cluster(&mut p, &a, true, &mut note).unwrap(), Change::Write);
        assert_eq!(
            note.take().unwrap(),
            "Group 'rbac.authorization.k8s.io', kind 'ClusterRole', and name 'app-*' is added to allowed cluster resources"
        );
        assert_eq!(
            p["spec"]["clusterResourceWhitelist"],
            json!([{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole"},
                   {"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "app-*"}])
        );
        assert_eq!(cluster(&mut p, &a, true, &mut note).unwrap(), Change::Keep);
        // deny-cluster-resource with the name removes only the named entry.
        assert_eq!(
            cluster(&mut p, &a, false, &mut note).unwrap(),
            Change::Write
        );
        assert_eq!(
            note.take().unwrap(),
            "Group 'rbac.authorization.k8s.io', kind 'ClusterRole', and name 'app-*' is removed from allowed cluster resources"
        );
        assert_eq!(
            p["spec"]["clusterResourceWhitelist"],
            json!([{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole"}])
        );
    }

    #[test]
    fn orphaned_ignore() {
        let mut p = json!({"spec": {}});
        let a = OrphanedArgs {
            project: "p".into(),
            group: "".into(),
            kind: "ConfigMap".into(),
            name: "".into(),
        };
        assert!(remove_orphaned_ignore(&mut p, &a).is_err());
        add_orphaned_ignore(&mut p, &a).unwrap();
        assert!(add_orphaned_ignore(&mut p, &a).is_err());
        remove_orphaned_ignore(&mut p, &a).unwrap();
        assert_eq!(p["spec"]["orphanedResources"], json!({}));
    }
}
