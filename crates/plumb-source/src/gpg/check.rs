//! Signed objects verified as Argo CD's source-integrity GnuPG check verifies them
//! (`sourceintegrity.verify`): each object's verdict, Argo's problem text when the signature is
//! not good or its key is not one the policy allows, and the problems of a whole listing
//! (`describeProblems`: `head` lists the tag or the commit, `strict` the history too).

use std::path::Path;

use super::key_id::key_allowed;
use super::keyring::{GpgKeys, first_error};
use super::run::gpg;
use super::status::{self, Status, Verdict};
use super::verdicts;
use crate::git::SignedObject;

/// Verifies `object` against the configured `keys` and the project's `allowed` key IDs:
/// `Ok(None)` when it is signed by an allowed key, `Ok(Some(problem))` with Argo's message when
/// it is not, `Err` when it cannot be verified at all (the keys are broken, gpg failed).
pub fn verify_revision(
    keys: &GpgKeys,
    allowed: &[String],
    object: &SignedObject,
) -> Result<Option<String>, String> {
    let status = status_of(keys, object)?;
    Ok(problem(object, &status, allowed))
}

/// Argo's `describeProblems` over the objects a check lists (an annotated tag first, then
/// commits): the problems of the first ten failing ones, a signing key's problems told once
/// per key for commits (unsigned commits and tags each told). Reading stops at the tenth, so
/// a long failing history costs no more than that.
pub fn describe_problems(
    keys: &GpgKeys,
    allowed: &[String],
    objects: impl IntoIterator<Item = Result<SignedObject, String>>,
) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    let mut reported = std::collections::HashSet::new();
    for object in objects {
        let object = object?;
        let status = status_of(keys, &object)?;
        let Some(p) = problem(&object, &status, allowed) else {
            continue;
        };
        if !status.key_id.is_empty()
            && is_commit_sha(&object.revision)
            && !reported.insert(status.key_id.clone())
        {
            continue;
        }
        problems.push(p);
        if problems.len() >= MAX_PROBLEMS {
            break;
        }
    }
    Ok(problems)
}

/// The most problems one check reports (Argo: not to flood the UI and logs).
pub const MAX_PROBLEMS: usize = 10;

/// Whether `object` is a good seal: signed, and the signature good by any configured key (Git's
/// `%G?` is `G`); its key need not be one the policy allows.
pub fn is_good_seal(keys: &GpgKeys, object: &SignedObject) -> Result<bool, String> {
    Ok(status_of(keys, object)?.verdict == Verdict::Good)
}

/// Git's `IsCommitSHA`: 40 hex digits.
fn is_commit_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// GnuPG's verdict on `object`, remembered for these keys.
fn status_of(keys: &GpgKeys, object: &SignedObject) -> Result<Status, String> {
    let sig = match &object.signature {
        None => {
            return Ok(Status {
                verdict: Verdict::Unsigned,
                key_id: String::new(),
                primary_key_id: None,
            });
        }
        Some(_) if object.foreign => {
            return Err(format!(
                "revision {} carries a signature that is not OpenPGP; only GnuPG signatures \
                 can be verified",
                object.revision
            ));
        }
        Some(sig) => sig,
    };
    let key = verdicts::key(sig, &object.payload);
    if let Some(known) = keys.verdicts().get(&key) {
        return Ok(known);
    }
    let home = keys.home()?;
    let status = run_verify(home.path(), sig, &object.payload)?;
    keys.verdicts().put(key, status.clone());
    Ok(status)
}

/// `gpg --verify` of the detached `signature` over `payload` (given on standard input).
fn run_verify(home: &Path, signature: &[u8], payload: &[u8]) -> Result<Status, String> {
    let dir = tempfile::Builder::new()
        .prefix("plumb-gpg-verify-")
        .tempdir()
        .map_err(|e| format!("creating a scratch directory: {e}"))?;
    let sig = dir.path().join("signature.asc");
    std::fs::write(&sig, signature).map_err(|e| format!("writing the signature: {e}"))?;
    let sig = sig.to_string_lossy().into_owned();
    let ran = gpg(home, &["--status-fd", "1", "--verify", &sig, "-"], payload)?;
    status::parse(&ran.stdout).ok_or_else(|| {
        format!(
            "gpg could not verify the signature: {}",
            first_error(&ran.stderr)
        )
    })
}

/// Argo's `gpgProblemMessage`; `None` when there is no problem.
fn problem(object: &SignedObject, status: &Status, allowed: &[String]) -> Option<String> {
    if status.verdict != Verdict::Good {
        return Some(format!(
            "Failed verifying revision {} by '{}': {} (key_id={})",
            object.revision,
            object.identity,
            status.verdict.text(),
            status.key_id
        ));
    }
    if key_allowed(allowed, &status.key_id, status.primary_key_id.as_deref()) {
        return None;
    }
    Some(format!(
        "Failed verifying revision {} by '{}': signed with unallowed key (key_id={})",
        object.revision, object.identity, status.key_id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> SignedObject {
        SignedObject {
            revision: "a".repeat(40),
            identity: "Dev <dev@example.com>".into(),
            signature: None,
            payload: Vec::new(),
            foreign: false,
        }
    }

    #[test]
    fn problems_read_as_argos() {
        let o = object();
        let unsigned = Status {
            verdict: Verdict::Unsigned,
            key_id: String::new(),
            primary_key_id: None,
        };
        assert_eq!(
            problem(&o, &unsigned, &[]).unwrap(),
            format!(
                "Failed verifying revision {} by 'Dev <dev@example.com>': unsigned (key_id=)",
                "a".repeat(40)
            )
        );
        let good = Status {
            verdict: Verdict::Good,
            key_id: "AAAABBBBCCCCDDDD".into(),
            primary_key_id: Some("AAAABBBBCCCCDDDD".into()),
        };
        assert!(problem(&o, &good, &["AAAABBBBCCCCDDDD".into()]).is_none());
        assert!(
            problem(&o, &good, &["1111BBBBCCCCDDDD".into()])
                .unwrap()
                .ends_with("signed with unallowed key (key_id=AAAABBBBCCCCDDDD)")
        );
        let expired = Status {
            verdict: Verdict::ExpiredKey,
            ..good
        };
        assert!(
            problem(&o, &expired, &["AAAABBBBCCCCDDDD".into()])
                .unwrap()
                .ends_with("signed with expired key (key_id=AAAABBBBCCCCDDDD)")
        );
    }
}
