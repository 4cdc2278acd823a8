//! GnuPG verification of the revisions a render renders, with keys made by the real `gpg` and
//! commits and tags signed by the real `git`: each of Argo's verdicts, key IDs, annotated tags,
//! and broken keyrings refused with an error naming the key.

use std::collections::BTreeMap;

use plumb_model::application::SourceIntegrity;
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

/// The legacy `signatureKeys` as Argo folds them in: a `head` policy for every repository.
fn legacy(allowed: &[&str]) -> SourceIntegrity {
    policies(
        serde_json::json!([{"repos": [{"url": "*"}], "gpg": {"mode": "head", "keys": allowed}}]),
    )
}

fn policies(p: serde_json::Value) -> SourceIntegrity {
    serde_json::from_value(serde_json::json!({"git": {"policies": p}})).unwrap()
}

/// The integrity messages of a render of `revision` with `allowed` keys.
fn integrity(r: &Renderer, repo: &GitRepo, revision: &str, allowed: &[&str]) -> Vec<String> {
    let mut req = request(vec![source(&repo.url(), "app", revision)]);
    req.source_integrity = Some(legacy(allowed));
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
        req.source_integrity = Some(legacy(&[key.key_id()]));
        let err = chain(&r.render(&req).unwrap_err());
        assert!(err.contains("argocd-gpg-keys-cm key"), "{name:?}: {err}");
        assert!(err.contains(expected), "{name:?}: {err}");
        assert!(err.len() < 2000, "bounded: {err}");
    }
}

/// A policy of `mode` with `allowed` keys for the repositories `url` selects.
fn policy(url: &str, mode: &str, allowed: &[&str]) -> serde_json::Value {
    serde_json::json!({"repos": [{"url": url}], "gpg": {"mode": mode, "keys": allowed}})
}

fn integrity_with(
    r: &Renderer,
    repo: &GitRepo,
    revision: &str,
    si: SourceIntegrity,
) -> Vec<String> {
    let mut req = request(vec![source(&repo.url(), "app", revision)]);
    req.source_integrity = Some(si);
    r.render(&req).map_err(|e| chain(&e)).unwrap().integrity
}

fn problem(sha: &str, verdict: &str) -> String {
    format!("GIT/GPG: Failed verifying revision {sha} by '{IDENTITY}': {verdict}")
}

/// `strict`: every commit of the history, down to the root or to good seal commits (the
/// bordering seals verified too); `head`: the tip only.
#[test]
fn strict_verifies_the_history_down_to_good_seals() {
    let good = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let sealer = GpgKey::generate("Sealer <sealer@plumb.invalid>");
    let (r, _dir) = renderer();
    r.set_gpg_keys(keys(&[&good, &sealer]));
    let head = || policies(serde_json::json!([policy("*", "head", &[good.key_id()])]));
    let strict = || policies(serde_json::json!([policy("*", "strict", &[good.key_id()])]));
    let repo = GitRepo::new();
    let root = repo.commit(&[("app/cm.yaml", CM)], "unsigned root");
    good.commit(&repo, &[("app/a.yaml", CM)], "signed tip");
    // A signed tip over an unsigned parent passes head and fails strict.
    assert!(integrity_with(&r, &repo, "main", head()).is_empty());
    assert_eq!(
        integrity_with(&r, &repo, "main", strict()),
        [problem(&root, "unsigned (key_id=)")]
    );
    // A seal signed by an allowed key stops the walk: what is above it is all signed.
    good.commit(
        &repo,
        &[("app/b.yaml", CM)],
        "seal\n\nArgocd-gpg-seal: reviewed",
    );
    good.commit(&repo, &[("app/c.yaml", CM)], "after the seal");
    assert!(integrity_with(&r, &repo, "main", strict()).is_empty());
    // A seal signed by a key of the keyring that the policy does not list still stops the
    // walk, and is reported itself (Argo's note on seals).
    let sealed = sealer.commit(&repo, &[("app/d.yaml", CM)], "seal\n\nargocd-GPG-seal: x");
    let tip = good.commit(&repo, &[("app/e.yaml", CM)], "after");
    let unallowed = format!("signed with unallowed key (key_id={})", sealer.key_id());
    assert_eq!(
        integrity_with(&r, &repo, "main", strict()),
        [problem(&sealed, &unallowed)]
    );
    // On a seal itself, only the seal is verified.
    assert_eq!(
        integrity_with(&r, &repo, &sealed, strict()),
        [problem(&sealed, &unallowed)]
    );
    // An unsigned commit with the trailer is no seal: the walk goes past it.
    let fake = repo.commit(
        &[("app/f.yaml", CM)],
        "not a seal\n\nArgocd-gpg-seal: forged",
    );
    good.commit(&repo, &[("app/g.yaml", CM)], "tip");
    assert_eq!(
        integrity_with(&r, &repo, "main", strict()),
        [format!(
            "{}\n{}",
            problem(&fake, "unsigned (key_id=)"),
            problem(&sealed, &unallowed)
        )]
    );
    // The tip it was sealed under is fine on its own (head).
    assert!(integrity_with(&r, &repo, &tip, head()).is_empty());
}

