//! What a commit or an annotated tag signs, read from the cached bare repository: the
//! signature, the exact bytes it covers, and who made the object (Argo's author identity).

use gix::bstr::ByteSlice;

use crate::error::{Error, Result};

/// One signed (or unsigned) object: the revision as Argo names it in its messages, the
/// identity, the OpenPGP signature and the bytes it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedObject {
    /// The commit SHA, or the tag's name as the source's `targetRevision` gave it.
    pub revision: String,
    /// `Name <email>` of a commit's author (`%an <%ae>`); `Name "<email>"` of a tag's tagger
    /// (`%(taggername) "%(taggeremail)"`), as Argo prints them.
    pub identity: String,
    /// The armored signature; `None` when the object is not signed.
    pub signature: Option<Vec<u8>>,
    /// The bytes the signature covers.
    pub payload: Vec<u8>,
    /// Whether the signature is something other than OpenPGP (SSH, X.509).
    pub foreign: bool,
}

/// What the cache says `revision` names, next to the `commit` it resolved to.
pub(super) enum Named {
    /// Verify this object.
    Object(SignedObject),
    /// The cache's refs do not agree with the resolution (a tag made or moved since the last
    /// fetch): fetch, then read again.
    Stale,
}

pub(super) fn read(
    repo: &gix::Repository,
    url: &str,
    revision: &str,
    commit: gix::ObjectId,
) -> Result<Named> {
    let fail = |detail: String| Error::GitCache {
        url: url.to_owned(),
        detail,
    };
    match tag_of(repo, revision, commit) {
        Tag::Annotated(id) => read_tag(repo, revision, id)
            .map(Named::Object)
            .map_err(fail),
        Tag::None => read_commit(repo, commit).map(Named::Object).map_err(fail),
        Tag::Stale => Ok(Named::Stale),
    }
}

enum Tag {
    Annotated(gix::ObjectId),
    None,
    Stale,
}

/// Whether `revision` names an annotated tag of `commit` (Argo: `git cat-file -t` says `tag`).
/// A branch of that name wins, as it does when the revision is resolved.
fn tag_of(repo: &gix::Repository, revision: &str, commit: gix::ObjectId) -> Tag {
    let find = |name: String| repo.try_find_reference(name.as_str()).ok().flatten();
    let name = if let Some(short) = revision.strip_prefix("refs/tags/") {
        short
    } else if revision.starts_with("refs/")
        || revision == "HEAD"
        || revision.is_empty()
        || find(format!("refs/heads/{revision}")).is_some()
    {
        return Tag::None;
    } else {
        revision
    };
    let Some(r) = find(format!("refs/tags/{name}")) else {
        // Not a branch nor a tag here: a (short) SHA, or a ref the cache has not seen yet.
        let hex = revision.bytes().all(|b| b.is_ascii_hexdigit());
        return if hex { Tag::None } else { Tag::Stale };
    };
    let Some(id) = r.target().try_id().map(|i| i.to_owned()) else {
        return Tag::Stale;
    };
    let Ok(object) = repo.find_object(id) else {
        return Tag::Stale;
    };
    let kind = object.kind;
    let peeled = object
        .peel_to_kind(gix::object::Kind::Commit)
        .ok()
        .map(|c| c.id);
    if peeled != Some(commit) {
        return Tag::Stale;
    }
    if kind == gix::object::Kind::Tag {
        Tag::Annotated(id)
    } else {
        Tag::None
    }
}

fn read_tag(
    repo: &gix::Repository,
    revision: &str,
    id: gix::ObjectId,
) -> std::result::Result<SignedObject, String> {
    let object = repo
        .find_object(id)
        .map_err(|e| format!("reading tag {revision}: {e}"))?;
    let data = object.data.clone();
    let tag = gix::objs::TagRef::from_bytes(&data, repo.object_hash())
        .map_err(|e| format!("decoding tag {revision}: {e}"))?;
    let identity = match tag.tagger() {
        Ok(Some(t)) => format!("{} \"<{}>\"", t.name.to_str_lossy(), t.email.to_str_lossy()),
        _ => String::new(),
    };
    let (signature, payload, foreign) = match gix::objs::TagRefIter::signature(&data) {
        Some((sig, signed)) => (
            Some(sig.data.to_vec()),
            signed.to_bstring().to_vec(),
            sig.format != gix::objs::signature::Format::OpenPgp,
        ),
        None => (None, data.clone(), false),
    };
    Ok(SignedObject {
        revision: revision.to_owned(),
        identity,
        signature,
        payload,
        foreign,
    })
}

pub(super) fn read_commit(
    repo: &gix::Repository,
    id: gix::ObjectId,
) -> std::result::Result<SignedObject, String> {
    let object = repo
        .find_object(id)
        .map_err(|e| format!("reading commit {id}: {e}"))?;
    let data = object.data.clone();
    let commit = gix::objs::CommitRef::from_bytes(&data, repo.object_hash())
        .map_err(|e| format!("decoding commit {id}: {e}"))?;
    let author = commit
        .author()
        .map_err(|e| format!("reading the author of commit {id}: {e}"))?;
    let identity = format!(
        "{} <{}>",
        author.name.to_str_lossy(),
        author.email.to_str_lossy()
    );
    let signed = gix::objs::CommitRefIter::signature(&data, repo.object_hash())
        .map_err(|e| format!("reading the signature of commit {id}: {e}"))?;
    let (signature, payload, foreign) = match signed {
        Some((sig, covered)) => {
            let sig = sig.to_vec();
            let foreign = !sig.starts_with(b"-----BEGIN PGP SIGNATURE-----");
            (Some(sig), covered.to_bstring().to_vec(), foreign)
        }
        None => (None, data.clone(), false),
    };
    Ok(SignedObject {
        revision: id.to_string(),
        identity,
        signature,
        payload,
        foreign,
    })
}
