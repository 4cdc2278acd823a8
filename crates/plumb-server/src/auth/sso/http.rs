//! The HTTP client the OIDC library talks to the identity provider with: reqwest (rustls) as the
//! rest of Plumb, every request bounded in time and answer size, no redirects followed, the
//! `rootCA` of `oidc.config` as the only trusted CA when given, and, for the bundled Dex,
//! requests for the issuer (`<url>/api/dex`) sent to the Dex server's address instead (Argo's
//! `DexRewriteURLRoundTripper`): the server need not reach its own public URL.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use openidconnect::{AsyncHttpClient, HttpRequest, HttpResponse};

/// The largest answer read from the identity provider (discovery documents and key sets are a
/// few KiB).
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Why a request to the identity provider failed (never holds a request body: those carry
/// authorization codes and client secrets).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HttpError(String);

/// An answer of [`Http::get_bearer`].
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: Vec<u8>,
}

/// A bounded client for one provider.
#[derive(Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    /// `(issuer prefix, replacement origin)`: Dex's issuer URL and where Dex really listens.
    rewrite: Option<(String, String)>,
}

impl Http {
    pub(crate) fn new(
        timeout: Duration,
        root_ca: &str,
        rewrite: Option<(String, String)>,
    ) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none());
        if !root_ca.trim().is_empty() {
            let certs = reqwest::Certificate::from_pem_bundle(root_ca.as_bytes())
                .map_err(|e| format!("oidc.config rootCA is not a PEM certificate: {e}"))?;
            if certs.is_empty() {
                return Err("oidc.config rootCA holds no PEM certificate".into());
            }
            builder = builder.tls_certs_only(certs);
        }
        let client = builder
            .build()
            .map_err(|e| format!("building the HTTP client for the identity provider: {e}"))?;
        Ok(Self { client, rewrite })
    }

    /// A client built elsewhere (the CLI's, with its `--insecure`), without a rewrite.
    pub(crate) fn from_client(client: reqwest::Client) -> Self {
        Self {
            client,
            rewrite: None,
        }
    }

    /// The URL a request for `url` really goes to.
    pub(crate) fn target(&self, url: &str) -> String {
        match &self.rewrite {
            Some((prefix, origin)) if url.starts_with(prefix.as_str()) => {
                let path = url::Url::parse(url)
                    .map(|u| {
                        let mut p = u.path().to_string();
                        if let Some(q) = u.query() {
                            p.push('?');
                            p.push_str(q);
                        }
                        p
                    })
                    .unwrap_or_default();
                format!("{}{path}", origin.trim_end_matches('/'))
            }
            _ => url.to_string(),
        }
    }

    /// `GET url` with `Authorization: Bearer token` (the userinfo endpoint), bounded as every
    /// request to the provider. Errors never hold the token.
    pub(crate) async fn get_bearer(&self, url: &str, token: &str) -> Result<Answer, HttpError> {
        let request = axum::http::Request::get(url)
            .header(axum::http::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(
                axum::http::header::ACCEPT,
                "application/json, application/jwt",
            )
            .body(Vec::new())
            .map_err(|e| HttpError(format!("{url}: {e}")))?;
        let response = self.send(request).await?;
        let content_type = response
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        Ok(Answer {
            status: response.status().as_u16(),
            content_type,
            body: response.into_body(),
        })
    }

    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let (parts, body) = request.into_parts();
        let shown = parts.uri.to_string();
        let target = self.target(&shown);
        let mut req = self.client.request(parts.method, &target).body(body);
        for (k, v) in &parts.headers {
            req = req.header(k, v);
        }
        let mut resp = req
            .send()
            .await
            .map_err(|e| HttpError(format!("{shown}: {}", describe(e))))?;
        let mut out = axum::http::Response::builder().status(resp.status());
        for (k, v) in resp.headers() {
            out = out.header(k, v);
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| HttpError(format!("{shown}: {}", describe(e))))?
        {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(HttpError(format!(
                    "{shown}: the answer is larger than {MAX_ANSWER_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        out.body(body)
            .map_err(|e| HttpError(format!("{shown}: {e}")))
    }
}

/// reqwest's error with its causes, without the URL it adds (the caller names the URL once).
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut parts = vec![e.to_string()];
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.join(": ")
}

impl<'c> AsyncHttpClient<'c> for Http {
    type Error = HttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(self.send(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_issuer_is_sent_to_dex() {
        let http = Http::new(
            Duration::from_secs(1),
            "",
            Some((
                "https://cd.example.com/api/dex".into(),
                "http://argocd-dex-server:5556".into(),
            )),
        )
        .expect("client");
        assert_eq!(
            http.target("https://cd.example.com/api/dex/keys?x=1"),
            "http://argocd-dex-server:5556/api/dex/keys?x=1"
        );
        assert_eq!(
            http.target("https://other.example.com/api/dex/keys"),
            "https://other.example.com/api/dex/keys"
        );
        let e = Http::new(Duration::from_secs(1), "not pem", None).err();
        assert!(e.is_some_and(|e| e.contains("rootCA")));
    }

    /// A TLS server on loopback with a fresh self-signed certificate, answering every
    /// connection with a small JSON document; returns its URL and certificate PEM.
    async fn tls_provider() -> (String, String) {
        let mode = crate::config::TlsMode::SelfSigned { names: vec![] };
        let (config, cert) = crate::tls::server_config(&mode)
            .expect("tls config")
            .expect("not plaintext");
        // The stub below speaks HTTP/1.1 only.
        let mut config = (*config).clone();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut buf = [0u8; 4096];
                    let _ = tls.read(&mut buf).await;
                    let body = "{\"issuer\":\"x\"}";
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tls.write_all(answer.as_bytes()).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        (format!("https://127.0.0.1:{}/", addr.port()), cert)
    }

    async fn fetch(http: &Http, url: &str) -> Result<HttpResponse, HttpError> {
        let request = axum::http::Request::builder()
            .uri(url)
            .body(Vec::new())
            .expect("request");
        http.call(request).await
    }

    /// GHSA-7943-82jg-wmw5: the provider's certificate is always verified: an untrusted one is
    /// refused with the system roots and with another `rootCA`, and accepted only when `rootCA`
    /// is the certificate that signed it.
    #[tokio::test]
    async fn the_provider_certificate_is_verified_against_system_roots_or_root_ca() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (url, cert) = tls_provider().await;
        let timeout = Duration::from_secs(5);

        let system = Http::new(timeout, "", None).expect("client");
        let e = fetch(&system, &url).await.expect_err("self-signed refused");
        assert!(e.to_string().contains("certificate"), "{e}");

        let (other, _) = crate::tls::self_signed(&[]).expect("other certificate");
        let wrong = Http::new(timeout, &other, None).expect("client");
        let e = fetch(&wrong, &url).await.expect_err("another CA refused");
        assert!(e.to_string().contains("certificate"), "{e}");

        let right = Http::new(timeout, &cert, None).expect("client");
        let answer = fetch(&right, &url).await.expect("its own CA trusted");
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.body().as_slice(), b"{\"issuer\":\"x\"}");
    }
}
