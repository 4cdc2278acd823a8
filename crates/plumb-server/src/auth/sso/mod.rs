//! Single sign-on as Argo CD does it: `oidc.config` or `dex.config` in argocd-cm, the
//! authorization-code login at `/auth/login` and `/auth/callback`, the provider's ID token as
//! the `argocd.token` session, ID tokens accepted as bearer tokens (what `argocd login --sso`
//! stores), and the bundled Dex behind `/api/dex`.
//!
//! The provider is discovered when first needed and again whenever its settings change; a
//! provider that is down, slow or misconfigured makes SSO unavailable (with the reason, for the
//! login page) and never stops the server or local accounts. Discovery is bounded by a fraction
//! of the request timeout, and a failure is remembered for [`RETRY_AFTER`] so a broken provider
//! is not asked on every request.

pub(crate) mod cli;
pub(crate) mod config;
mod device;
pub(crate) mod dex;
mod http;
mod inputs;
pub(crate) mod provider;
mod refresh;
mod renew;
mod rs256;
pub(crate) mod sessions;
pub(crate) mod state_cookie;
pub(crate) mod userinfo;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use config::{Mode, SsoSettings};
use provider::Provider;
pub(crate) use provider::TOKEN_VERIFICATION_ERROR;

/// How long a failed discovery is remembered before the provider is asked again.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(10);
/// The longest discovery may take, whatever the request timeout.
const MAX_DISCOVERY: Duration = Duration::from_secs(15);
/// Logins whose state was used, remembered until their state cookie expires, so a replayed
/// callback is refused by this server rather than by the provider. Bounded.
const MAX_USED_STATES: usize = 10_000;

/// SSO as it stands for a request.
#[derive(Debug, Clone)]
pub(crate) enum Status {
    /// Neither `oidc.config` nor `dex.config` is set.
    Off,
    /// Configured but not usable now, and why (no secret in it).
    Unavailable(String),
    Ready(Arc<Provider>),
}

struct Entry {
    settings: SsoSettings,
    result: std::result::Result<Arc<Provider>, String>,
    at: Instant,
}

/// What SSO keeps between requests.
pub(crate) struct Sso {
    dex_server: String,
    discovery_timeout: Duration,
    cache: tokio::sync::Mutex<Option<Entry>>,
    used_states: Mutex<HashMap<String, i64>>,
    /// For `/api/dex`: redirects are relayed, not followed.
    proxy: Option<reqwest::Client>,
    /// Access tokens and userinfo groups (`enableUserInfoGroups`).
    pub(crate) userinfo: userinfo::UserInfo,
}

impl std::fmt::Debug for Sso {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sso")
            .field("dex_server", &self.dex_server)
            .finish_non_exhaustive()
    }
}

impl Sso {
    /// `dex_server`: where the bundled Dex listens (Argo's `--dex-server`); discovery gets at
    /// most a third of `request_timeout`.
    pub(crate) fn new(dex_server: &str, request_timeout: Duration) -> Self {
        let dex_server = if dex_server.contains("://") {
            dex_server.to_string()
        } else {
            format!("http://{dex_server}")
        };
        Self {
            dex_server,
            discovery_timeout: (request_timeout / 3).min(MAX_DISCOVERY),
            cache: tokio::sync::Mutex::new(None),
            used_states: Mutex::new(HashMap::new()),
            proxy: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(request_timeout)
                .build()
                .ok(),
            userinfo: userinfo::UserInfo::default(),
        }
    }

    /// The client `/api/dex` is proxied with.
    pub(crate) fn proxy_client(&self) -> Option<&reqwest::Client> {
        self.proxy.as_ref()
    }

    /// Where the bundled Dex listens.
    pub(crate) fn dex_server(&self) -> &str {
        &self.dex_server
    }

    /// The provider for `settings`: the one discovered for the same settings, or a new
    /// discovery (a failure is kept for [`RETRY_AFTER`]).
    pub(crate) async fn provider(&self, settings: SsoSettings) -> Status {
        let mut cache = self.cache.lock().await;
        if let Some(e) = cache.as_ref().filter(|e| e.settings == settings) {
            match &e.result {
                Ok(p) => return Status::Ready(p.clone()),
                Err(why) if e.at.elapsed() < RETRY_AFTER => {
                    return Status::Unavailable(why.clone());
                }
                Err(_) => {}
            }
        }
        let result = self.discover(settings.clone()).await.map(Arc::new);
        if let Err(why) = &result {
            tracing::warn!(issuer = %settings.config.issuer, "single sign-on is unavailable: {why}");
        }
        *cache = Some(Entry {
            settings,
            result: result.clone(),
            at: Instant::now(),
        });
        match result {
            Ok(p) => Status::Ready(p),
            Err(why) => Status::Unavailable(why),
        }
    }

    async fn discover(&self, settings: SsoSettings) -> std::result::Result<Provider, String> {
        let rewrite = matches!(settings.mode, Mode::Dex { .. })
            .then(|| (settings.config.issuer.clone(), self.dex_server.clone()));
        // Each request may take a little longer than the whole, so the whole's message wins.
        let http = http::Http::new(
            self.discovery_timeout + Duration::from_secs(1),
            &settings.config.root_ca,
            rewrite,
        )?;
        let issuer = settings.config.issuer.clone();
        match tokio::time::timeout(self.discovery_timeout, Provider::discover(settings, http)).await
        {
            Ok(r) => r,
            Err(_) => Err(format!(
                "the identity provider at {issuer} did not answer within {}s",
                self.discovery_timeout.as_secs()
            )),
        }
    }

    /// Records that a login's state was used; false when it was used before (a replay).
    pub(crate) fn use_state(&self, state: &str, expires: i64, now: i64) -> bool {
        let mut used = self.used_states.lock().unwrap_or_else(|p| p.into_inner());
        used.retain(|_, exp| *exp >= now);
        if used.len() >= MAX_USED_STATES {
            // Full of live logins: forget the ones closest to expiry.
            let mut oldest: Vec<(String, i64)> =
                used.iter().map(|(k, v)| (k.clone(), *v)).collect();
            oldest.sort_by_key(|(_, exp)| *exp);
            for (k, _) in oldest.into_iter().take(MAX_USED_STATES / 10) {
                used.remove(&k);
            }
        }
        used.insert(state.to_string(), expires).is_none()
    }
}
