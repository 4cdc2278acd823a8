//! `--resource GROUP:KIND:[NAMESPACE/]NAME` selectors of `app sync` and `app wait`
//! (Argo's `parseSelectedResources` and `IncludeResource`): an empty group is the core group,
//! `*` is a wildcard in any field, a leading `!` excludes.

use anyhow::{Result, bail};
use plumb_model::application::{ResourceStatus, SyncOperationResource};

/// One parsed selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSelector {
    /// Group pattern.
    pub group: String,
    /// Kind pattern.
    pub kind: String,
    /// Namespace pattern (`None`: any namespace).
    pub namespace: Option<String>,
    /// Name pattern.
    pub name: String,
    /// Exclusion (`!` prefix).
    pub exclude: bool,
}

impl std::str::FromStr for ResourceSelector {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<Self> {
        let (exclude, body) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let fields: Vec<&str> = body.split(':').collect();
        if fields.len() != 3 {
            bail!("resource '{text}' should have GROUP:KIND:NAME, but instead got: {body}");
        }
        let (namespace, name) = match fields[2].split_once('/') {
            Some((ns, name)) => {
                if name.contains('/') {
                    bail!(
                        "resource '{text}' should have a namespace/name, but instead got: {}",
                        fields[2]
                    );
                }
                (Some(ns.to_string()), name.to_string())
            }
            None => (None, fields[2].to_string()),
        };
        if fields[1].is_empty() || name.is_empty() {
            bail!("resource '{text}' needs a KIND and a NAME");
        }
        Ok(Self {
            group: fields[0].to_string(),
            kind: fields[1].to_string(),
            namespace,
            name,
            exclude,
        })
    }
}

fn matches(pattern: &str, value: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    if !pattern.contains('*') {
        return pattern == value;
    }
    // Prefix/suffix globs, the forms Argo's docs use (`apps:Deployment:web-*`).
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = value;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else if let Some(pos) = rest.find(part) {
            rest = &rest[pos + part.len()..];
        } else {
            return false;
        }
    }
    true
}

impl ResourceSelector {
    fn selects(&self, group: &str, kind: &str, namespace: &str, name: &str) -> bool {
        matches(&self.group, group)
            && matches(&self.kind, kind)
            && self
                .namespace
                .as_deref()
                .is_none_or(|ns| matches(ns, namespace))
            && matches(&self.name, name)
    }
}

/// Argo's `IncludeResource`: excluded by any exclusion; else included when there are no
/// inclusions or one of them selects it.
pub fn include(
    selectors: &[ResourceSelector],
    group: &str,
    kind: &str,
    namespace: &str,
    name: &str,
) -> bool {
    if selectors
        .iter()
        .any(|s| s.exclude && s.selects(group, kind, namespace, name))
    {
        return false;
    }
    let mut inclusions = selectors.iter().filter(|s| !s.exclude).peekable();
    inclusions.peek().is_none() || inclusions.any(|s| s.selects(group, kind, namespace, name))
}

/// The Application's resources the selectors pick, as `operation.sync.resources`.
pub fn select(
    selectors: &[ResourceSelector],
    resources: &[ResourceStatus],
) -> Vec<SyncOperationResource> {
    resources
        .iter()
        .filter(|r| {
            include(
                selectors,
                r.group.as_deref().unwrap_or_default(),
                r.kind.as_deref().unwrap_or_default(),
                r.namespace.as_deref().unwrap_or_default(),
                r.name.as_deref().unwrap_or_default(),
            )
        })
        .map(|r| SyncOperationResource {
            group: r.group.clone().filter(|g| !g.is_empty()),
            kind: r.kind.clone().unwrap_or_default(),
            name: r.name.clone().unwrap_or_default(),
            namespace: r.namespace.clone().filter(|n| !n.is_empty()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(group: &str, kind: &str, ns: &str, name: &str) -> ResourceStatus {
        ResourceStatus {
            group: Some(group.into()).filter(|g: &String| !g.is_empty()),
            kind: Some(kind.into()),
            namespace: Some(ns.into()),
            name: Some(name.into()),
            ..Default::default()
        }
    }

    #[test]
    fn parse_forms() {
        let s: ResourceSelector = "apps:Deployment:payments/payments-api".parse().unwrap();
        assert_eq!(s.namespace.as_deref(), Some("payments"));
        assert_eq!(
            (s.group.as_str(), s.kind.as_str(), s.name.as_str()),
            ("apps", "Deployment", "payments-api")
        );
        let core: ResourceSelector = ":Service:web".parse().unwrap();
        assert_eq!((core.group.as_str(), core.namespace.clone()), ("", None));
        let ex: ResourceSelector = "!*:ConfigMap:*".parse().unwrap();
        assert!(ex.exclude);
        assert!("Deployment:web".parse::<ResourceSelector>().is_err());
        assert!("apps:Deployment:a/b/c".parse::<ResourceSelector>().is_err());
        assert!("apps::web".parse::<ResourceSelector>().is_err());
    }

    #[test]
    fn select_includes_and_excludes() {
        let resources = vec![
            status("", "Service", "payments", "payments-api"),
            status("apps", "Deployment", "payments", "payments-api"),
            status("", "ConfigMap", "payments", "payments-api"),
            status("apps", "Deployment", "billing", "billing-api"),
        ];
        let sel: Vec<ResourceSelector> = vec![
            "apps:Deployment:*".parse().unwrap(),
            "!apps:Deployment:billing/*".parse().unwrap(),
        ];
        let picked = select(&sel, &resources);
        assert_eq!(picked.len(), 1);
        assert_eq!(picked[0].namespace.as_deref(), Some("payments"));
        assert_eq!(picked[0].group.as_deref(), Some("apps"));
        let only_excl: Vec<ResourceSelector> = vec!["!:ConfigMap:*".parse().unwrap()];
        assert_eq!(select(&only_excl, &resources).len(), 3);
        let core: Vec<ResourceSelector> = vec![":Service:payments-api".parse().unwrap()];
        let picked = select(&core, &resources);
        assert_eq!((picked.len(), picked[0].group.clone()), (1, None));
        assert!(matches("web-*", "web-1"));
        assert!(matches("*-api", "payments-api"));
        assert!(!matches("*-api", "payments"));
    }
}
