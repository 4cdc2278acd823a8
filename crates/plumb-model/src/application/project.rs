//! The `AppProject` object: which sources, destinations and kinds its Applications may use, and
//! when they may sync (sync windows).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::meta::ObjectMeta;
use super::source_integrity::{
    SourceIntegrity, SourceIntegrityGit, SourceIntegrityGitPolicy, SourceIntegrityGitPolicyGpg,
    SourceIntegrityGitPolicyRepo, gpg_mode,
};
use super::spec::ApplicationDestination;
use crate::GroupKind;

/// An `argoproj.io/v1alpha1` AppProject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppProject {
    /// `argoproj.io/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `AppProject`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Object metadata.
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::schema::object_meta")
    )]
    pub metadata: ObjectMeta,
    /// What the project permits.
    pub spec: AppProjectSpec,
    /// Issued role tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AppProjectStatus>,
}

impl AppProject {
    /// Kind name.
    pub const KIND: &'static str = "AppProject";
}

impl AppProject {
    /// The source integrity in force: `spec.sourceIntegrity`, with the legacy `signatureKeys`
    /// turned into a `head` policy for every repository (`*`) when there is no Git policy; when
    /// both are set the Git policies win and the keys are ignored (Argo logs an error then).
    #[doc(alias = "EffectiveSourceIntegrity")]
    pub fn effective_source_integrity(&self) -> Option<SourceIntegrity> {
        let legacy: Vec<String> = self
            .spec
            .signature_keys
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|k| k.key_id.clone())
            .collect();
        let modern = self.spec.source_integrity.clone();
        if legacy.is_empty() {
            return modern;
        }
        let migrated = SourceIntegrityGit {
            policies: vec![SourceIntegrityGitPolicy {
                repos: vec![SourceIntegrityGitPolicyRepo { url: "*".into() }],
                gpg: Some(SourceIntegrityGitPolicyGpg {
                    mode: gpg_mode::HEAD.into(),
                    keys: legacy,
                }),
            }],
        };
        match modern {
            Some(si) if si.git.is_some() => Some(si),
            Some(mut si) => {
                si.git = Some(migrated);
                Some(si)
            }
            None => Some(SourceIntegrity {
                git: Some(migrated),
            }),
        }
    }
}

/// `AppProject.spec`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppProjectSpec {
    /// Repository URLs (globs) sources may come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_repos: Option<Vec<String>>,
    /// Clusters and namespaces (globs) Applications may deploy to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destinations: Option<Vec<ApplicationDestination>>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Project roles (for Argo's API server; kept, not used by Plumb).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<ProjectRole>>,
    /// Cluster-scoped objects Applications may manage (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_resource_whitelist: Option<Vec<ClusterResourceRestrictionItem>>,
    /// Namespaced kinds Applications may not manage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_resource_blacklist: Option<Vec<GroupKind>>,
    /// Orphaned resource monitoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orphaned_resources: Option<OrphanedResourcesMonitorSettings>,
    /// When Applications may sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_windows: Option<Vec<SyncWindow>>,
    /// Namespaced kinds Applications may manage (absent: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_resource_whitelist: Option<Vec<GroupKind>>,
    /// GnuPG keys commits must be signed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_keys: Option<Vec<SignatureKey>>,
    /// Cluster-scoped objects Applications may not manage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_resource_blacklist: Option<Vec<ClusterResourceRestrictionItem>>,
    /// Namespaces (globs) Applications of this project may live in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_namespaces: Option<Vec<String>>,
    /// Only clusters scoped to this project are permitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permit_only_project_scoped_clusters: Option<bool>,
    /// Service accounts to impersonate per destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination_service_accounts: Option<Vec<DestinationServiceAccount>>,
    /// Constraints sources must meet: Git policies per repository requiring signed revisions
    /// (`signatureKeys` are folded in by `effective_source_integrity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_integrity: Option<SourceIntegrity>,
}

/// An entry of `clusterResourceWhitelist` or `clusterResourceBlacklist` (Argo's
/// `ClusterResourceRestrictionItem`): group and kind patterns and, optionally, a name pattern
/// (Go's `filepath.Match` syntax); no name (or an empty one) matches every object of the kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct ClusterResourceRestrictionItem {
    /// API group (`""` for core; may be left out when written).
    #[serde(default)]
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Name pattern; absent or empty: every object of the group and kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ClusterResourceRestrictionItem {
    /// An entry for every object of a group and kind.
    pub fn new(group: impl Into<String>, kind: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
            name: None,
        }
    }

    /// The name pattern, `""` when there is none (Go's zero value).
    pub fn name_pattern(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }
}

impl std::fmt::Display for ClusterResourceRestrictionItem {
    /// `group/kind`, or `group/kind/name` with a name (the CLI's `GROUP/KIND/NAME`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name_pattern() {
            "" => write!(f, "{}/{}", self.group, self.kind),
            name => write!(f, "{}/{}/{name}", self.group, self.kind),
        }
    }
}

/// A project role.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProjectRole {
    /// Role name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Casbin policy lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policies: Option<Vec<String>>,
    /// Issued tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwt_tokens: Option<Vec<JwtToken>>,
    /// OIDC groups bound to the role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
}

/// An issued role token.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JwtToken {
    /// Issued at (Unix seconds).
    pub iat: i64,
    /// Expires at (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp: Option<i64>,
    /// Token id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// `spec.orphanedResources`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OrphanedResourcesMonitorSettings {
    /// Raise an OrphanedResourceWarning condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn: Option<bool>,
    /// Resources never reported as orphaned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore: Option<Vec<OrphanedResourceKey>>,
}

/// A resource (group, kind, name; globs) left out of orphan monitoring.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OrphanedResourceKey {
    /// API group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A sync window: a cron schedule and duration during which syncs are allowed or denied for the
/// matching Applications, namespaces and clusters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct SyncWindow {
    /// `allow` or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Start times (5-field cron).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// How long each window lasts (`1h`, `30m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Application names (globs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applications: Option<Vec<String>>,
    /// Destination namespaces (globs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
    /// Destination clusters (globs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<String>>,
    /// Let manual syncs through a deny window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_sync: Option<bool>,
    /// Time zone of the schedule (IANA name; default UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// AND the selectors instead of OR-ing them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub and_operator: Option<bool>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Let a sync started in an allow window finish after it closes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_overrun: Option<bool>,
}

/// A GnuPG key id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignatureKey {
    /// Key id.
    #[serde(rename = "keyID")]
    pub key_id: String,
}

/// A service account to impersonate for one destination.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct DestinationServiceAccount {
    /// Cluster URL (glob).
    pub server: String,
    /// Namespace (glob).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `namespace:name` or `name` of the service account.
    pub default_service_account: String,
}

/// `AppProject.status`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct AppProjectStatus {
    /// Issued tokens per role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwt_tokens_by_role: Option<BTreeMap<String, JwtTokens>>,
}

/// The tokens of one role.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct JwtTokens {
    /// Tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<JwtToken>>,
}
