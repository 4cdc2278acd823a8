//! What the API server serves: group/kind (+version) → [`ApiResource`] and scope, with each
//! kind's preferred version, refreshable after CRDs are applied.
//!
//! `ApiResource::from_gvk` guesses plurals and is wrong for irregular CRDs, so every request
//! plumb-kube makes resolves its kind here first.
//!
//! Discovery reads the aggregated document itself (instead of kube's `Discovery`) because it
//! needs each group version's `freshness`: an aggregated API whose backend is down (an
//! APIService whose Service is gone, as when metrics-server is down) is served `Stale`. Such a
//! group version is recorded as unavailable, its kinds are neither listed nor watched, and the
//! controller reports it on the Applications that use it instead of taking its objects for
//! missing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use kube::Client;
use kube::core::discovery::v2::APIGroupDiscoveryList;
use kube::discovery::{ApiCapabilities, ApiResource, Discovery, Scope, verbs};
use plumb_model::{GroupKind, group_of};

use crate::error::{Error, Result};

/// One served kind in one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKind {
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Verbs the resource supports (`get`, `list`, `watch`, `patch`, ...).
    pub verbs: Vec<String>,
    /// Whether the kind has a `status` subresource (its controller writes `status` through it,
    /// and the API server drops `status` from creates and updates of the main resource).
    pub status_subresource: bool,
}

impl ApiKind {
    /// Builds an entry from kube's discovery types.
    pub fn new(resource: ApiResource, caps: &ApiCapabilities) -> Self {
        Self {
            resource,
            namespaced: caps.scope == Scope::Namespaced,
            verbs: caps.operations.clone(),
            status_subresource: caps.subresources.iter().any(|(r, _)| r.plural == "status"),
        }
    }

    /// Group and kind.
    pub fn group_kind(&self) -> GroupKind {
        GroupKind::new(self.resource.group.clone(), self.resource.kind.clone())
    }

    /// Whether the resource supports a verb.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether it can be listed and watched (what the live cache needs).
    pub fn is_listable(&self) -> bool {
        self.supports(verbs::LIST) && self.supports(verbs::WATCH)
    }
}

/// A point-in-time view of the served kinds. Versions of a kind are kept in the server's
/// preference order; the first is the preferred one.
#[derive(Debug, Clone, Default)]
pub struct ApiCatalog {
    kinds: BTreeMap<GroupKind, Vec<ApiKind>>,
    /// Group versions (`group/version`) the server lists but cannot serve now (`Stale` in
    /// aggregated discovery: the aggregated API server behind them does not answer).
    unavailable: BTreeSet<String>,
}

impl ApiCatalog {
    /// A catalog from entries listed in preference order (preferred versions first).
    pub fn from_entries(entries: impl IntoIterator<Item = ApiKind>) -> Self {
        let mut kinds: BTreeMap<GroupKind, Vec<ApiKind>> = BTreeMap::new();
        for entry in entries {
            let versions = kinds.entry(entry.group_kind()).or_default();
            if !versions
                .iter()
                .any(|v| v.resource.version == entry.resource.version)
            {
                versions.push(entry);
            }
        }
        Self {
            kinds,
            unavailable: BTreeSet::new(),
        }
    }

    /// Marks group versions (`group/version`) as unavailable; their kinds are then not listed.
    pub fn with_unavailable(mut self, group_versions: impl IntoIterator<Item = String>) -> Self {
        self.unavailable.extend(group_versions);
        self
    }

