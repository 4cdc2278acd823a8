//! The commits a `strict` source-integrity check verifies, in the order `git rev-list` lists
//! them (Argo CD's `listRawSignatures` with `deep=true`): from the rendered commit down to the
//! root, or down to signed seal commits (a message line `Argocd-gpg-seal:`, any case), the
//! seals bordering the walk included.
//!
//! Bounded: the walk reads at most [`MAX_WALK`] commits and lists at most [`MAX_STRICT_COMMITS`];
//! a longer history is an error (fail closed) that says to seal it. Only object ids are kept.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::signed::{SignedObject, read_commit};

/// The most commits one walk reads (looking for seals, or marking what seals cover).
pub const MAX_WALK: usize = 200_000;
/// The most commits a `strict` check lists for verification.
pub const MAX_STRICT_COMMITS: usize = 10_000;

/// Argo's seal trailer (`git rev-list --grep=Argocd-gpg-seal: --regexp-ignore-case`).
const SEAL_MARK: &[u8] = b"argocd-gpg-seal:";

/// A commit queued by date, newest first, ties in the order they were queued (as git's
/// `prio_queue` keeps them).
struct Queued {
    time: i64,
    seq: u64,
    id: ObjectId,
    node: Node,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Queued {}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        self.time
            .cmp(&other.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One decoded commit: its parents and whether its message carries the seal trailer.
struct Node {
    parents: Vec<ObjectId>,
    sealed: bool,
}

fn node(repo: &gix::Repository, id: ObjectId) -> Result<(Node, i64), String> {
    let commit = repo
        .find_commit(id)
        .map_err(|e| format!("reading commit {id}: {e}"))?;
    let decoded = commit
        .decode()
        .map_err(|e| format!("decoding commit {id}: {e}"))?;
    let time = decoded
        .committer()
        .ok()
        .and_then(|c| c.time().ok())
        .map(|t| t.seconds)
        .unwrap_or_default();
    let sealed = decoded
        .message
        .to_ascii_lowercase()
        .find(SEAL_MARK)
        .is_some();
    Ok((
        Node {
            parents: decoded.parents().collect(),
            sealed,
        },
        time,
    ))
}

/// Walks the ancestors of `tips` (themselves included) in rev-list order, skipping `skip`,
/// calling `visit` on each; a parent in `skip` is handed to `border` instead.
fn walk(
    repo: &gix::Repository,
    tips: &[ObjectId],
    skip: &HashSet<ObjectId>,
    mut visit: impl FnMut(ObjectId, &Node) -> Result<(), String>,
    mut border: impl FnMut(ObjectId),
) -> Result<(), String> {
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut queue = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |queue: &mut BinaryHeap<Queued>, id: ObjectId| {
        let (node, time) = node(repo, id)?;
        seq += 1;
        queue.push(Queued {
            time,
            seq,
            id,
            node,
        });
        Ok::<(), String>(())
    };
    for tip in tips {
        if seen.insert(*tip) {
            push(&mut queue, *tip)?;
        }
    }
    while let Some(q) = queue.pop() {
        let n = &q.node;
        if seen.len() > MAX_WALK {
            return Err(format!(
                "the history holds more than {MAX_WALK} commits; sign a seal commit (a message \
                 line `Argocd-gpg-seal: ...`) to bound what strict verification reads"
            ));
        }
        visit(q.id, n)?;
        for p in &n.parents {
            if skip.contains(p) {
                border(*p);
            } else if seen.insert(*p) {
                push(&mut queue, *p)?;
            }
        }
    }
    Ok(())
}

/// The commits reachable from `tip` whose message has the seal trailer, in rev-list order,
/// with what they sign (whether they are good seals is GnuPG's to say).
pub(super) fn seal_candidates(
    repo: &gix::Repository,
    tip: ObjectId,
) -> Result<Vec<SignedObject>, String> {
    let mut found = Vec::new();
    walk(
        repo,
        &[tip],
        &HashSet::new(),
        |id, n| {
            if n.sealed {
                if found.len() >= MAX_STRICT_COMMITS {
                    return Err(format!("more than {MAX_STRICT_COMMITS} seal commits"));
                }
                found.push(id);
            }
            Ok(())
        },
        |_| {},
    )?;
    found.into_iter().map(|id| read_commit(repo, id)).collect()
}

/// The commits a strict check verifies (`git rev-list --boundary tip --not seals`): the
/// ancestors of `tip` that no seal covers, then the seals bordering them. Only `tip` when it
/// is a seal itself.
pub(super) fn strict_commits(
    repo: &gix::Repository,
    tip: ObjectId,
    seals: &[ObjectId],
) -> Result<Vec<ObjectId>, String> {
    if seals.contains(&tip) {
        return Ok(vec![tip]);
    }
    let mut covered = HashSet::new();
    if !seals.is_empty() {
        walk(
            repo,
            seals,
            &HashSet::new(),
            |id, _| {
                covered.insert(id);
                Ok(())
            },
            |_| {},
        )?;
    }
    let mut listed = Vec::new();
    let mut boundary = Vec::new();
    let mut bordered = HashSet::new();
    let too_many = || {
        format!(
            "strict verification of {tip} would verify more than {MAX_STRICT_COMMITS} commits; \
             sign a seal commit (a message line `Argocd-gpg-seal: ...`) to bound it"
        )
    };
    walk(
        repo,
        &[tip],
        &covered,
        |id, _| {
            if listed.len() >= MAX_STRICT_COMMITS {
                return Err(too_many());
            }
            listed.push(id);
            Ok(())
        },
        |id| {
            if bordered.insert(id) {
                boundary.push(id);
            }
        },
    )?;
    listed.extend(boundary);
    if listed.len() > MAX_STRICT_COMMITS {
        return Err(too_many());
    }
    Ok(listed)
}
