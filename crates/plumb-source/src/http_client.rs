//! What every HTTP client of a repository shares (Git over HTTPS, chart repositories, OCI
//! registries, the GitHub App token endpoint): the CA certificates of `argocd-tls-certs-cm` for
//! the host on top of the system's roots, `insecure` skipping verification, the Secret's TLS
//! client certificate, and its `proxy` / `noProxy` (that repository only; without them the
//! environment's `HTTPS_PROXY` / `NO_PROXY` apply, as in Argo CD).

use reqwest::blocking::ClientBuilder;

use crate::credentials::{RepoCredentials, TlsCerts};

/// `b` with the TLS settings for `host` and `creds`.
pub(crate) fn tls(
    mut b: ClientBuilder,
    host: Option<&str>,
    creds: Option<&RepoCredentials>,
    certs: &TlsCerts,
) -> Result<ClientBuilder, String> {
    if let Some(host) = host
        && let Some(pem) = certs.for_host(host)
    {
        let roots = reqwest::Certificate::from_pem_bundle(pem.as_bytes()).map_err(|e| {
            format!("argocd-tls-certs-cm: the certificates for {host} cannot be read: {e}")
        })?;
        b = b.tls_certs_merge(roots);
    }
    if let Some(c) = creds {
        if c.insecure {
            b = b.tls_danger_accept_invalid_certs(true);
        }
        match (&c.tls_client_cert_data, &c.tls_client_cert_key) {
            (Some(cert), Some(key)) => {
                let pem = format!("{}\n{}\n", cert.trim_end(), key.trim_end());
                // The parser's message may quote the key's text: never passed on.
                let id = reqwest::Identity::from_pem(pem.as_bytes()).map_err(|_| {
                    "the TLS client certificate of the repository Secret cannot be read \
                     (tlsClientCertData / tlsClientCertKey: PEM certificate and private key)"
                        .to_owned()
                })?;
                b = b.identity(id);
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(
                    "the repository Secret has only one of tlsClientCertData and \
                            tlsClientCertKey"
                        .into(),
                );
            }
            (None, None) => {}
        }
    }
    Ok(b)
}

/// `b` with the Secret's `proxy` (and `noProxy`) when it has one.
pub(crate) fn proxy(
    b: ClientBuilder,
    creds: Option<&RepoCredentials>,
) -> Result<ClientBuilder, String> {
    let Some(c) = creds else { return Ok(b) };
    let Some(url) = &c.proxy else { return Ok(b) };
    let proxy = reqwest::Proxy::all(url.as_str())
        .map_err(|_| "proxy is not a URL (expected http://host:port)".to_owned())?
        .no_proxy(
            c.no_proxy
                .as_deref()
                .and_then(reqwest::NoProxy::from_string),
        );
    Ok(b.proxy(proxy))
}

/// [`tls`] then [`proxy`].
pub(crate) fn configure(
    b: ClientBuilder,
    host: Option<&str>,
    creds: Option<&RepoCredentials>,
    certs: &TlsCerts,
) -> Result<ClientBuilder, String> {
    proxy(tls(b, host, creds, certs)?, creds)
}