    /// A catalog from an aggregated discovery document (`/api` and `/apis`, `apidiscovery.k8s.io/v2`):
    /// versions in the server's preference order, `Stale` group versions recorded as unavailable
    /// and their (possibly outdated) resources left out.
    pub fn from_aggregated(lists: &[APIGroupDiscoveryList]) -> Self {
        let mut entries = Vec::new();
        let mut unavailable = BTreeSet::new();
        for group in lists.iter().flat_map(|l| &l.items) {
            let name = group
                .metadata
                .as_ref()
                .and_then(|m| m.name.clone())
                .unwrap_or_default();
            for version in &group.versions {
                let Some(v) = version.version.as_deref() else {
                    continue;
                };
                let api_version = if name.is_empty() {
                    v.to_string()
                } else {
                    format!("{name}/{v}")
                };
                if version.freshness.as_deref() == Some("Stale") {
                    unavailable.insert(api_version);
                    continue;
                }
                for r in &version.resources {
                    let (Some(plural), Some(kind)) = (
                        &r.resource,
                        r.response_kind.as_ref().and_then(|k| k.kind.as_ref()),
                    ) else {
                        continue;
                    };
                    entries.push(ApiKind {
                        resource: ApiResource {
                            group: name.clone(),
                            version: v.to_string(),
                            api_version: api_version.clone(),
                            kind: kind.clone(),
                            plural: plural.clone(),
                        },
                        namespaced: r.scope.as_deref() == Some("Namespaced"),
                        verbs: r.verbs.clone(),
                        status_subresource: r
                            .subresources
                            .iter()
                            .any(|s| s.subresource.as_deref() == Some("status")),
                    });
                }
            }
        }
        Self::from_entries(entries).with_unavailable(unavailable)
    }

    /// Group versions (`group/version`) listed by the server but not served now, sorted.
    pub fn unavailable(&self) -> impl Iterator<Item = &str> {
        self.unavailable.iter().map(String::as_str)
    }

    /// The unavailable group versions of `group` (empty when the group is served).
    pub fn unavailable_in(&self, group: &str) -> Vec<&str> {
        self.unavailable
            .iter()
            .filter(|gv| match gv.rsplit_once('/') {
                Some((g, _)) => g == group,
                None => group.is_empty(),
            })
            .map(String::as_str)
            .collect()
    }

    fn from_discovery(discovery: &Discovery) -> Self {
        let entries = discovery.groups().flat_map(|group| {
            // `versions()` lists the preferred version first.
            group
                .versions()
                .flat_map(|version| group.versioned_resources(version))
                .map(|(resource, caps)| ApiKind::new(resource, &caps))
                .collect::<Vec<_>>()
        });
        Self::from_entries(entries)
    }

    /// The kind in the given version, or in its preferred version when `version` is `None`.
    pub fn resolve(&self, gk: &GroupKind, version: Option<&str>) -> Option<&ApiKind> {
        let versions = self.kinds.get(gk)?;
        match version {
            None => versions.first(),
            Some(v) => versions.iter().find(|k| k.resource.version == v),
        }
    }

    /// The kind named by an object's `apiVersion` and `kind`.
    pub fn resolve_api_version(&self, api_version: &str, kind: &str) -> Option<&ApiKind> {
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        self.resolve(&GroupKind::new(group_of(api_version), kind), Some(version))
    }

    /// Whether a group/kind is namespaced (`None` when not served).
    pub fn is_namespaced(&self, gk: &GroupKind) -> Option<bool> {
        self.resolve(gk, None).map(|k| k.namespaced)
    }

    /// Every served kind in its preferred version, ordered by group/kind.
    pub fn preferred(&self) -> impl Iterator<Item = &ApiKind> {
        self.kinds.values().filter_map(|v| v.first())
    }

    /// The group/versions of the preferred versions (`v1`, `apps/v1`, ...), sorted: the API
    /// versions a render is given (Helm's `.Capabilities.APIVersions`) by the controller's
    /// comparison, `plumb app ... --local` and `plumb server`'s `GET /api/v1/clusters/{server}`.
    pub fn preferred_api_versions(&self) -> Vec<String> {
        let set: std::collections::BTreeSet<String> = self
            .preferred()
            .map(|k| {
                let r = &k.resource;
                if r.group.is_empty() {
                    r.version.clone()
                } else {
                    format!("{}/{}", r.group, r.version)
                }
            })
            .collect();
        set.into_iter().collect()
    }

    /// Preferred versions of the kinds that can be listed and watched (unavailable group
    /// versions have no kinds here: [`ApiCatalog::from_aggregated`] leaves them out).
    pub fn listable(&self) -> impl Iterator<Item = &ApiKind> {
        self.preferred().filter(|k| k.is_listable())
    }

