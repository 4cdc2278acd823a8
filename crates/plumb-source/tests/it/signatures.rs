//! GnuPG verification of the revisions a render renders, with keys made by the real `gpg` and
//! commits and tags signed by the real `git`: each of Argo's verdicts, key IDs, annotated tags,
//! and broken keyrings refused with an error naming the key.

use std::collections::BTreeMap;

use plumb_source::Renderer;
use plumb_testenv::git::GitRepo;
use plumb_testenv::gpg::GpgKey;

use crate::support::{chain, renderer, request, source};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: signed\n";
const IDENTITY: &str = "Plumb Test <test@plumb.invalid>";

fn keys(of: &[&GpgKey]) -> BTreeMap<String, String> {
    of.iter()
        .map(|k| (k.key_id().to_string(), k.public_key()))
        .collect()
}

/// The integrity messages of a render of `revision` with `allowed` keys.
fn integrity(r: &Renderer, repo: &GitRepo, revision: &str, allowed: &[&str]) -> Vec<String> {
    let mut req = request(vec![source(&repo.url(), "app", revision)]);
    req.signature_keys = Some(allowed.iter().map(|s| s.to_string()).collect());
    r.render(&req).map_err(|e| chain(&e)).unwrap().integrity
}

#[test]
fn each_verdict_reads_as_argos_message() {
    let good = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let other = GpgKey::generate("Someone Else <else@plumb.invalid>");
    let expired = GpgKey::expired("Old Bot <old@plumb.invalid>");
    let revoked = GpgKey::generate("Gone Bot <gone@plumb.invalid>");
    let stranger = GpgKey::generate("Stranger <x@plumb.invalid>");
    let repo = GitRepo::new();
    let signed = good.commit(&repo, &[("app/cm.yaml", CM)], "signed");
    repo.branch("good");
    // Signed while valid, revoked since.
    repo.git(&["checkout", "-q", "-b", "revoked"]);
    let by_revoked = revoked.commit(&repo, &[("app/w.yaml", CM)], "revoked");
    revoked.revoke();
    repo.checkout("good");
    let (r, _dir) = renderer();
    r.set_gpg_keys(keys(&[&good, &other, &expired, &revoked]));
    let allowed = [good.key_id(), expired.key_id(), revoked.key_id()];

    assert_eq!(
        integrity(&r, &repo, "revoked", &allowed),
        [format!(
            "GIT/GPG: Failed verifying revision {by_revoked} by '{IDENTITY}': signed with revoked key (key_id={})",
            revoked.key_id()
        )]
    );
    assert!(integrity(&r, &repo, "good", &allowed).is_empty());
    // The fingerprint allows it too; a lower-case ID does not (Argo compares as written).
    assert!(integrity(&r, &repo, &signed, &[good.fingerprint()]).is_empty());
    let lower = good.key_id().to_lowercase();
    assert_eq!(
        integrity(&r, &repo, &signed, &[&lower]),
        [format!(
            "GIT/GPG: Failed verifying revision {signed} by '{IDENTITY}': signed with unallowed key (key_id={})",
            good.key_id()
        )]
    );

    type Make<'a> = Box<dyn Fn() -> String + 'a>;
    let cases: [(&str, Make, String); 4] = [
        (
            "unsigned",
            Box::new(|| repo.commit(&[("app/x.yaml", CM)], "unsigned")),
            "unsigned (key_id=)".into(),
        ),
        (
            "other",
            Box::new(|| other.commit(&repo, &[("app/y.yaml", CM)], "other")),
            format!("signed with unallowed key (key_id={})", other.key_id()),
        ),
        (
            "expired",
            Box::new(|| expired.commit(&repo, &[("app/z.yaml", CM)], "expired")),
            format!("signed with expired key (key_id={})", expired.key_id()),
        ),
        (
            "stranger",
            Box::new(|| stranger.commit(&repo, &[("app/v.yaml", CM)], "stranger")),
            format!(
                "signed with key not in keyring (key_id={})",
                stranger.key_id()
            ),
        ),
    ];
    for (branch, make, verdict) in cases {
        repo.checkout("good");
        repo.git(&["checkout", "-q", "-b", branch]);
        let sha = make();
        assert_eq!(
            integrity(&r, &repo, branch, &allowed),
            [format!(
                "GIT/GPG: Failed verifying revision {sha} by '{IDENTITY}': {verdict}"
            )],
            "{branch}"
        );
    }
}

#[test]
fn an_annotated_tag_is_verified_instead_of_its_commit() {
    let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let (r, _dir) = renderer();
    r.set_gpg_keys(keys(&[&key]));
    let repo = GitRepo::new();
    // The commit is unsigned; the signed tag is what Argo verifies.
    repo.commit(&[("app/cm.yaml", CM)], "unsigned commit");
    key.tag(&repo, "v1.0.0", "release");
    assert!(integrity(&r, &repo, "v1.0.0", &[key.key_id()]).is_empty());
    // An unsigned annotated tag of a signed commit fails, named as Argo names it.
    key.commit(&repo, &[("app/b.yaml", CM)], "signed commit");
    repo.annotated_tag("v2.0.0", "unsigned release");
    assert_eq!(
        integrity(&r, &repo, "v2.0.0", &[key.key_id()]),
        ["GIT/GPG: Failed verifying revision v2.0.0 by 'Plumb Test \"<test@plumb.invalid>\"': unsigned (key_id=)".to_string()]
    );
    // Without signatureKeys nothing is verified.
    let req = request(vec![source(&repo.url(), "app", "v2.0.0")]);
    assert!(r.render(&req).unwrap().integrity.is_empty());
}

#[test]
fn broken_keys_fail_every_verification_naming_the_entry() {
    let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let repo = GitRepo::new();
    key.commit(&repo, &[("app/cm.yaml", CM)], "signed");
    let armored = key.public_key();
    let huge = format!(
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n{}",
        "QUFB\n".repeat(60_000) // 300 kB: over the 256 KiB limit
    );
    let cases = [
        (key.key_id().to_string(), "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot base64 at all!\n-----END PGP PUBLIC KEY BLOCK-----\n".to_string(), "gpg"),
        (key.key_id().to_string(), huge, "more than the limit"),
        ("DEADBEEF\nDEADBEEF".to_string(), armored.clone(), "DEADBEEF\\nDEADBEEF: not a valid GnuPG key ID"),
        ("1111222233334444".to_string(), armored.clone(), "had different key ID"),
        (key.key_id().to_string(), "hello".to_string(), "not an ASCII-armored public key"),
    ];
    for (name, data, expected) in cases {
        let (r, _dir) = renderer();
        r.set_gpg_keys(BTreeMap::from([(name.clone(), data)]));
        let mut req = request(vec![source(&repo.url(), "app", "main")]);
        req.signature_keys = Some(vec![key.key_id().to_string()]);
        let err = chain(&r.render(&req).unwrap_err());
        assert!(err.contains("argocd-gpg-keys-cm key"), "{name:?}: {err}");
        assert!(err.contains(expected), "{name:?}: {err}");
        assert!(err.len() < 2000, "bounded: {err}");
    }
}
