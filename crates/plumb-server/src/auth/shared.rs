//! What authentication keeps between requests: the failed-login throttle and the login
//! counter. The server's state holds it; it reads nothing of that state.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use super::throttle::{self, ThrottleConfig};

/// State of authentication shared by requests.
#[derive(Debug)]
pub(crate) struct Auth {
    pub(super) throttle: throttle::Throttle,
    pub(super) logins: LoginCounter,
    pub(crate) sso: super::sso::Sso,
}

impl Auth {
    /// `dex_server`: where the bundled Dex listens; `request_timeout` bounds SSO discovery.
    pub(crate) fn new(
        config: ThrottleConfig,
        dex_server: &str,
        request_timeout: std::time::Duration,
    ) -> Self {
        Self {
            throttle: throttle::Throttle::new(config),
            logins: LoginCounter::default(),
            sso: super::sso::Sso::new(dex_server, request_timeout),
        }
    }

    /// The login counter, for the server's `/metrics`.
    pub(crate) fn logins(&self) -> LoginCounter {
        self.logins.clone()
    }
}

/// The labels of `plumb_server_logins_total`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct LoginLabels {
    /// `success`, `failed` (a password was checked and was wrong, or the user is unknown) or
    /// `throttled` (refused before any check: too many failures or attempts in flight).
    result: String,
}

/// Login attempts by result: Plumb's own series (Argo has none), so operators can alert on
/// guessing and see that throttled attempts are never checked.
pub(crate) type LoginCounter = Family<LoginLabels, Counter>;

pub(super) fn count(counter: &LoginCounter, result: &str) {
    counter
        .get_or_create(&LoginLabels {
            result: result.into(),
        })
        .inc();
}