    /// Number of served group/kinds.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether nothing is served (never true for a real API server).
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

/// Discovery for one cluster: the current [`ApiCatalog`], refreshed on demand.
pub struct ApiDiscovery {
    client: Client,
    catalog: RwLock<Arc<ApiCatalog>>,
}

impl std::fmt::Debug for ApiDiscovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiDiscovery")
            .field("kinds", &self.catalog().len())
            .finish_non_exhaustive()
    }
}

impl ApiDiscovery {
    /// Runs discovery once.
    pub async fn new(client: Client) -> Result<Self> {
        let catalog = RwLock::new(Arc::new(run(&client).await?));
        Ok(Self { client, catalog })
    }

    /// The current catalog.
    pub fn catalog(&self) -> Arc<ApiCatalog> {
        // A poisoned lock only means a panic elsewhere while swapping an Arc; the value is whole.
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Runs discovery again (after CRDs are applied) and returns the new catalog.
    pub async fn refresh(&self) -> Result<Arc<ApiCatalog>> {
        let fresh = Arc::new(run(&self.client).await?);
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
        Ok(fresh)
    }

    /// Resolves a kind, refreshing once when it is not in the current catalog (it may have been
    /// installed since).
    pub async fn resolve(&self, gk: &GroupKind, version: Option<&str>) -> Result<ApiKind> {
        if let Some(kind) = self.catalog().resolve(gk, version) {
            return Ok(kind.clone());
        }
        self.refresh()
            .await?
            .resolve(gk, version)
            .cloned()
            .ok_or_else(|| Error::UnknownKind {
                gk: gk.clone(),
                version: version.map(str::to_string),
            })
    }

    /// The client discovery runs with.
    pub fn client(&self) -> &Client {
        &self.client
    }
}

async fn run(client: &Client) -> Result<ApiCatalog> {
    // Aggregated discovery is two requests instead of one per group; older servers lack it.
    let aggregated = async {
        let core = client.list_core_api_versions_aggregated().await?;
        let apis = client.list_api_groups_aggregated().await?;
        Ok::<_, kube::Error>([core, apis])
    };
    let catalog = match aggregated.await {
        // A server without aggregated discovery answers /apis with a plain APIGroupList, which
        // reads as an empty list: fall back then too.
        Ok(lists) if lists.iter().any(|l| !l.items.is_empty()) => {
            ApiCatalog::from_aggregated(&lists)
        }
        other => {
            if let Err(error) = other {
                tracing::debug!(%error, "aggregated discovery unavailable, using per-group discovery");
            }
            let discovery = Discovery::new(client.clone())
                .run()
                .await
                .map_err(Error::Discovery)?;
            ApiCatalog::from_discovery(&discovery)
        }
    };
    let unavailable: Vec<&str> = catalog.unavailable().collect();
    if !unavailable.is_empty() {
        tracing::warn!(
            "API group versions listed but not served (their aggregated API server does not answer; objects of their kinds cannot be compared): {}",
            unavailable.join(", ")
        );
    }
    Ok(catalog)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        verbs: &[&str],
    ) -> ApiKind {
        let api_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        ApiKind {
            resource: ApiResource {
                group: group.into(),
                version: version.into(),
                api_version,
                kind: kind.into(),
                plural: plural.into(),
            },
            namespaced,
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            status_subresource: false,
        }
    }

    const ALL: &[&str] = &[
        "create", "delete", "get", "list", "patch", "update", "watch",
    ];

    fn catalog() -> ApiCatalog {
        ApiCatalog::from_entries([
            kind(
                "autoscaling",
                "v2",
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
                true,
                ALL,
            ),
            kind(
                "autoscaling",
                "v1",
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
                true,
                ALL,
            ),
            kind("", "v1", "Namespace", "namespaces", false, ALL),
            kind(
                "authorization.k8s.io",
                "v1",
                "SubjectAccessReview",
                "subjectaccessreviews",
                false,
                &["create"],
            ),
            kind("example.com", "v1", "Octopus", "octopodes", true, ALL),
        ])
    }