/// Problems are told once per signing key for commits, ten at most, as Argo's
/// `describeProblems`.
#[test]
fn strict_problems_are_squashed_by_key_and_capped_at_ten() {
    let good = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let other = GpgKey::generate("Someone Else <else@plumb.invalid>");
    let (r, _dir) = renderer();
    r.set_gpg_keys(keys(&[&good, &other]));
    let strict = || policies(serde_json::json!([policy("*", "strict", &[good.key_id()])]));
    let repo = GitRepo::new();
    let mut unsigned = Vec::new();
    for i in 0..12 {
        unsigned.push(repo.commit(&[(format!("app/u{i}.yaml").as_str(), CM)], "unsigned"));
    }
    let mut by_other = Vec::new();
    for i in 0..3 {
        by_other.push(other.commit(&repo, &[(format!("app/o{i}.yaml").as_str(), CM)], "other"));
    }
    good.commit(&repo, &[("app/tip.yaml", CM)], "tip");
    let found = integrity_with(&r, &repo, "main", strict());
    assert_eq!(found.len(), 1, "one condition per source");
    let lines: Vec<&str> = found[0].lines().collect();
    assert_eq!(lines.len(), 10, "{found:?}");
    // Newest first: the three commits of the other key told once, then unsigned ones.
    assert_eq!(
        lines[0],
        problem(
            &by_other[2],
            &format!("signed with unallowed key (key_id={})", other.key_id())
        )
    );
    assert_eq!(lines[1], problem(&unsigned[11], "unsigned (key_id=)"));
    assert_eq!(lines[9], problem(&unsigned[3], "unsigned (key_id=)"));
}

/// The one policy whose globs select the repository applies; none selecting it verifies
/// nothing, `none` verifies nothing, and several selecting it fail closed.
#[test]
fn the_policy_is_chosen_by_repository_url() {
    let good = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let (r, _dir) = renderer();
    r.set_gpg_keys(keys(&[&good]));
    let repo = GitRepo::new();
    let unsigned = repo.commit(&[("app/cm.yaml", CM)], "unsigned");
    let url = repo.url();
    let elsewhere = policies(serde_json::json!([policy(
        "https://elsewhere/*",
        "strict",
        &[good.key_id()]
    )]));
    assert!(integrity_with(&r, &repo, "main", elsewhere).is_empty());
    let excluded = policies(serde_json::json!([{
        "repos": [{"url": "*"}, {"url": format!("!{url}")}],
        "gpg": {"mode": "head", "keys": [good.key_id()]}
    }]));
    assert!(integrity_with(&r, &repo, "main", excluded).is_empty());
    let none = policies(serde_json::json!([policy(&url, "none", &[])]));
    assert!(integrity_with(&r, &repo, "main", none).is_empty());
    let selected = policies(serde_json::json!([
        policy("https://elsewhere/*", "none", &[]),
        policy(&url, "head", &[good.key_id()]),
    ]));
    assert_eq!(
        integrity_with(&r, &repo, "main", selected),
        [problem(&unsigned, "unsigned (key_id=)")]
    );
    let twice = policies(serde_json::json!([
        policy("*", "head", &[good.key_id()]),
        policy(&url, "none", &[]),
    ]));
    let mut req = request(vec![source(&url, "app", "main")]);
    req.source_integrity = Some(twice);
    let err = chain(&r.render(&req).unwrap_err());
    assert!(
        err.contains(&format!(
            "multiple (2) git source integrity policies found for repo URL: {url}"
        )),
        "{err}"
    );
}

