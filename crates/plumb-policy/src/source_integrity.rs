//! Which source-integrity check applies to a Git repository (Argo CD's
//! `util/sourceintegrity/source_integrity.go`: `lookupGit`, `findMatchingGitPolicies`,
//! `repoMatches`). The check itself (GnuPG) runs where revisions are rendered (`plumb_source`).

use plumb_model::application::{SourceIntegrity, SourceIntegrityGitPolicy, gpg_mode};

use crate::pattern::glob;

/// How deep a GnuPG check goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpgDepth {
    /// The target revision: the annotated tag it names, else the commit (`head`).
    Head,
    /// The annotated tag (if any) and every commit of the history down to the root or to
    /// signed seal commits (`strict`).
    Strict,
}

/// What a repository's revisions must satisfy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitCheck {
    /// Nothing: no policy selects the repository, or it says `none`, or has no `gpg`.
    None,
    /// Signed by one of `keys`, to `depth`.
    Gpg {
        /// How deep.
        depth: GpgDepth,
        /// The allowed key IDs, as written.
        keys: Vec<String>,
    },
    /// The configuration cannot be applied (several policies select the repository, or the
    /// mode is unknown): every revision fails with this message, so that a mistake never turns
    /// verification off (Argo's words).
    Fail(String),
}

/// The check `integrity` (an AppProject's effective source integrity) asks of `repo_url`.
pub fn git_check(integrity: Option<&SourceIntegrity>, repo_url: &str) -> GitCheck {
    let Some(git) = integrity.and_then(|si| si.git.as_ref()) else {
        return GitCheck::None;
    };
    let matching: Vec<&SourceIntegrityGitPolicy> = git
        .policies
        .iter()
        .filter(|p| policy_selects(p, repo_url))
        .collect();
    let policy = match matching.as_slice() {
        [] => return GitCheck::None,
        [one] => *one,
        many => {
            return GitCheck::Fail(format!(
                "multiple ({}) git source integrity policies found for repo URL: {repo_url}",
                many.len()
            ));
        }
    };
    let Some(gpg) = &policy.gpg else {
        return GitCheck::None;
    };
    let depth = match gpg.mode.as_str() {
        gpg_mode::NONE => return GitCheck::None,
        gpg_mode::HEAD => GpgDepth::Head,
        gpg_mode::STRICT => GpgDepth::Strict,
        other => {
            return GitCheck::Fail(format!(
                "unknown GPG mode {other:?} configured for GIT source integrity"
            ));
        }
    };
    GitCheck::Gpg {
        depth,
        keys: gpg.keys.clone(),
    }
}

/// Whether any source of `repo_urls` has a check (Argo's `HasCriteria`).
pub fn has_criteria<'a>(
    integrity: Option<&SourceIntegrity>,
    repo_urls: impl IntoIterator<Item = &'a str>,
) -> bool {
    repo_urls
        .into_iter()
        .any(|url| git_check(integrity, url) != GitCheck::None)
}

/// Argo's `findMatchingGitPolicies`: a policy selects a repository when one of its globs
/// matches and no `!glob` does, in order: a matching exclusion stops the scan and drops the
/// policy, whatever came before it.
fn policy_selects(policy: &SourceIntegrityGitPolicy, repo_url: &str) -> bool {
    let mut include = false;
    for r in &policy.repos {
        match r.url.strip_prefix('!') {
            Some(excluded) if glob(excluded, repo_url, &[]) => return false,
            Some(_) => {}
            None if glob(&r.url, repo_url, &[]) => include = true,
            None => {}
        }
    }
    include
}

#[cfg(test)]
mod tests {
    use super::*;

    fn integrity(policies: serde_json::Value) -> SourceIntegrity {
        serde_json::from_value(serde_json::json!({"git": {"policies": policies}})).unwrap()
    }

    fn policy(repos: &[&str], mode: &str, keys: &[&str]) -> serde_json::Value {
        serde_json::json!({
            "repos": repos.iter().map(|r| serde_json::json!({"url": r})).collect::<Vec<_>>(),
            "gpg": {"mode": mode, "keys": keys}
        })
    }

    #[test]
    fn no_policy_or_no_git_is_no_check() {
        assert_eq!(git_check(None, "https://x"), GitCheck::None);
        assert_eq!(
            git_check(Some(&SourceIntegrity::default()), "https://x"),
            GitCheck::None
        );
        let si = integrity(serde_json::json!([policy(
            &["https://github.com/*"],
            "head",
            &["K"]
        )]));
        assert_eq!(git_check(Some(&si), "https://gitlab.com/a"), GitCheck::None);
    }

