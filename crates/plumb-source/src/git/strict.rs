//! The `strict` source-integrity walks of a cached repository ([`super::history`]), for the
//! renderer: the seal candidates, the commits to verify, and what one commit signs.

use super::history::{seal_candidates, strict_commits};
use super::signed::{SignedObject, read_commit};
use super::{GitCache, parse_oid};
use crate::error::{Error, Result};
use crate::redact::strip_url_credentials;

impl GitCache {
    /// The commits of `commit`'s history whose message carries Argo's seal trailer, with what
    /// they sign (for a `strict` check, which stops at the good ones).
    pub fn seal_candidates(&self, url: &str, commit: &str) -> Result<Vec<SignedObject>> {
        let clean = strip_url_credentials(url);
        let oid = parse_oid(commit, &clean)?;
        let repo = self.open_local(url)?;
        seal_candidates(&repo, oid).map_err(|detail| Error::GitCache { url: clean, detail })
    }

    /// The commits a `strict` check verifies: `commit` and its ancestors down to the root or
    /// to `seals` (the good seal commits), the bordering seals last. Bounded
    /// ([`MAX_STRICT_COMMITS`]).
    pub fn strict_commits(&self, url: &str, commit: &str, seals: &[String]) -> Result<Vec<String>> {
        let clean = strip_url_credentials(url);
        let oid = parse_oid(commit, &clean)?;
        let seals = seals
            .iter()
            .map(|s| parse_oid(s, &clean))
            .collect::<Result<Vec<_>>>()?;
        let repo = self.open_local(url)?;
        strict_commits(&repo, oid, &seals)
            .map(|ids| ids.iter().map(ToString::to_string).collect())
            .map_err(|detail| Error::GitCache { url: clean, detail })
    }

    /// What commit `commit` signs, and who authored it.
    pub fn signed_commit(&self, url: &str, commit: &str) -> Result<SignedObject> {
        let clean = strip_url_credentials(url);
        let oid = parse_oid(commit, &clean)?;
        let repo = self.open_local(url)?;
        read_commit(&repo, oid).map_err(|detail| Error::GitCache { url: clean, detail })
    }
}