/// `strict` on an annotated tag verifies the tag and then the history of its commit; `head`
/// the tag alone.
#[test]
fn strict_on_a_tag_verifies_the_tag_and_the_history() {
    let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let (r, _dir) = renderer();
    r.set_gpg_keys(keys(&[&key]));
    let repo = GitRepo::new();
    let unsigned = repo.commit(&[("app/cm.yaml", CM)], "unsigned");
    key.tag(&repo, "v1.0.0", "release");
    let head = policies(serde_json::json!([policy("*", "head", &[key.key_id()])]));
    let strict = policies(serde_json::json!([policy("*", "strict", &[key.key_id()])]));
    assert!(integrity_with(&r, &repo, "v1.0.0", head).is_empty());
    assert_eq!(
        integrity_with(&r, &repo, "v1.0.0", strict.clone()),
        [problem(&unsigned, "unsigned (key_id=)")]
    );
    repo.annotated_tag("v1.0.1", "unsigned release");
    assert_eq!(
        integrity_with(&r, &repo, "v1.0.1", strict),
        [format!(
            "GIT/GPG: Failed verifying revision v1.0.1 by 'Plumb Test \"<test@plumb.invalid>\"': unsigned (key_id=)\n{}",
            problem(&unsigned, "unsigned (key_id=)")
        )]
    );
}

/// A history longer than `strict` verifies (made with `git fast-import`: ten thousand and two
/// unsigned commits) fails closed with a message saying how to bound it, rather than running
/// `gpg` without end; a seal commit would bound it.
#[test]
fn strict_over_a_history_too_long_fails_closed() {
    let key = GpgKey::generate("Release Bot <bot@plumb.invalid>");
    let (r, _dir) = renderer();
    r.set_gpg_keys(keys(&[&key]));
    let repo = GitRepo::new();
    repo.commit(&[("app/cm.yaml", CM)], "first");
    let n = plumb_source::MAX_STRICT_COMMITS + 1;
    let mut stream = String::new();
    for i in 0..n {
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter Plumb Test <test@plumb.invalid> {} +0000\ndata 1\nc\n{}\n",
            1_700_000_000 + i,
            if i == 0 { "from refs/heads/main^0" } else { "" }
        ));
    }
    let mut child = std::process::Command::new("git")
        .args(["fast-import", "--quiet", "--force"])
        .current_dir(repo.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let strict = policies(serde_json::json!([policy("*", "strict", &[key.key_id()])]));
    let mut req = request(vec![source(&repo.url(), "app", "main")]);
    req.source_integrity = Some(strict);
    let err = chain(&r.render(&req).unwrap_err());
    assert!(
        err.contains("would verify more than 10000 commits; sign a seal commit"),
        "{err}"
    );
    // head is not bounded by history: the tip alone.
    let head = policies(serde_json::json!([policy("*", "head", &[key.key_id()])]));
    let found = integrity_with(&r, &repo, "main", head);
    assert_eq!(found.len(), 1);
    assert!(found[0].ends_with("unsigned (key_id=)"), "{found:?}");
}
