//! Git over HTTP(S) with a repository Secret's transport settings. gix's reqwest backend reads
//! none of Git's `http.ssl*` or `http.proxy` settings, so the client is configured here, as for
//! chart repositories ([`crate::http_client`]): CA certificates of `argocd-tls-certs-cm`,
//! `insecure`, the TLS client certificate, `proxy` / `noProxy`. Requests carry
//! `Authorization: Bearer` for `bearerToken`, and Basic credentials up front for
//! `forceHttpBasicAuth` (Argo CD passes both to Git as `http.extraHeader`).

use std::any::Any;
use std::sync::{Arc, Mutex};

use base64::Engine;
use gix_transport::client::blocking_io::http::Options as HttpOptions;
use gix_transport::client::blocking_io::http::reqwest::Options as ReqwestOptions;

use crate::credentials::{RepoCredentials, TlsCerts};

/// The transport options for `url` (HTTP(S) only; `None` for other schemes), built on the
/// ones `repo`'s configuration gives. `basic` is the user and password to force up front.
pub(crate) fn options(
    repo: &gix::Repository,
    url: &str,
    creds: Option<&RepoCredentials>,
    certs: &TlsCerts,
    basic: Option<(String, String)>,
) -> Result<Option<Box<dyn Any>>, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Ok(None);
    }
    let base = repo
        .transport_options(url, None)
        .map_err(|e| super::error_text::chain(&e))?;
    let mut opts = base
        .and_then(|b| b.downcast::<HttpOptions>().ok())
        .map(|b| *b)
        .unwrap_or_default();
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned));
    // Settings that cannot be used fail here, before any connection, naming the field.
    crate::http_client::configure(
        reqwest::blocking::Client::builder(),
        host.as_deref(),
        creds,
        certs,
    )?
    .build()
    .map_err(|e| {
        if creds.is_some_and(|c| c.tls_client_cert_key.is_some()) {
            // Most likely the client key: rustls reads it only now. Its text is never quoted.
            "the TLS client certificate of the repository Secret cannot be used \
             (tlsClientCertData / tlsClientCertKey: PEM certificate and private key)"
                .to_owned()
        } else {
            super::error_text::chain(&e)
        }
    })?;
    let (creds_c, certs_c) = (creds.cloned(), certs.clone());
    let configure_client = move |b| {
        crate::http_client::configure(b, host.as_deref(), creds_c.as_ref(), &certs_c)
            .map_err(|e| gix::Error::from_error(std::io::Error::other(e)))
    };
    let header = authorization(creds, basic)?;
    let configure_request = header.map(|value| {
        Box::new(move |req: &mut reqwest::blocking::Request| {
            req.headers_mut()
                .insert(reqwest::header::AUTHORIZATION, value.clone());
            Ok(())
        }) as Box<_>
    });
    opts.backend = Some(Arc::new(Mutex::new(ReqwestOptions {
        configure_client: Some(Box::new(configure_client)),
        configure_request,
    })));
    Ok(Some(Box::new(opts)))
}

/// The `Authorization` header sent with every request, if any: the bearer token, else Basic
/// credentials when they are forced.
fn authorization(
    creds: Option<&RepoCredentials>,
    basic: Option<(String, String)>,
) -> Result<Option<reqwest::header::HeaderValue>, String> {
    let bearer = creds.and_then(|c| c.bearer_token.as_ref());
    let field = if bearer.is_some() {
        "bearerToken"
    } else {
        "username / password"
    };
    let text = match (bearer, basic) {
        (Some(token), _) => format!("Bearer {token}"),
        (None, Some((user, password))) => format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
        ),
        (None, None) => return Ok(None),
    };
    let mut value = reqwest::header::HeaderValue::from_str(&text)
        .map_err(|_| format!("the repository Secret's {field} cannot be sent in an HTTP header"))?;
    value.set_sensitive(true);
    Ok(Some(value))
}
