//! Repository URLs made comparable, as Argo CD's `util/git.NormalizeGitURL` does before matching
//! `sourceRepos`: lower case, surrounding spaces and a trailing `.git` dropped, and scp-like SSH
//! addresses (`git@host:org/repo`) written as `git@host/org/repo`, the form an `ssh://` URL
//! takes once its scheme is dropped.
//!
//! Argo then re-serialises the URL with Go's `net/url` (which leaves ordinary URLs unchanged)
//! and gives up on URLs Go cannot parse; Plumb skips that step and compares the text.

/// The normalized form of a repository URL or `sourceRepos` pattern.
pub fn normalize(repo: &str) -> String {
    let mut url = repo.trim().to_lowercase();
    if is_ssh(&url) && !url.starts_with("ssh://") {
        // The colon of `host:path` would read as a port.
        url = format!("ssh://{}", url.replacen(':', "/", 1));
    }
    if let Some(stripped) = url.strip_suffix(".git") {
        url.truncate(stripped.len());
    }
    match url.strip_prefix("ssh://") {
        Some(rest) => rest.to_string(),
        None => url,
    }
}

// Argo's `^(ssh://)?([^/:]*?)@[^@]+$`: a user part without `/` or `:`, one `@`.
fn is_ssh(url: &str) -> bool {
    let rest = url.strip_prefix("ssh://").unwrap_or(url);
    match rest.split_once('@') {
        Some((user, host)) => !user.contains(['/', ':']) && !host.is_empty() && !host.contains('@'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_urls_lose_case_and_dot_git() {
        assert_eq!(
            normalize(" https://GitHub.com/ArgoProj/argocd-example-apps.git "),
            "https://github.com/argoproj/argocd-example-apps"
        );
        assert_eq!(
            normalize("https://git.acme.internal/apps/payments"),
            "https://git.acme.internal/apps/payments"
        );
    }

    #[test]
    fn ssh_forms_agree() {
        let scp = normalize("git@github.com:argoproj/argocd-example-apps.git");
        assert_eq!(scp, "git@github.com/argoproj/argocd-example-apps");
        assert_eq!(
            normalize("ssh://git@github.com/argoproj/argocd-example-apps.git"),
            scp
        );
        assert_eq!(
            normalize("ssh://git@git.acme.internal:2222/apps/payments.git"),
            "git@git.acme.internal:2222/apps/payments"
        );
    }

    #[test]
    fn patterns_normalize_like_urls() {
        assert_eq!(normalize("*"), "*");
        assert_eq!(
            normalize("git@github.com:ArgoProj/*"),
            "git@github.com/argoproj/*"
        );
        // A user part with a colon is credentials in an https URL, not scp syntax.
        assert_eq!(
            normalize("https://user:token@git.acme.internal/apps/payments.git"),
            "https://user:token@git.acme.internal/apps/payments"
        );
    }
}
