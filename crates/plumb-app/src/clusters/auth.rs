//! A kube client whose bearer token comes from an exec credential plugin: every request takes
//! the cached credential (the plugin runs again once it expires, or after a 401), one run at a
//! time per cluster.

use std::sync::Arc;

use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use kube::client::Body;

use super::config::ExecProviderConfig;
use super::exec::{self, ExecCredential, ExecError, ExecLimits};

/// One cluster's plugin and its cached credential.
#[derive(Debug)]
pub struct ExecAuth {
    config: ExecProviderConfig,
    limits: ExecLimits,
    cached: tokio::sync::Mutex<Option<ExecCredential>>,
}

impl ExecAuth {
    /// The plugin of a cluster, not run yet.
    pub fn new(config: ExecProviderConfig, limits: ExecLimits) -> Self {
        Self {
            config,
            limits,
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The credential: the cached one while it is fresh, else a new run of the plugin.
    pub async fn credential(&self) -> Result<ExecCredential, ExecError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached
            .as_ref()
            .filter(|c| c.is_fresh(jiff::Timestamp::now()))
        {
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

/// `client` with `Authorization: Bearer <token>` from the plugin on every request. A plugin
/// that returns only a certificate pair adds no header (the pair was put into the client's TLS
/// configuration when it was built).
pub fn with_exec_token(client: kube::Client, auth: Arc<ExecAuth>) -> kube::Client {
    let namespace = client.default_namespace().to_string();
    let svc = tower::service_fn(move |mut req: Request<Body>| {
        let client = client.clone();
        let auth = auth.clone();
        async move {
            let cred = auth
                .credential()
                .await
                .map_err(|e| kube::Error::Service(Box::new(e)))?;
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
