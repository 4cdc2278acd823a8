//! A kube client whose credentials come from an exec credential plugin, renewed as client-go
//! renews them: every request takes the cached credential, and the plugin runs again once it
//! expires (or after a 401), one run at a time per cluster. A token goes into the request's
//! `Authorization` header; a client certificate pair is presented in the TLS handshake, so a
//! new pair means new connections: the inner client (and its connection pool) is rebuilt with
//! it, as client-go closes every connection when the pair changes.

use std::sync::Arc;

use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use futures::future::BoxFuture;
use kube::client::Body;

use super::config::ExecProviderConfig;
use super::exec::{self, ExecCredential, ExecError, ExecLimits};

/// What time it is, for credential expiry (the system clock, or a test's).
pub type Clock = Arc<dyn Fn() -> jiff::Timestamp + Send + Sync>;

/// One cluster's plugin and its cached credential.
pub struct ExecAuth {
    config: ExecProviderConfig,
    limits: ExecLimits,
    now: Clock,
    cached: tokio::sync::Mutex<Option<ExecCredential>>,
}

impl std::fmt::Debug for ExecAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecAuth")
            .field("command", &self.config.command)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl ExecAuth {
    /// The plugin of a cluster, not run yet.
    pub fn new(config: ExecProviderConfig, limits: ExecLimits) -> Self {
        Self {
            config,
            limits,
            now: Arc::new(jiff::Timestamp::now),
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The same, with expiry judged by `now` instead of the system clock.
    pub fn with_clock(mut self, now: Clock) -> Self {
        self.now = now;
        self
    }

    /// The credential: the cached one while it is fresh, else a new run of the plugin.
    pub async fn credential(&self) -> Result<ExecCredential, ExecError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| c.is_fresh((self.now)())) {
            return Ok(c.clone());
        }
        let fresh = exec::run(&self.config, self.limits).await?;
        *cached = Some(fresh.clone());
        Ok(fresh)
    }

    /// Forgets the cached credential (the server refused it).
    pub async fn invalidate(&self) {
        *self.cached.lock().await = None;
    }
}

/// Builds the inner client for a certificate pair from the plugin (`None`: no pair).
pub type BuildClient = Arc<
    dyn Fn(Option<ExecCredential>) -> BoxFuture<'static, Result<kube::Client, crate::Error>>
        + Send
        + Sync,
>;

/// The inner client and the pair it presents.
struct Inner {
    pair: Option<(String, String)>,
    client: kube::Client,
}

fn pair_of(c: &ExecCredential) -> Option<(String, String)> {
    c.client_certificate.clone().zip(c.client_key.clone())
}

/// The inner client for `cred`: the current one while its pair is the credential's, else a new
/// one built with the new pair (the old one's connections close when its last request ends).
async fn inner_for(
    inner: &tokio::sync::Mutex<Inner>,
    build: &BuildClient,
    cred: &ExecCredential,
) -> Result<kube::Client, kube::Error> {
    let mut current = inner.lock().await;
    let pair = pair_of(cred);
    if pair.is_some() && pair != current.pair {
        current.client = build(Some(cred.clone()))
            .await
            .map_err(|e| kube::Error::Service(Box::new(e)))?;
        current.pair = pair;
    }
    Ok(current.client.clone())
}

/// A client that authenticates every request with the plugin's credential: `first` is the
/// credential `client` was built with, `build` makes a client for a renewed certificate pair.
pub fn with_exec(
    client: kube::Client,
    first: &ExecCredential,
    build: BuildClient,
    auth: Arc<ExecAuth>,
) -> kube::Client {
    let namespace = client.default_namespace().to_string();
    let inner = Arc::new(tokio::sync::Mutex::new(Inner {
        pair: pair_of(first),
        client,
    }));
    let svc = tower::service_fn(move |mut req: Request<Body>| {
        let (inner, build, auth) = (inner.clone(), build.clone(), auth.clone());
        async move {
            let cred = auth
                .credential()
                .await
                .map_err(|e| kube::Error::Service(Box::new(e)))?;
            let client = inner_for(&inner, &build, &cred).await?;
            if let Some(token) = &cred.token {
                let mut value =
                    HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                        kube::Error::Service(
                            "exec plugin returned a token that is not a valid header value".into(),
                        )
                    })?;
                value.set_sensitive(true);
                req.headers_mut().insert(header::AUTHORIZATION, value);
            }
            let answer: Result<Response<Body>, kube::Error> = client.send(req).await;
            if matches!(&answer, Ok(r) if r.status() == StatusCode::UNAUTHORIZED) {
                auth.invalidate().await;
            }
            answer
        }
    });
    kube::Client::new(svc, namespace)
}
