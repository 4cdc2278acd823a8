//! What Argo CD's `RevisionMetadata` tells about a commit: author, date, tags, message and
//! whether it carries a signature, read from the cached bare repository.

use gix::bstr::ByteSlice;

use crate::error::{Error, Result};

/// A commit as Argo CD's `RevisionMetadata` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitMetadata {
    /// The full commit SHA.
    pub commit: String,
    /// `Name <email>` of the author (Argo's `%an <%ae>`).
    pub author: String,
    /// The author date as seconds since the Unix epoch.
    pub date_seconds: i64,
    /// The full commit message, without the trailing newline.
    pub message: String,
    /// Tags (short names, sorted) whose target, peeled, is this commit.
    pub tags: Vec<String>,
    /// Whether the commit carries a GPG/SSH signature (`gpgsig` header); not verified.
    pub signed: bool,
}

pub(super) fn read(
    repo: &gix::Repository,
    oid: gix::ObjectId,
    url: &str,
) -> Result<CommitMetadata> {
    let fail = |detail: String| Error::GitCache {
        url: url.to_owned(),
        detail,
    };
    let commit = repo
        .find_commit(oid)
        .map_err(|e| fail(format!("reading commit {oid}: {e}")))?;
    let decoded = commit
        .decode()
        .map_err(|e| fail(format!("decoding commit {oid}: {e}")))?;
    let author = decoded
        .author()
        .map_err(|e| fail(format!("reading the author of commit {oid}: {e}")))?;
    let date_seconds = author
        .time()
        .map_err(|e| fail(format!("reading the date of commit {oid}: {e}")))?
        .seconds;
    let author_text = format!(
        "{} <{}>",
        author.name.to_str_lossy(),
        author.email.to_str_lossy()
    );
    let message = decoded
        .message
        .to_str_lossy()
        .trim_end_matches('\n')
        .to_string();
    let signed = decoded.extra_headers().pgp_signature().is_some();
    let mut tags = Vec::new();
    let refs = repo
        .references()
        .map_err(|e| fail(format!("reading tags: {e}")))?;
    for r in refs
        .tags()
        .map_err(|e| fail(format!("reading tags: {e}")))?
        .flatten()
    {
        let mut r = r;
        let short = r.name().shorten().to_str_lossy().to_string();
        if r.peel_to_id().is_ok_and(|id| id.detach() == oid) {
            tags.push(short);
        }
    }
    tags.sort();
    Ok(CommitMetadata {
        commit: oid.to_string(),
        author: author_text,
        date_seconds,
        message,
        tags,
        signed,
    })
}
