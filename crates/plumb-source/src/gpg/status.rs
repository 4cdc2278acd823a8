//! GnuPG's verdict on one signature, read from `--status-fd` output as Git reads it for `%G?`
//! and `%GK` (Argo's `GPGVerificationResult` texts).

/// The verdict, with Argo's wording (`util/git/client.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Good,
    Bad,
    ExpiredSignature,
    ExpiredKey,
    RevokedKey,
    MissingKey,
    Unsigned,
}

impl Verdict {
    /// Argo's `GPGVerificationResult` string.
    pub(crate) fn text(self) -> &'static str {
        match self {
            Verdict::Good => "signed",
            Verdict::Bad => "bad signature",
            Verdict::ExpiredSignature => "expired signature",
            Verdict::ExpiredKey => "signed with expired key",
            Verdict::RevokedKey => "signed with revoked key",
            Verdict::MissingKey => "signed with key not in keyring",
            Verdict::Unsigned => "unsigned",
        }
    }
}

/// What one verification said: the verdict, the signing key's ID (`%GK`) and the primary key
/// it belongs to (from `VALIDSIG`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    pub(crate) verdict: Verdict,
    pub(crate) key_id: String,
    pub(crate) primary_key_id: Option<String>,
}

/// Reads the status lines; `None` when none of the verdict lines is there.
pub(crate) fn parse(out: &str) -> Option<Status> {
    let mut found: Option<(Verdict, String)> = None;
    let mut primary = None;
    for line in out.lines() {
        let Some(rest) = line.strip_prefix("[GNUPG:] ") else {
            continue;
        };
        let mut f = rest.split(' ');
        let word = f.next().unwrap_or_default();
        let verdict = match word {
            "GOODSIG" => Verdict::Good,
            "BADSIG" => Verdict::Bad,
            "EXPSIG" => Verdict::ExpiredSignature,
            "EXPKEYSIG" => Verdict::ExpiredKey,
            "REVKEYSIG" => Verdict::RevokedKey,
            "ERRSIG" => Verdict::MissingKey,
            "VALIDSIG" => {
                // VALIDSIG <fpr> <date> <ts> <expire> <ver> <reserved> <pk> <hash> <class> <primary fpr>
                primary = rest
                    .split(' ')
                    .nth(10)
                    .filter(|p| p.len() >= 16)
                    .map(|p| p[p.len() - 16..].to_string());
                continue;
            }
            _ => continue,
        };
        let key = f.next().unwrap_or_default();
        if found.is_none() && key.bytes().all(|b| b.is_ascii_hexdigit()) && !key.is_empty() {
            found = Some((verdict, key.to_string()));
        }
    }
    found.map(|(verdict, key_id)| Status {
        verdict,
        key_id,
        primary_key_id: primary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_word_is_argos_verdict() {
        let good = "[GNUPG:] NEWSIG\n[GNUPG:] KEY_CONSIDERED ABCD 0\n\
            [GNUPG:] SIG_ID x 2026-01-01 1\n\
            [GNUPG:] GOODSIG AAAABBBBCCCCDDDD Plumb <p@example.com>\n\
            [GNUPG:] VALIDSIG 0000000000000000000000001111AAAABBBBCCCCDDDD 2026-01-01 1 0 4 0 22 10 00 00000000000000000000000011112222333344445555666677778888\n\
            [GNUPG:] TRUST_ULTIMATE 0 pgp\n";
        let s = parse(good).unwrap();
        assert_eq!(s.verdict, Verdict::Good);
        assert_eq!(s.key_id, "AAAABBBBCCCCDDDD");
        assert_eq!(s.primary_key_id.as_deref(), Some("5555666677778888"));
        for (word, verdict) in [
            ("BADSIG", Verdict::Bad),
            ("EXPSIG", Verdict::ExpiredSignature),
            ("EXPKEYSIG", Verdict::ExpiredKey),
            ("REVKEYSIG", Verdict::RevokedKey),
        ] {
            let s = parse(&format!("[GNUPG:] {word} AAAABBBBCCCCDDDD Someone\n")).unwrap();
            assert_eq!(s.verdict, verdict);
            assert_eq!(s.key_id, "AAAABBBBCCCCDDDD");
        }
        let missing = parse("[GNUPG:] ERRSIG 1234567812345678 22 10 00 1700000000 9 -\n[GNUPG:] NO_PUBKEY 1234567812345678\n").unwrap();
        assert_eq!(missing.verdict, Verdict::MissingKey);
        assert_eq!(missing.verdict.text(), "signed with key not in keyring");
        assert!(parse("gpg: no valid OpenPGP data found.\n").is_none());
        // A forged line on stderr-like text without the prefix is not a status.
        assert!(parse("GOODSIG AAAABBBBCCCCDDDD x\n").is_none());
    }
}
