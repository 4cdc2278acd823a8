//! Checks of PEM values before they are stored: a private key must be one (Argo stores whatever
//! it is given and fails at the first fetch; Plumb refuses at once, naming the field). Errors
//! never quote the value.

/// What a PEM field must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PemRule {
    /// One private key block (`RSA PRIVATE KEY`, `EC PRIVATE KEY`, `PRIVATE KEY`,
    /// `OPENSSH PRIVATE KEY`, ...).
    PrivateKey,
    /// One or more X.509 certificates.
    Certificate,
}

/// `Ok` when `text` holds what `rule` asks for; else why not (without the value).
pub(crate) fn check(text: &str, rule: PemRule) -> Result<(), String> {
    let blocks = pem::parse_many(text.as_bytes()).map_err(|e| format!("not PEM data: {e}"))?;
    if blocks.is_empty() {
        return Err(match rule {
            PemRule::PrivateKey => {
                "not a PEM private key (no -----BEGIN ... PRIVATE KEY----- block)"
            }
            PemRule::Certificate => "not a PEM certificate (no -----BEGIN CERTIFICATE----- block)",
        }
        .into());
    }
    match rule {
        PemRule::PrivateKey => {
            let key = &blocks[0];
            if !key.tag().ends_with("PRIVATE KEY") {
                return Err(format!(
                    "not a private key: the PEM block is a {:?}",
                    key.tag()
                ));
            }
            if key.contents().len() < 16 {
                return Err("the private key block is empty".into());
            }
            Ok(())
        }
        PemRule::Certificate => {
            for (i, b) in blocks.iter().enumerate() {
                if b.tag() != "CERTIFICATE" {
                    return Err(format!(
                        "PEM block {} is a {:?}, not a CERTIFICATE",
                        i + 1,
                        b.tag()
                    ));
                }
                x509_parser::parse_x509_certificate(b.contents())
                    .map_err(|e| format!("PEM block {} is not an X.509 certificate: {e}", i + 1))?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB\n-----END OPENSSH PRIVATE KEY-----\n";

    #[test]
    fn keys_and_certificates() {
        assert!(check(KEY, PemRule::PrivateKey).is_ok());
        let err = check("secret-looking-text", PemRule::PrivateKey).unwrap_err();
        assert!(!err.contains("secret-looking"), "{err}");
        let pub_key = KEY.replace("OPENSSH PRIVATE KEY", "PUBLIC KEY");
        assert!(
            check(&pub_key, PemRule::PrivateKey)
                .unwrap_err()
                .contains("PUBLIC KEY")
        );
        let fake_cert =
            "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n";
        let err = check(fake_cert, PemRule::Certificate).unwrap_err();
        assert!(err.contains("not an X.509 certificate"), "{err}");
    }
}
