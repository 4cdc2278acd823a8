//! TLS: a self-signed certificate generated at start (rcgen), or the operator's PEM files, as a
//! rustls server configuration with the ring provider (the one Plumb's other TLS uses).

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::TlsMode;
use crate::error::{Error, Result};

/// A certificate and key (PEM) for `localhost`, 127.0.0.1 and `names`.
pub fn self_signed(names: &[String]) -> Result<(String, String)> {
    let mut sans = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    sans.extend(names.iter().cloned());
    let certified = rcgen::generate_simple_self_signed(sans)
        .map_err(|e| Error::Tls(format!("generating a self-signed certificate: {e}")))?;
    Ok((certified.cert.pem(), certified.signing_key.serialize_pem()))
}

/// The rustls configuration of `mode`, with the certificate's PEM (to show or trust); `None`
/// for plaintext.
pub(crate) fn server_config(mode: &TlsMode) -> Result<Option<(Arc<rustls::ServerConfig>, String)>> {
    let (cert_pem, key_pem, origin) = match mode {
        TlsMode::Plaintext => return Ok(None),
        TlsMode::SelfSigned { names } => {
            let (c, k) = self_signed(names)?;
            (c, k, "the generated certificate".to_string())
        }
        TlsMode::Files { cert, key } => {
            let c = std::fs::read_to_string(cert)
                .map_err(|e| Error::Tls(format!("reading certificate {}: {e}", cert.display())))?;
            let k = std::fs::read_to_string(key)
                .map_err(|e| Error::Tls(format!("reading private key {}: {e}", key.display())))?;
            (c, k, format!("{} and {}", cert.display(), key.display()))
        }
    };
    let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Tls(format!("{origin}: reading the certificate PEM: {e}")))?;
    if chain.is_empty() {
        return Err(Error::Tls(format!("{origin}: no certificate in the PEM")));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| Error::Tls(format!("{origin}: reading the private key PEM: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(format!("TLS versions: {e}")))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| {
            Error::Tls(format!(
                "{origin}: certificate and key do not make a TLS identity: {e}"
            ))
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some((Arc::new(config), cert_pem)))
}