    #[test]
    fn the_selected_policy_gives_depth_and_keys() {
        let si = integrity(serde_json::json!([
            policy(&["https://github.com/org/*"], "strict", &["AAAA"]),
            policy(&["https://gitlab.com/*"], "head", &["BBBB"]),
            policy(&["https://example.com/*"], "none", &[]),
        ]));
        assert_eq!(
            git_check(Some(&si), "https://github.com/org/repo.git"),
            GitCheck::Gpg {
                depth: GpgDepth::Strict,
                keys: vec!["AAAA".into()]
            }
        );
        // Argo's glob has no separators here: `*` crosses `/`.
        assert_eq!(
            git_check(Some(&si), "https://gitlab.com/group/sub/repo"),
            GitCheck::Gpg {
                depth: GpgDepth::Head,
                keys: vec!["BBBB".into()]
            }
        );
        assert_eq!(
            git_check(Some(&si), "https://example.com/r"),
            GitCheck::None
        );
    }

    #[test]
    fn exclusions_drop_a_policy_in_order() {
        let si = integrity(serde_json::json!([policy(
            &["https://github.com/*", "!https://github.com/public/*"],
            "head",
            &["K"]
        )]));
        assert_eq!(
            git_check(Some(&si), "https://github.com/public/r"),
            GitCheck::None
        );
        assert!(matches!(
            git_check(Some(&si), "https://github.com/private/r"),
            GitCheck::Gpg { .. }
        ));
        // An exclusion alone selects nothing.
        let only_not = integrity(serde_json::json!([policy(&["!https://a/*"], "head", &[])]));
        assert_eq!(git_check(Some(&only_not), "https://b/r"), GitCheck::None);
        // An exclusion before an inclusion still drops the policy when it matches.
        let first = integrity(serde_json::json!([policy(
            &["!https://a/*", "*"],
            "head",
            &["K"]
        )]));
        assert_eq!(git_check(Some(&first), "https://a/r"), GitCheck::None);
        assert!(matches!(
            git_check(Some(&first), "https://b/r"),
            GitCheck::Gpg { .. }
        ));
    }

    #[test]
    fn several_matching_policies_fail_closed_with_argos_message() {
        let si = integrity(serde_json::json!([
            policy(&["*"], "head", &["A"]),
            policy(&["https://github.com/*"], "none", &[]),
        ]));
        assert_eq!(
            git_check(Some(&si), "https://github.com/r"),
            GitCheck::Fail(
                "multiple (2) git source integrity policies found for repo URL: \
                 https://github.com/r"
                    .into()
            )
        );
        assert!(has_criteria(Some(&si), ["https://github.com/r"]));
    }

    #[test]
    fn an_unknown_mode_fails_and_none_or_no_gpg_checks_nothing() {
        let si = integrity(serde_json::json!([policy(&["*"], "Strict", &["A"])]));
        assert_eq!(
            git_check(Some(&si), "https://r"),
            GitCheck::Fail(
                "unknown GPG mode \"Strict\" configured for GIT source integrity".into()
            )
        );
        let no_gpg = integrity(serde_json::json!([{"repos": [{"url": "*"}]}]));
        assert_eq!(git_check(Some(&no_gpg), "https://r"), GitCheck::None);
        assert!(!has_criteria(Some(&no_gpg), ["https://r"]));
    }

    /// Hostile input: many policies, some of star-heavy globs, against a long URL: nothing
    /// matches, nothing is checked. (The matcher remembers failed states, so a star-heavy
    /// pattern stays polynomial; it is still costly for very long ones, as for `sourceRepos`.)
    #[test]
    fn many_policies_and_star_heavy_globs_select_nothing() {
        let pattern = format!("{}b", "*a".repeat(10));
        let mut many: Vec<serde_json::Value> = (0..200)
            .map(|i| policy(&[&format!("https://host-{i}/*")], "strict", &["K"]))
            .collect();
        many.push(policy(&[&pattern], "strict", &["K"]));
        let si = integrity(serde_json::Value::Array(many));
        let url = format!("https://{}", "a".repeat(200));
        assert_eq!(git_check(Some(&si), &url), GitCheck::None);
    }
}
