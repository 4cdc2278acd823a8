//! TLS certificates as Argo CD keeps them in `argocd-tls-certs-cm`: one key per server name, a
//! PEM bundle as the value. Argo CD `util/cert/cert.go` (`ParseTLSCertificatesFromStream`) and
//! `util/db/certificate.go` (subject and key algorithm shown by `cert list`).

use x509_parser::prelude::*;

/// Argo's bound on the lines of one certificate (`CertificateMaxLines`).
const MAX_LINES: usize = 128;
/// Argo's bound on the certificates of one stream.
const MAX_ENTRIES: usize = 256;

/// Argo's `ParseTLSCertificatesFromStream`: the PEM blocks between `-----BEGIN CERTIFICATE-----`
/// and `-----END CERTIFICATE-----` lines, each with its lines and a final newline.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut current: Option<(String, usize)> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line.starts_with("-----BEGIN CERTIFICATE-----") => {
                current = Some((format!("{line}\n"), 1));
            }
            None => {}
            Some((pem, lines)) => {
                pem.push_str(line);
                pem.push('\n');
                *lines += 1;
                if *lines > MAX_LINES {
                    return Err(
                        "maximum number of lines exceeded during certificate parsing".into(),
                    );
                }
                if line.starts_with("-----END CERTIFICATE-----") {
                    out.push(std::mem::take(pem));
                    current = None;
                    if out.len() > MAX_ENTRIES {
                        return Err("limit exceeded".into());
                    }
                }
            }
        }
    }
    Ok(out)
}

/// What `cert list` shows of one certificate: its subject (Go's `pkix.Name.String()` order)
/// and its key algorithm in lower case (`rsa`, `ecdsa`, `ed25519`).
pub fn describe(pem_text: &str) -> Result<(String, String), String> {
    let block = ::pem::parse(pem_text.as_bytes()).map_err(|e| format!("not PEM data: {e}"))?;
    if block.tag() != "CERTIFICATE" {
        return Err(format!("a {:?} PEM block, not a CERTIFICATE", block.tag()));
    }
    let (_, cert) = parse_x509_certificate(block.contents())
        .map_err(|e| format!("not an X.509 certificate: {e}"))?;
    let subject = subject_string(cert.subject());
    let algorithm = match cert
        .public_key()
        .algorithm
        .algorithm
        .to_id_string()
        .as_str()
    {
        "1.2.840.113549.1.1.1" | "1.2.840.113549.1.1.10" => "rsa",
        "1.2.840.10045.2.1" => "ecdsa",
        "1.3.101.112" => "ed25519",
        "1.2.840.10040.4.1" => "dsa",
        _ => "unknown",
    };
    Ok((subject, algorithm.into()))
}

/// Go's `pkix.Name.String()`: the relative names last to first, joined by commas.
fn subject_string(name: &X509Name<'_>) -> String {
    let short = |oid: &str| -> Option<&'static str> {
        Some(match oid {
            "2.5.4.3" => "CN",
            "2.5.4.6" => "C",
            "2.5.4.7" => "L",
            "2.5.4.8" => "ST",
            "2.5.4.9" => "STREET",
            "2.5.4.10" => "O",
            "2.5.4.11" => "OU",
            "2.5.4.17" => "POSTALCODE",
            "2.5.4.5" => "SERIALNUMBER",
            _ => return None,
        })
    };
    let rdns: Vec<String> = name
        .iter()
        .map(|rdn| {
            rdn.iter()
                .map(|attr| {
                    let oid = attr.attr_type().to_id_string();
                    let value = attr.as_str().unwrap_or("?");
                    format!("{}={value}", short(&oid).unwrap_or(&oid))
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    rdns.into_iter().rev().collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_describes() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["git.example.com".into()]).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "Example");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "git.example.com");
        let pem_text = params.self_signed(&key).unwrap().pem();
        let two = format!("junk\n{pem_text}{pem_text}");
        let certs = split(&two).unwrap();
        assert_eq!(certs.len(), 2);
        let (subject, alg) = describe(&certs[0]).unwrap();
        assert_eq!(subject, "CN=git.example.com,O=Example");
        assert_eq!(alg, "ecdsa");
        let fake = "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n";
        assert!(
            describe(fake)
                .unwrap_err()
                .contains("not an X.509 certificate")
        );
        let long = format!("-----BEGIN CERTIFICATE-----\n{}", "QUFB\n".repeat(200));
        assert!(
            split(&long)
                .unwrap_err()
                .contains("maximum number of lines")
        );
    }
}
