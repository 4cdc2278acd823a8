//! Matching a `targetRevision` against the refs a remote advertises.
//!
//! Argo CD's order (`util/git/client.go: LsRemote`): a full SHA is taken as is; `HEAD` is the
//! remote's HEAD; `refs/…` must match a ref exactly; any other name matches a branch first, then a
//! tag (annotated tags are peeled to their commit). Anything else that looks like hex is tried as
//! a short SHA against the fetched objects.

/// One ref advertised by a remote (`git ls-remote`), with annotated tags already peeled.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RemoteRef {
    /// Full name (`HEAD`, `refs/heads/main`, `refs/tags/v1`).
    pub name: String,
    /// The commit (or other object) the ref ultimately points to, as hex.
    pub target: String,
    /// For a symbolic ref (`HEAD`), the ref it points to.
    pub symref_target: Option<String>,
}

/// How a revision resolves against a remote's refs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Match {
    /// A ref names it; the commit is known from the listing.
    Ref { name: String, commit: String },
    /// A full 40-hex SHA.
    FullSha(String),
    /// Hex that may be an abbreviated SHA; needs the objects to decide.
    MaybeShortSha(String),
    /// Nothing could name it.
    None,
}

pub(crate) fn is_full_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_hex_prefix(s: &str) -> bool {
    (4..40).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub(crate) fn match_revision(revision: &str, refs: &[RemoteRef]) -> Match {
    let revision = revision.trim();
    if is_full_sha(revision) {
        return Match::FullSha(revision.to_ascii_lowercase());
    }
    let find = |name: &str| refs.iter().find(|r| r.name == name);
    let candidates: Vec<String> = if revision.is_empty() || revision == "HEAD" {
        vec!["HEAD".to_owned()]
    } else if revision.starts_with("refs/") {
        vec![revision.to_owned()]
    } else {
        vec![
            format!("refs/heads/{revision}"),
            format!("refs/tags/{revision}"),
        ]
    };
    for name in candidates {
        if let Some(r) = find(&name) {
            return Match::Ref {
                name: r.name.clone(),
                commit: r.target.clone(),
            };
        }
    }
    if is_hex_prefix(revision) {
        return Match::MaybeShortSha(revision.to_ascii_lowercase());
    }
    Match::None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(name: &str, target: &str) -> RemoteRef {
        RemoteRef {
            name: name.into(),
            target: target.repeat(40),
            symref_target: None,
        }
    }

    #[test]
    fn branch_wins_over_tag_and_refs_must_match_exactly() {
        let refs = [
            r("HEAD", "a"),
            r("refs/heads/main", "a"),
            r("refs/heads/v1", "b"),
            r("refs/tags/v1", "c"),
            r("refs/tags/v2", "d"),
            r("refs/pull/7/head", "e"),
        ];
        let commit = |m: Match| match m {
            Match::Ref { commit, .. } => commit.chars().next().unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(commit(match_revision("HEAD", &refs)), 'a');
        assert_eq!(commit(match_revision("", &refs)), 'a');
        assert_eq!(commit(match_revision("v1", &refs)), 'b');
        assert_eq!(commit(match_revision("v2", &refs)), 'd');
        assert_eq!(commit(match_revision("refs/tags/v1", &refs)), 'c');
        assert_eq!(commit(match_revision("refs/pull/7/head", &refs)), 'e');
        assert_eq!(match_revision("refs/heads/nope", &refs), Match::None);
        assert_eq!(match_revision("feature/x", &refs), Match::None);
    }

    #[test]
    fn shas_full_and_short() {
        let full = "0123456789abcdef0123456789ABCDEF01234567";
        assert_eq!(
            match_revision(full, &[]),
            Match::FullSha(full.to_ascii_lowercase())
        );
        assert_eq!(
            match_revision("abc1234", &[]),
            Match::MaybeShortSha("abc1234".into())
        );
        assert_eq!(match_revision("abc", &[]), Match::None);
    }
}
