//! Argo CD's GnuPG key IDs (`util/sourceintegrity/gpg.go`: `KeyID`, `IsShortKeyID`,
//! `IsLongKeyID`) and which signer an allowed list admits (`keyAllowed`).

/// Whether `k` is what Argo calls a short key ID: 16 hex digits (GnuPG's long key ID).
pub fn is_short_key_id(k: &str) -> bool {
    k.len() == 16 && k.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `k` is what Argo calls a long key ID: a 40-digit hex fingerprint.
pub fn is_long_key_id(k: &str) -> bool {
    k.len() == 40 && k.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The 16-digit key ID of `k` (a key ID as is, a fingerprint's last 16 digits), or Argo's
/// error text.
pub fn key_id(k: &str) -> Result<String, String> {
    if is_long_key_id(k) {
        Ok(k[24..].to_string())
    } else if is_short_key_id(k) {
        Ok(k.to_string())
    } else {
        Err(format!("'{k}' is not a valid GnuPG key ID"))
    }
}

/// Whether a signature by `signer` (the signing key's ID, as GnuPG reports it), whose primary
/// key is `primary`, is allowed by `allowed` (a project's `signatureKeys`). As Argo: entries
/// that are not key IDs never match, IDs compare exactly (GnuPG reports upper case), and a
/// signing subkey is allowed when its primary key is listed.
pub fn key_allowed(allowed: &[String], signer: &str, primary: Option<&str>) -> bool {
    let listed = |id: &str| {
        allowed
            .iter()
            .filter_map(|k| key_id(k).ok())
            .any(|k| k == id)
    };
    if listed(signer) {
        return true;
    }
    is_short_key_id(signer) && primary.is_some_and(|p| p != signer && listed(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn key_ids_are_argos() {
        assert_eq!(key_id("4AEE18F83AFDEB23").unwrap(), "4AEE18F83AFDEB23");
        assert_eq!(
            key_id("0123456789ABCDEF01234567").unwrap_err(),
            "'0123456789ABCDEF01234567' is not a valid GnuPG key ID"
        );
        assert_eq!(
            key_id("ABCDEF0123456789ABCDEF014AEE18F83AFDEB23").unwrap(),
            "4AEE18F83AFDEB23"
        );
        // Eight digits (GnuPG's short ID) are not enough for Argo.
        assert!(key_id("D56C4FCF").is_err());
        assert!(key_id("4AEE18F83AFDEB2G").is_err());
        assert!(key_id("").is_err());
        assert!(key_id("4AEE18F83AFDEB23\n").is_err());
    }

    #[test]
    fn a_listed_key_or_fingerprint_allows_its_signatures() {
        let signer = "4AEE18F83AFDEB23";
        assert!(key_allowed(&keys(&["4AEE18F83AFDEB23"]), signer, None));
        assert!(key_allowed(
            &keys(&["ABCDEF0123456789ABCDEF014AEE18F83AFDEB23"]),
            signer,
            None
        ));
        assert!(!key_allowed(&keys(&["1111111111111111"]), signer, None));
        assert!(!key_allowed(&[], signer, None));
    }

    #[test]
    fn ids_compare_exactly_as_argo_compares_them() {
        // GnuPG reports upper case; Argo compares the strings as written.
        assert!(!key_allowed(
            &keys(&["4aee18f83afdeb23"]),
            "4AEE18F83AFDEB23",
            None
        ));
        // Short (8-digit) and malformed entries never match.
        assert!(!key_allowed(
            &keys(&["3AFDEB23", "zz"]),
            "4AEE18F83AFDEB23",
            None
        ));
    }

    #[test]
    fn a_subkey_signature_counts_for_its_listed_primary_key() {
        let allowed = keys(&["1111222233334444"]);
        assert!(key_allowed(
            &allowed,
            "AAAABBBBCCCCDDDD",
            Some("1111222233334444")
        ));
        assert!(!key_allowed(
            &allowed,
            "AAAABBBBCCCCDDDD",
            Some("9999222233334444")
        ));
        // Only a 16-digit signer is resolved to its primary key, as in Argo.
        assert!(!key_allowed(&allowed, "", Some("1111222233334444")));
    }
}
