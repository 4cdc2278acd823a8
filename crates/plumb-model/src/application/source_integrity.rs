//! An AppProject's `spec.sourceIntegrity` (Argo CD 3.6, `pkg/apis/application/v1alpha1/
//! source_integrity.go`): per-repository Git policies that require GnuPG-signed revisions, and
//! [`AppProject::effective_source_integrity`], which folds the legacy `signatureKeys` in as Argo's
//! `EffectiveSourceIntegrity` does). Which policy applies to a repository, and what it checks, is
//! decided elsewhere (`plumb_policy::source_integrity`, `plumb_source`).

use serde::{Deserialize, Serialize};

/// The name of the Git GnuPG check, the prefix of its problems (`SourceIntegrityMethodNameGitGPG`).
pub const GIT_GPG_CHECK: &str = "GIT/GPG";

/// `spec.sourceIntegrity`: constraints sources must meet before they are used.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceIntegrity {
    /// Policies for Git sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<SourceIntegrityGit>,
}

/// `sourceIntegrity.git`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceIntegrityGit {
    /// The policies, each for the repositories its `repos` select.
    #[serde(default)]
    pub policies: Vec<SourceIntegrityGitPolicy>,
}

/// One Git policy: which repositories, and what their revisions must satisfy.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceIntegrityGitPolicy {
    /// Repository URL globs the policy applies to (`!glob` excludes).
    #[serde(default)]
    pub repos: Vec<SourceIntegrityGitPolicyRepo>,
    /// GnuPG signature verification of commits and tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpg: Option<SourceIntegrityGitPolicyGpg>,
}

/// One repository selector of a policy.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceIntegrityGitPolicyRepo {
    /// URL glob; a leading `!` excludes the repositories it matches.
    #[serde(default)]
    pub url: String,
}

/// `gpg` of a Git policy: the mode and the keys allowed to sign.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourceIntegrityGitPolicyGpg {
    /// `none` (no verification), `head` (the target revision: an annotated tag, or a commit) or
    /// `strict` (the tag, and every commit of the history down to the root or to signed seal
    /// commits).
    #[serde(default)]
    pub mode: String,
    /// Key IDs (16 hex digits or 40-digit fingerprints) allowed to sign.
    #[serde(default)]
    pub keys: Vec<String>,
}

/// The `mode` values Argo knows.
pub mod gpg_mode {
    /// No verification.
    pub const NONE: &str = "none";
    /// The target revision only.
    pub const HEAD: &str = "head";
    /// The target revision and its whole history (down to seal commits).
    pub const STRICT: &str = "strict";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::application::{AppProject, AppProjectSpec, SignatureKey};

    fn integrity(repo: &str, mode: &str, keys: &[&str]) -> SourceIntegrity {
        SourceIntegrity {
            git: Some(SourceIntegrityGit {
                policies: vec![SourceIntegrityGitPolicy {
                    repos: vec![SourceIntegrityGitPolicyRepo { url: repo.into() }],
                    gpg: Some(SourceIntegrityGitPolicyGpg {
                        mode: mode.into(),
                        keys: keys.iter().map(|k| k.to_string()).collect(),
                    }),
                }],
            }),
        }
    }

    fn legacy(keys: &[&str]) -> Option<Vec<SignatureKey>> {
        Some(
            keys.iter()
                .map(|k| SignatureKey {
                    key_id: k.to_string(),
                })
                .collect(),
        )
    }

    fn effective(spec: AppProjectSpec) -> Option<SourceIntegrity> {
        let project: AppProject = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "sut"}, "spec": spec
        }))
        .unwrap();
        project.effective_source_integrity()
    }

    /// Argo's `TestAppProject_EffectiveSourceIntegrity`, case by case.
    #[test]
    fn effective_source_integrity_merges_legacy_keys_as_argo() {
        assert_eq!(effective(AppProjectSpec::default()), None, "no old, no new");
        let strict = integrity("https://github.com/*", gpg_mode::STRICT, &["FOO"]);
        assert_eq!(
            effective(AppProjectSpec {
                source_integrity: Some(strict.clone()),
                ..Default::default()
            }),
            Some(strict),
            "no old, new unchanged"
        );
        assert_eq!(
            effective(AppProjectSpec {
                signature_keys: legacy(&["LEGACY", "KEYS", "FOUND"]),
                ..Default::default()
            }),
            Some(integrity("*", gpg_mode::HEAD, &["LEGACY", "KEYS", "FOUND"])),
            "old, no new"
        );
        let replaced = integrity("https://github.com/*", gpg_mode::STRICT, &["NEW_KEY"]);
        assert_eq!(
            effective(AppProjectSpec {
                signature_keys: legacy(&["LEGACY", "KEYS", "FOUND"]),
                source_integrity: Some(replaced.clone()),
                ..Default::default()
            }),
            Some(replaced),
            "old ignored, replaced"
        );
        assert_eq!(
            effective(AppProjectSpec {
                signature_keys: legacy(&["LEGACY_KEY"]),
                source_integrity: Some(SourceIntegrity::default()),
                ..Default::default()
            }),
            Some(integrity("*", gpg_mode::HEAD, &["LEGACY_KEY"])),
            "old, not using Git checks"
        );
        // An empty legacy list is no legacy list.
        assert_eq!(
            effective(AppProjectSpec {
                signature_keys: Some(Vec::new()),
                ..Default::default()
            }),
            None
        );
    }

    #[test]
    fn reads_and_writes_argos_json() {
        let json = serde_json::json!({"git": {"policies": [
            {"repos": [{"url": "https://github.com/org/*"}, {"url": "!https://github.com/org/x"}],
             "gpg": {"mode": "strict", "keys": ["4AEE18F83AFDEB23"]}}
        ]}});
        let si: SourceIntegrity = serde_json::from_value(json.clone()).unwrap();
        let git = si.git.as_ref().unwrap();
        assert_eq!(git.policies[0].repos[1].url, "!https://github.com/org/x");
        assert_eq!(git.policies[0].gpg.as_ref().unwrap().mode, "strict");
        assert_eq!(serde_json::to_value(&si).unwrap(), json);
    }
}
