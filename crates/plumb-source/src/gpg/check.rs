//! One revision verified as Argo CD's `head` policy verifies it (`sourceintegrity.verify` with
//! `LsSignatures(revision, deep=false)`): the annotated tag the revision names, else the commit
//! it resolved to; then Argo's problem text when the signature is not good or its key is not
//! one the project allows.

use std::path::Path;

use super::key_id::key_allowed;
use super::keyring::{GpgKeys, first_error};
use super::run::gpg;
use super::status::{self, Status, Verdict};
use crate::git::SignedObject;

/// Verifies `object` against the configured `keys` and the project's `allowed` key IDs:
/// `Ok(None)` when it is signed by an allowed key, `Ok(Some(problem))` with Argo's message when
/// it is not, `Err` when it cannot be verified at all (the keys are broken, gpg failed).
pub fn verify_revision(
    keys: &GpgKeys,
    allowed: &[String],
    object: &SignedObject,
) -> Result<Option<String>, String> {
    let status = match &object.signature {
        None => Status {
            verdict: Verdict::Unsigned,
            key_id: String::new(),
            primary_key_id: None,
        },
        Some(_) if object.foreign => {
            return Err(format!(
                "revision {} carries a signature that is not OpenPGP; only GnuPG signatures \
                 can be verified",
                object.revision
            ));
        }
        Some(sig) => {
            let home = keys.home()?;
            run_verify(home.path(), sig, &object.payload)?
        }
    };
    Ok(problem(object, &status, allowed))
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