    #[test]
    fn preferred_version_is_the_first_listed() {
        let c = catalog();
        let hpa = GroupKind::new("autoscaling", "HorizontalPodAutoscaler");
        assert_eq!(c.resolve(&hpa, None).unwrap().resource.version, "v2");
        assert_eq!(
            c.resolve(&hpa, Some("v1")).unwrap().resource.api_version,
            "autoscaling/v1"
        );
        assert!(c.resolve(&hpa, Some("v2beta2")).is_none());
    }

    #[test]
    fn irregular_plurals_and_scope_come_from_the_server() {
        let c = catalog();
        let octopus = c.resolve_api_version("example.com/v1", "Octopus").unwrap();
        assert_eq!(octopus.resource.plural, "octopodes");
        assert_eq!(
            c.is_namespaced(&GroupKind::new("", "Namespace")),
            Some(false)
        );
        assert!(c.resolve_api_version("v1", "Namespace").is_some());
        assert_eq!(c.is_namespaced(&GroupKind::new("", "Nope")), None);
    }

    #[test]
    fn stale_group_versions_are_unavailable_not_served() {
        use kube::core::discovery::v2::{
            APIGroupDiscovery, APIResourceDiscovery, APIVersionDiscovery, GroupVersionKind,
        };
        let resource =
            |group: &str, version: &str, kind: &str, plural: &str| APIResourceDiscovery {
                resource: Some(plural.into()),
                response_kind: Some(GroupVersionKind {
                    group: Some(group.into()),
                    version: Some(version.into()),
                    kind: Some(kind.into()),
                }),
                scope: Some("Namespaced".into()),
                verbs: ALL.iter().map(|v| v.to_string()).collect(),
                ..Default::default()
            };
        let group = |name: &str, versions: Vec<APIVersionDiscovery>| APIGroupDiscovery {
            metadata: Some(kube::api::ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            }),
            versions,
        };
        let lists = [APIGroupDiscoveryList {
            metadata: None,
            items: vec![
                group(
                    "apps",
                    vec![APIVersionDiscovery {
                        version: Some("v1".into()),
                        resources: vec![resource("apps", "v1", "Deployment", "deployments")],
                        freshness: Some("Current".into()),
                    }],
                ),
                // What kube-apiserver serves for an APIService whose Service is gone.
                group(
                    "metrics.k8s.io",
                    vec![APIVersionDiscovery {
                        version: Some("v1beta1".into()),
                        resources: vec![resource(
                            "metrics.k8s.io",
                            "v1beta1",
                            "PodMetrics",
                            "pods",
                        )],
                        freshness: Some("Stale".into()),
                    }],
                ),
            ],
        }];
        let mut lists = lists;
        lists[0].items[0].versions[0].resources[0].subresources =
            vec![kube::core::discovery::v2::APISubresourceDiscovery {
                subresource: Some("status".into()),
                ..Default::default()
            }];
        let c = ApiCatalog::from_aggregated(&lists);
        assert!(c.resolve_api_version("apps/v1", "Deployment").is_some());
        assert!(
            c.resolve_api_version("apps/v1", "Deployment")
                .is_some_and(|k| k.status_subresource),
            "the status subresource is read from aggregated discovery"
        );
        assert!(
            c.resolve_api_version("metrics.k8s.io/v1beta1", "PodMetrics")
                .is_none()
        );
        assert_eq!(
            c.unavailable().collect::<Vec<_>>(),
            ["metrics.k8s.io/v1beta1"]
        );
        assert_eq!(
            c.unavailable_in("metrics.k8s.io"),
            ["metrics.k8s.io/v1beta1"]
        );
        assert!(c.unavailable_in("apps").is_empty());
        assert_eq!(
            c.listable()
                .map(|k| k.group_kind().to_string())
                .collect::<Vec<_>>(),
            ["apps/Deployment"]
        );
    }

    #[test]
    fn listable_skips_create_only_kinds_and_lists_each_kind_once() {
        let c = catalog();
        let listed: Vec<String> = c.listable().map(|k| k.group_kind().to_string()).collect();
        assert_eq!(
            listed,
            [
                "/Namespace",
                "autoscaling/HorizontalPodAutoscaler",
                "example.com/Octopus"
            ]
        );
        assert_eq!(c.len(), 4);
    }
}
